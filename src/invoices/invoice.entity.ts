import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  Unique,
  UpdateDateColumn,
} from 'typeorm';
import { GatewayObjectColumns } from '../common/gateway-object.columns';
import { Amount, amountTransformer } from '../common/money';
import type { InvoiceStatus } from './invoice.state';

export interface RedirectData {
  method: 'GET' | 'POST';
  url: string;
  params: Record<string, string>;
}

/** What a saved payment token may show: never the token itself. */
export interface PaymentTokenInfo {
  account?: string;
  expiresAt?: string;
  status?: string;
  cardInfo?: Record<string, unknown>;
}

@Entity('invoices')
@Check('ck_invoices_amount', `"amount" > 0`)
@Check('ck_invoices_refunded', `"refunded_amount" >= 0 AND "refunded_amount" <= "amount"`)
@Check('ck_invoices_refund_pending', `"refund_pending_amount" >= 0`)
@Check('ck_invoices_disputed', `"disputed_amount" >= 0`)
@Check(
  'ck_invoices_status',
  `"status" IN ('pending','created','awaiting_payer','ps_create_failed','succeeded','ps_notice_failed','rejected','held','unheld','unknown','expired')`,
)
@Unique('uq_invoices_shop_order', ['shopId', 'shopOrderId'])
@Index('ix_invoices_next_check', ['nextCheckAt'], { where: 'next_check_at IS NOT NULL' })
@Index('ix_invoices_payment_token_hash', ['shopId', 'paymentTokenHash'], {
  where: 'payment_token_hash IS NOT NULL',
})
// Declared here as the migrations made them, so `migration:generate` finds nothing to drop.
@Unique('uq_invoices_id_shop', ['id', 'shopId'])
@Index('ix_invoices_created', ['shopId', 'createdAt', 'id'])
/** The console's lists: every shop's rows, newest first (large tables). */
@Index('ix_invoices_created_all', ['createdAt', 'id'])
@Index('ix_invoices_attention', ['attentionAt'], { where: 'needs_attention' })
// No predicate names `status` (nor does any index): a status change then updates the row in place
// (HOT) instead of adding to every index; "not final" is `processed_at IS NULL`.
@Index('ix_invoices_unscheduled', ['createdAt'], {
  where: `next_check_at IS NULL AND processed_at IS NULL`,
})
@Index('ix_invoices_hold_expiry', ['holdExpiresAt'], {
  where: `hold_expires_at IS NOT NULL AND processed_at IS NULL`,
})
/** A payment link's invoices, oldest first. */
@Index('ix_invoices_payment_link', ['paymentLinkId', 'createdAt'], {
  where: 'payment_link_id IS NOT NULL',
})
/** A single-use link has one slot: at most one of its invoices that may still be paid. */
@Index('uq_invoices_payment_link_slot', ['paymentLinkSlot'], {
  unique: true,
  where: 'payment_link_slot IS NOT NULL',
})
// GIN for `metadata @> …` list filters.
@Index('ix_invoices_metadata', ['metadata'], { type: 'gin' })
export class InvoiceEntity extends GatewayObjectColumns {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ name: 'shop_id', type: 'int' }) shopId: number;
  @Column({ name: 'shop_order_id', type: 'varchar', length: 255 }) shopOrderId: string;
  /** SHA-256 of the create request as the shop sent it (card data excluded), for idempotency. */
  @Column({ name: 'request_fingerprint', type: 'char', length: 64 }) requestFingerprint: string;
  @Column({ type: 'varchar', length: 32 }) status: InvoiceStatus;
  @Column({ name: 'gateway_status', type: 'int', nullable: true }) gatewayStatus: number | null;
  /** The gateway's invoice id (`id` of invoice/create, `invoice_id` in later calls). */
  @Column({ name: 'invoice_id', type: 'bigint', nullable: true }) invoiceId: string | null;
  @Column({ name: 'payment_id', type: 'bigint', nullable: true }) paymentId: string | null;
  @Column({ type: 'numeric', transformer: amountTransformer }) amount: Amount;
  @Column({ type: 'int' }) currency: number;
  @Column({ type: 'varchar', length: 150 }) payway: string;
  @Column({ type: 'varchar', length: 255, nullable: true }) description: string | null;
  @Column({ name: 'two_step', type: 'boolean', default: false }) twoStep: boolean;
  @Column({ name: 'payer_price', type: 'numeric', nullable: true, transformer: amountTransformer })
  payerPrice: Amount | null;
  @Column({ name: 'shop_amount', type: 'numeric', nullable: true, transformer: amountTransformer })
  shopAmount: Amount | null;
  @Column({ name: 'client_price', type: 'numeric', nullable: true, transformer: amountTransformer })
  clientPrice: Amount | null;
  /** Sum of SUCCESS refunds, kept in the same transaction as each refund change. */
  @Column({
    name: 'refunded_amount',
    type: 'numeric',
    default: '0',
    transformer: amountTransformer,
  })
  refundedAmount: Amount;
  /**
   * Sum of WAITING refunds, recomputed with refunded_amount in one UPDATE on every refund change
   * (refund-transitions.ts syncRefundSums). No check ties it to the amount: an operator's
   * correction of a FAILED refund to SUCCESS may count more than was paid (see that function).
   */
  @Column({
    name: 'refund_pending_amount',
    type: 'numeric',
    default: '0',
    transformer: amountTransformer,
  })
  refundPendingAmount: Amount;
  /**
   * Sum of the invoice's disputes that are open, lost or accepted, recomputed in the transaction
   * of every dispute change (src/disputes). Not refundable: refundableAmount leaves it out.
   */
  @Column({
    name: 'disputed_amount',
    type: 'numeric',
    default: '0',
    transformer: amountTransformer,
  })
  disputedAmount: Amount;
  @Column({ name: 'ps_currency', type: 'int', nullable: true }) psCurrency: number | null;
  @Column({ type: 'jsonb', nullable: true }) redirect: RedirectData | null;
  /** Unguessable token carried by payUrl (`/pay/{shopOrderId}?t=`). */
  @Column({ name: 'pay_token', type: 'varchar', length: 64 }) payToken: string;
  @Column({ name: 'save_payment_token', type: 'boolean', default: false })
  savePaymentToken: boolean;
  /** Recurrent-payment token delivered by the gateway; shown to admins only. */
  /** Sealed under the key ring (revealPaymentToken opens it); never the raw token. */
  @Column({ name: 'payment_token', type: 'text', nullable: true }) paymentTokenSealed:
    string | null;
  /** Blind index (HMAC) of the raw token: equality look-ups without the token. */
  @Column({ name: 'payment_token_hash', type: 'char', length: 64, nullable: true })
  paymentTokenHash: string | null;
  @Column({ name: 'payment_token_info', type: 'jsonb', nullable: true })
  paymentTokenInfo: PaymentTokenInfo | null;
  /** True when this invoice was charged with a saved token (the token itself is not kept here). */
  @Column({ name: 'used_payment_token', type: 'boolean', default: false })
  usedPaymentToken: boolean;
  @Column({ type: 'jsonb', nullable: true }) extras: Record<string, string> | null;
  @Column({ name: 'client_ip', type: 'varchar', length: 64, nullable: true }) clientIp:
    string | null;
  @Column({ name: 'success_url', type: 'text', nullable: true }) successUrl: string | null;
  @Column({ name: 'failed_url', type: 'text', nullable: true }) failedUrl: string | null;
  @Column({ name: 'error_code', type: 'int', nullable: true }) errorCode: number | null;
  @Column({ name: 'gateway_message', type: 'text', nullable: true }) gatewayMessage: string | null;
  /** The create call's HTTP status and body, replayed for an identical repeat. */
  @Column({ name: 'response_code', type: 'int', nullable: true }) responseCode: number | null;
  @Column({ name: 'response_body', type: 'jsonb', nullable: true }) responseBody: unknown;
  /** Reconciliation: when to ask invoice/check next (null: nothing to settle). */
  @Column({ name: 'next_check_at', type: 'timestamptz', nullable: true }) nextCheckAt: Date | null;
  @Column({ name: 'check_attempts', type: 'int', default: 0 }) checkAttempts: number;
  @Column({ name: 'check_deadline', type: 'timestamptz', nullable: true })
  checkDeadline: Date | null;
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true }) leaseUntil: Date | null;
  /** The shop's own references (string keys and values), never sent to the gateway. */
  @Column({ type: 'jsonb', default: () => "'{}'" }) metadata: Record<string, string>;
  /** Conflicting repeats of the create's idempotency id (locked past IDEMPOTENCY_CONFLICT_LIMIT). */
  @Column({ name: 'idempotency_conflicts', type: 'int', default: 0 }) idempotencyConflicts: number;
  /** The create's non-secret fields, canonical (amount by value): what a conflict compares. */
  @Column({ name: 'request_facts', type: 'jsonb', nullable: true }) requestFacts: Record<
    string,
    unknown
  > | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_now()' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', default: () => 'clock_now()' }) updatedAt: Date;
  @Column({ name: 'processed_at', type: 'timestamptz', nullable: true }) processedAt: Date | null;
  /** The payment link (its row id) whose payer's form made this invoice; null for the shop's own. */
  @Column({ name: 'payment_link_id', type: 'uuid', nullable: true }) paymentLinkId: string | null;
  /**
   * A single-use link's one slot (its row id), held while this invoice may still be paid; freed
   * (null) when it ends unpaid. Unique: two attempts at once cannot both hold it.
   */
  @Column({ name: 'payment_link_slot', type: 'uuid', nullable: true }) paymentLinkSlot:
    string | null;
  /** When our invoice/unhold was sent: a 6 reported after it is the released hold (`unheld`). */
  @Column({ name: 'unhold_requested_at', type: 'timestamptz', nullable: true })
  unholdRequestedAt: Date | null;
  /** invoice/check's `expires_at` of a hold: past it the gateway releases the funds. */
  @Column({ name: 'hold_expires_at', type: 'timestamptz', nullable: true })
  holdExpiresAt: Date | null;
  /** When the shop was sent `invoice.hold_expiring` (once per hold). */
  @Column({ name: 'hold_expiry_warned_at', type: 'timestamptz', nullable: true })
  holdExpiryWarnedAt: Date | null;
  /** When the service acted on the hold by its policy (once per hold). */
  @Column({ name: 'hold_policy_at', type: 'timestamptz', nullable: true })
  holdPolicyAt: Date | null;
}
