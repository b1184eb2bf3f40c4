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

export type PayoutStatus =
  | 'awaiting_approval'
  | 'pending'
  | 'processing'
  | 'succeeded'
  | 'failed'
  | 'rejected'
  | 'unknown'
  | 'needs_attention'
  | 'cancelled';
export type AmountType = 'ps_amount' | 'shop_amount';

@Entity('payouts')
@Check('ck_payouts_amount', `"amount" > 0`)
@Check(
  'ck_payouts_status',
  `"status" IN ('awaiting_approval','pending','processing','succeeded','failed','rejected','unknown','needs_attention','cancelled')`,
)
@Check('ck_payouts_amount_type', `"amount_type" IN ('ps_amount','shop_amount')`)
@Unique('uq_payouts_shop_payment', ['shopId', 'shopPaymentId'])
@Index('ix_payouts_next_poll', ['nextPollAt'], { where: 'next_poll_at IS NOT NULL' })
@Index('ix_payouts_created', ['shopId', 'createdAt', 'id'])
/** The console's lists: every shop's rows, newest first (large tables). */
@Index('ix_payouts_created_all', ['createdAt', 'id'])
@Index('ix_payouts_sent', ['shopId', 'shopCurrency', 'sentAt'], { where: 'sent_at IS NOT NULL' })
@Index('ix_payouts_attention', ['attentionAt'], { where: 'needs_attention' })
// GIN for `metadata @> …` list filters.
@Index('ix_payouts_metadata', ['metadata'], { type: 'gin' })
// The per-recipient daily cap: one account's payouts of a day.
@Index('ix_payouts_account_index', ['shopId', 'accountIndex', 'createdAt'], {
  where: 'account_index IS NOT NULL',
})
export class PayoutEntity extends GatewayObjectColumns {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ name: 'shop_id', type: 'int' }) shopId: number;
  @Column({ name: 'shop_payment_id', type: 'varchar', length: 255 }) shopPaymentId: string;
  @Column({ name: 'request_fingerprint', type: 'char', length: 64 }) requestFingerprint: string;
  /**
   * The ring key the fingerprint was made under (payout-fingerprint.ts); null for fingerprints
   * of the older canonical form, written before keys:rotate recomputed them.
   */
  @Column({ name: 'request_fingerprint_key', type: 'varchar', length: 64, nullable: true })
  requestFingerprintKey: string | null;
  @Column({ type: 'varchar', length: 32 }) status: PayoutStatus;
  @Column({ name: 'gateway_status', type: 'int', nullable: true }) gatewayStatus: number | null;
  @Column({ name: 'withdraw_id', type: 'bigint', nullable: true }) withdrawId: string | null;
  @Column({ type: 'numeric', transformer: amountTransformer }) amount: Amount;
  @Column({ name: 'amount_type', type: 'varchar', length: 16 }) amountType: AmountType;
  @Column({ name: 'shop_currency', type: 'int' }) shopCurrency: number;
  @Column({ name: 'ps_currency', type: 'int', nullable: true }) psCurrency: number | null;
  @Column({
    name: 'payee_receive',
    type: 'numeric',
    nullable: true,
    transformer: amountTransformer,
  })
  payeeReceive: Amount | null;
  @Column({
    name: 'shop_write_off',
    type: 'numeric',
    nullable: true,
    transformer: amountTransformer,
  })
  shopWriteOff: Amount | null;
  @Column({ type: 'varchar', length: 150 }) payway: string;
  @Column({ name: 'account_masked', type: 'varchar', length: 64 }) accountMasked: string;
  /**
   * The recipient account and details, encrypted (AES-256-GCM): needed to repeat a create after
   * the gateway says the payout is absent, never readable from a row dump.
   */
  @Column({ name: 'account_sealed', type: 'text' }) accountSealed: string;
  /**
   * Blind index of the recipient account (payout-controls.ts `recipientIndex`): the
   * per-recipient daily cap matches on it; null on rows written before the column existed.
   */
  @Column({ name: 'account_index', type: 'varchar', length: 64, nullable: true })
  accountIndex: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) description: string | null;
  @Column({ name: 'error_code', type: 'int', nullable: true }) errorCode: number | null;
  @Column({ name: 'gateway_message', type: 'text', nullable: true }) gatewayMessage: string | null;
  @Column({ name: 'create_attempts', type: 'int', default: 0 }) createAttempts: number;
  @Column({ name: 'next_poll_at', type: 'timestamptz', nullable: true }) nextPollAt: Date | null;
  @Column({ name: 'poll_deadline', type: 'timestamptz' }) pollDeadline: Date;
  @Column({ name: 'poll_count', type: 'int', default: 0 }) pollCount: number;
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true }) leaseUntil: Date | null;
  @Column({ name: 'lease_owner', type: 'varchar', length: 64, nullable: true }) leaseOwner:
    string | null;
  @Column({ name: 'response_code', type: 'int', nullable: true }) responseCode: number | null;
  @Column({ name: 'response_body', type: 'jsonb', nullable: true }) responseBody: unknown;
  /** When withdraw/create was last sent: never again within two gateway time-outs. */
  @Column({ name: 'last_create_at', type: 'timestamptz', nullable: true })
  lastCreateAt: Date | null;
  /** Why the last poll failed (recorded in its own transaction). */
  @Column({ name: 'last_error', type: 'text', nullable: true }) lastError: string | null;
  /** The shop's own references (string keys and values), never sent to the gateway. */
  @Column({ type: 'jsonb', default: () => "'{}'" }) metadata: Record<string, string>;
  /** Conflicting repeats of the create's idempotency id (locked past IDEMPOTENCY_CONFLICT_LIMIT). */
  @Column({ name: 'idempotency_conflicts', type: 'int', default: 0 }) idempotencyConflicts: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_now()' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', default: () => 'clock_now()' }) updatedAt: Date;
  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true }) finishedAt: Date | null;
  /**
   * Distinct admin approvals this payout needed when it was created (PAYOUT_APPROVAL_THRESHOLD,
   * PAYOUT_DUAL_APPROVAL_THRESHOLD): 0 for a payout sent at once. Fixed at creation, so a
   * changed threshold never changes what a waiting payout needs.
   */
  @Column({ name: 'approvals_required', type: 'smallint', default: 0 }) approvalsRequired: number;
  /**
   * When its first withdraw/create went out; null while it waits for approval. The day it counts
   * on against the caps and the start of its watch (payout.rules.ts).
   */
  @Column({ name: 'sent_at', type: 'timestamptz', nullable: true }) sentAt: Date | null;
  /** The key that created it (or submitted its batch): it never approves it (payout.rules.ts). */
  @Column({ name: 'created_by_key_id', type: 'varchar', length: 64, nullable: true })
  createdByKeyId: string | null;
}
