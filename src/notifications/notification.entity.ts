import { sqlList } from '../common/sql';
import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * applied: changed state; duplicate-free no-op are `stale` (recorded, would move a final state
 * back or repeat it); `rejected`: verified but does not match the stored object; `ignored`:
 * a kind we do not handle (stored, tolerated); `pending`: stored, not yet applied.
 */
export type NotificationStatus = 'pending' | 'applied' | 'stale' | 'rejected' | 'ignored';
/** Verified notifications that are done with (applied, or a repeat): the ones retention may prune. */
export const SETTLED_NOTIFICATION_STATUSES: readonly NotificationStatus[] = ['applied', 'stale'];

/**
 * What a verified notification did to its object's status, whatever else it changed (a payer
 * price, a token): `applied` (the status moved), `unchanged` (a repeat, or a step the object has
 * passed), `not_applied` (the gateway contradicts the object, the record does not match it, or
 * the word is unknown): evidence retention keeps. Null: no status judged (unverified, ignored).
 */
export type NotificationStatusEffect = 'applied' | 'unchanged' | 'not_applied';

@Entity('notifications')
@Index('ix_notifications_order', ['shopOrderId'])
@Index('ix_notifications_unverified', ['receivedAt'], { where: 'verified = false' })
@Index('ix_notifications_old_key', ['id'], { where: 'key_version < 3' })
@Index('ix_notifications_settled', ['lastReceivedAt'], {
  where: `verified AND status IN (${sqlList(SETTLED_NOTIFICATION_STATUSES)})`,
})
export class NotificationEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  /** The `type` query parameter: invoice, refund, or whatever new kind the gateway sends. */
  @Column({ type: 'varchar', length: 32 }) type: string;
  /** SHA-256 over the text the signature covers: a redelivery has the same key (notification-key.ts). */
  @Index('uq_notifications_content_key', { unique: true })
  @Column({ name: 'content_key', type: 'char', length: 64 })
  contentKey: string;
  /** The recipe `content_key` follows; older ones are re-keyed at start-up (notification-rekey.ts). */
  @Column({ name: 'key_version', type: 'smallint', default: 1 }) keyVersion: number;
  /** Every field as transmitted (text), `sign` removed. */
  @Column({ type: 'jsonb' }) payload: Record<string, string>;
  @Column({ name: 'content_type', type: 'varchar', length: 100 }) contentType: string;
  @Column({ name: 'source_ip', type: 'varchar', length: 64, nullable: true }) sourceIp:
    string | null;
  @Column({ type: 'boolean' }) verified: boolean;
  @Column({ type: 'varchar', length: 16 }) status: NotificationStatus;
  /** What applying it changed, or why it changed nothing. */
  @Column({ type: 'text', nullable: true }) outcome: string | null;
  /** What it did to its object's status (NotificationStatusEffect); null when none was judged. */
  @Column({ name: 'status_effect', type: 'varchar', length: 16, nullable: true })
  statusEffect: NotificationStatusEffect | null;
  /** The gateway shop the notification names (payment or agent shop); null when it names none. */
  @Column({ name: 'shop_id', type: 'int', nullable: true }) shopId: number | null;
  @Column({ name: 'shop_order_id', type: 'varchar', length: 255, nullable: true }) shopOrderId:
    string | null;
  @Column({ name: 'shop_refund_id', type: 'varchar', length: 255, nullable: true }) shopRefundId:
    string | null;
  @Column({ name: 'delivery_count', type: 'int', default: 1 }) deliveryCount: number;
  @Column({ name: 'received_at', type: 'timestamptz', default: () => 'clock_now()' }) receivedAt: Date;
  @Column({ name: 'last_received_at', type: 'timestamptz', default: () => 'clock_now()' })
  lastReceivedAt: Date;
  @Column({ name: 'applied_at', type: 'timestamptz', nullable: true }) appliedAt: Date | null;
}
