import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export type AuditEntityType = 'invoice' | 'refund' | 'payout' | 'notification';
/** What caused a change. */
export type AuditCause = 'api' | 'gateway' | 'notification' | 'reconciliation' | 'admin';

@Entity('events')
@Index('ix_events_entity', ['entityType', 'entityId'])
export class AuditEventEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;
  @Column({ name: 'entity_type', type: 'varchar', length: 16 }) entityType: AuditEntityType;
  /** The shop's id of the object (shopOrderId, shopRefundId, shopPaymentId). */
  @Column({ name: 'entity_id', type: 'varchar', length: 255 }) entityId: string;
  @Column({ name: 'from_status', type: 'varchar', length: 32, nullable: true }) fromStatus:
    string | null;
  @Column({ name: 'to_status', type: 'varchar', length: 32 }) toStatus: string;
  @Column({ type: 'varchar', length: 32 }) cause: AuditCause;
  @Column({ type: 'jsonb', nullable: true }) details: Record<string, unknown> | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
