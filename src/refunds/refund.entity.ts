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
import { GatewayObjectColumns } from '../common/gateway-object.columns';
import { Amount, amountTransformer } from '../common/money';

/** The gateway's refund statuses (spec: refund status table). */
export type RefundStatus = 'WAITING' | 'SUCCESS' | 'FAILED';
/**
 * Where the creation call stands: `pending` (row committed, no answer yet), `accepted` (the
 * gateway created it), `unknown` (time-out or non-fatal error: settle, never re-send),
 * `rejected` (basic checks failed: not created on the gateway).
 */
export type RefundSubmitState = 'pending' | 'accepted' | 'unknown' | 'rejected';

@Entity('refunds')
@Check('ck_refunds_amount', `"amount" > 0`)
@Check('ck_refunds_status', `"status" IN ('WAITING','SUCCESS','FAILED')`)
@Check('ck_refunds_submit_state', `"submit_state" IN ('pending','accepted','unknown','rejected')`)
@Unique('uq_refunds_shop_refund', ['shopId', 'shopRefundId'])
@Index('ix_refunds_invoice', ['invoicePk'])
@Index('ix_refunds_next_check', ['nextCheckAt'], { where: 'next_check_at IS NOT NULL' })
@Index('ix_refunds_created', ['shopId', 'createdAt', 'id'])
/** The console's lists: every shop's rows, newest first (large tables). */
@Index('ix_refunds_created_all', ['createdAt', 'id'])
@Index('ix_refunds_attention', ['attentionAt'], { where: 'needs_attention' })
@Index('ix_refunds_order', ['shopId', 'shopOrderId'])
// A refund belongs to its invoice's shop (invoice row and shop together).
@ForeignKey(() => InvoiceEntity, ['invoicePk', 'shopId'], ['id', 'shopId'], {
  name: 'fk_refunds_invoice_shop',
})
// GIN for `metadata @> …` list filters.
@Index('ix_refunds_metadata', ['metadata'], { type: 'gin' })
export class RefundEntity extends GatewayObjectColumns {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ name: 'shop_id', type: 'int' }) shopId: number;
  @Column({ name: 'shop_refund_id', type: 'varchar', length: 255 }) shopRefundId: string;
  @Column({ name: 'invoice_pk', type: 'uuid' }) invoicePk: string;
  @ManyToOne(() => InvoiceEntity, { nullable: false })
  @JoinColumn({ name: 'invoice_pk', foreignKeyConstraintName: 'fk_refunds_invoice' })
  invoice?: InvoiceEntity;
  @Column({ name: 'shop_order_id', type: 'varchar', length: 255 }) shopOrderId: string;
  @Column({ name: 'gateway_invoice_id', type: 'bigint', nullable: true }) gatewayInvoiceId:
    string | null;
  @Column({ name: 'request_fingerprint', type: 'char', length: 64 }) requestFingerprint: string;
  @Column({ type: 'numeric', transformer: amountTransformer }) amount: Amount;
  @Column({ type: 'int' }) currency: number;
  @Column({ type: 'varchar', length: 16 }) status: RefundStatus;
  @Column({ name: 'submit_state', type: 'varchar', length: 16 }) submitState: RefundSubmitState;
  @Column({ name: 'error_code', type: 'int', nullable: true }) errorCode: number | null;
  @Column({ name: 'gateway_message', type: 'text', nullable: true }) gatewayMessage: string | null;
  @Column({
    name: 'settlement_amount',
    type: 'numeric',
    nullable: true,
    transformer: amountTransformer,
  })
  settlementAmount: Amount | null;
  @Column({ name: 'settlement_currency', type: 'varchar', length: 8, nullable: true })
  settlementCurrency: string | null;
  @Column({ name: 'response_code', type: 'int', nullable: true }) responseCode: number | null;
  @Column({ name: 'response_body', type: 'jsonb', nullable: true }) responseBody: unknown;
  @Column({ name: 'next_check_at', type: 'timestamptz', nullable: true }) nextCheckAt: Date | null;
  @Column({ name: 'check_attempts', type: 'int', default: 0 }) checkAttempts: number;
  @Column({ name: 'check_deadline', type: 'timestamptz', nullable: true })
  checkDeadline: Date | null;
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true }) leaseUntil: Date | null;
  /** The shop's own references (string keys and values), never sent to the gateway. */
  @Column({ type: 'jsonb', default: () => "'{}'" }) metadata: Record<string, string>;
  /** Conflicting repeats of the create's idempotency id (locked past IDEMPOTENCY_CONFLICT_LIMIT). */
  @Column({ name: 'idempotency_conflicts', type: 'int', default: 0 }) idempotencyConflicts: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_now()' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', default: () => 'clock_now()' }) updatedAt: Date;
  @Column({ name: 'processed_at', type: 'timestamptz', nullable: true }) processedAt: Date | null;
}
