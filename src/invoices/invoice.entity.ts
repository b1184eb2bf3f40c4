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
@Check(
  'ck_invoices_status',
  `"status" IN ('pending','created','awaiting_payer','ps_create_failed','succeeded','ps_notice_failed','rejected','held','unheld','unknown')`,
)
@Unique('uq_invoices_shop_order', ['shopId', 'shopOrderId'])
@Index('ix_invoices_next_check', ['nextCheckAt'], { where: 'next_check_at IS NOT NULL' })
@Index('ix_invoices_payment_token_hash', ['shopId', 'paymentTokenHash'], {
  where: 'payment_token_hash IS NOT NULL',
})
export class InvoiceEntity {
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
  @Column({ name: 'needs_attention', type: 'boolean', default: false }) needsAttention: boolean;
  // --- #13/#14: the gateway call in flight (atomic phases), attention, absence over time
  /** Instance that committed a claim and is calling the gateway now (null: no call in flight). */
  @Column({ name: 'call_owner', type: 'varchar', length: 64, nullable: true }) callOwner:
    string | null;
  @Column({ name: 'call_started_at', type: 'timestamptz', nullable: true })
  callStartedAt: Date | null;
  /** Past this, the call's owner is presumed dead: settle by a status call, never re-send. */
  @Column({ name: 'call_lease_until', type: 'timestamptz', nullable: true })
  callLeaseUntil: Date | null;
  @Column({ name: 'attention_reason', type: 'text', nullable: true }) attentionReason:
    string | null;
  @Column({ name: 'attention_at', type: 'timestamptz', nullable: true }) attentionAt: Date | null;
  /** Status checks in a row that did not find the object, and when the first of them was. */
  @Column({ name: 'absent_count', type: 'int', default: 0 }) absentCount: number;
  @Column({ name: 'first_absent_at', type: 'timestamptz', nullable: true })
  firstAbsentAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
  @Column({ name: 'processed_at', type: 'timestamptz', nullable: true }) processedAt: Date | null;
}
