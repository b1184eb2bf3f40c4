import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  ForeignKey,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  UpdateDateColumn,
} from 'typeorm';
import { InvoiceEntity } from '../invoices/invoice.entity';
import { Amount, amountTransformer } from '../common/money';
import type { DisputeStatus } from './dispute.state';

/** One line of a dispute's notes: who wrote it, when, and with which action. */
export interface DisputeNote {
  at: string;
  action: 'opened' | 'won' | 'lost' | 'accepted';
  keyId: string | null;
  note: string;
}

/**
 * A dispute (chargeback) of a paid invoice, recorded by an operator from the gateway's manager
 * (the gateway's interface has none). Its position in the books is `ledger_position_dispute`
 * (migration DisputesAndChargebacks): lost or accepted, its amount debited to `chargebacks` and
 * credited to `gateway_payment_shop`.
 */
@Entity('disputes')
@Check('ck_disputes_amount', `"amount" > 0`)
@Check('ck_disputes_status', `"status" IN ('open','won','lost','accepted')`)
@Check('ck_disputes_resolved', `("status" = 'open') = ("resolved_at" IS NULL)`)
@Unique('uq_disputes_public_id', ['publicId'])
@Index('ix_disputes_invoice', ['invoicePk'])
@Index('ix_disputes_created', ['shopId', 'createdAt', 'id'])
/** The desk: open disputes by their deadline. */
@Index('ix_disputes_open_respond_by', ['respondBy', 'createdAt'], { where: `"status" = 'open'` })
/** An operator's `Idempotency-Key`: the same key (of the same admin key) records once. */
@Index('uq_disputes_idempotency_key', ['shopId', 'keyId', 'idempotencyKey'], {
  unique: true,
  where: '"idempotency_key" IS NOT NULL',
})
/** The gateway's own reference of a chargeback names one dispute of the shop. */
@Index('uq_disputes_gateway_reference', ['shopId', 'gatewayReference'], {
  unique: true,
  where: '"gateway_reference" IS NOT NULL',
})
// A dispute belongs to its invoice's shop (invoice row and shop together).
@ForeignKey(() => InvoiceEntity, ['invoicePk', 'shopId'], ['id', 'shopId'], {
  name: 'fk_disputes_invoice_shop',
})
export class DisputeEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'PK_disputes_id' }) id: string;
  /** `dp_` and 24 random characters: the dispute's id in the API, events and the books. */
  @Column({ name: 'public_id', type: 'varchar', length: 40 }) publicId: string;
  @Column({ name: 'shop_id', type: 'int' }) shopId: number;
  @Column({ name: 'invoice_pk', type: 'uuid' }) invoicePk: string;
  @ManyToOne(() => InvoiceEntity, { nullable: false })
  @JoinColumn({ name: 'invoice_pk', foreignKeyConstraintName: 'fk_disputes_invoice' })
  invoice?: InvoiceEntity;
  @Column({ name: 'shop_order_id', type: 'varchar', length: 255 }) shopOrderId: string;
  @Column({ type: 'numeric', transformer: amountTransformer }) amount: Amount;
  @Column({ type: 'int' }) currency: number;
  @Column({ type: 'varchar', length: 500 }) reason: string;
  @Column({ type: 'varchar', length: 16 }) status: DisputeStatus;
  @Column({ name: 'reported_at', type: 'timestamptz' }) reportedAt: Date;
  @Column({ name: 'respond_by', type: 'timestamptz', nullable: true }) respondBy: Date | null;
  @Column({ name: 'gateway_reference', type: 'varchar', length: 255, nullable: true })
  gatewayReference: string | null;
  @Column({ type: 'jsonb', default: () => "'[]'" }) notes: DisputeNote[];
  /** The admin key that recorded it (first 12 hex digits of its SHA-256). */
  @Column({ name: 'key_id', type: 'varchar', length: 16, nullable: true }) keyId: string | null;
  @Column({ name: 'idempotency_key', type: 'varchar', length: 255, nullable: true })
  idempotencyKey: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_now()' })
  createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', default: () => 'clock_now()' })
  updatedAt: Date;
  @Column({ name: 'resolved_at', type: 'timestamptz', nullable: true }) resolvedAt: Date | null;
}
