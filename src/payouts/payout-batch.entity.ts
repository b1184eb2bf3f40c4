import { Check, Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn, Unique } from 'typeorm';

export type PayoutBatchStatus = 'pending' | 'processing' | 'completed';
/**
 * A row is `pending` until its create has an answer: `sent` (the payout) or `refused` (a
 * problem); or `cancelled` with its batch before its send began (never sent).
 */
export type PayoutBatchRowState = 'pending' | 'sent' | 'refused' | 'cancelled';

/** A batch of payout creates (`POST /payouts/batches`), per agent shop, keyed by the shop's `batchId`. */
@Entity('payout_batches')
@Unique('uq_payout_batches_shop_batch', ['shopId', 'batchId'])
@Check('ck_payout_batches_status', `"status" IN ('pending','processing','completed')`)
@Index('ix_payout_batches_created', ['createdAt', 'id'])
export class PayoutBatchEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ name: 'shop_id', type: 'int' }) shopId: number;
  @Column({ name: 'batch_id', type: 'varchar', length: 100 }) batchId: string;
  @Column({ type: 'varchar', length: 16 }) status: PayoutBatchStatus;
  @Column({ name: 'row_count', type: 'int' }) rowCount: number;
  /** Keyed hash (blind index) of the canonical rows: a repeat replays, other rows are 409. */
  @Column({ name: 'request_fingerprint', type: 'char', length: 64 }) requestFingerprint: string;
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'clock_now()' }) createdAt: Date;
  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true }) completedAt: Date | null;
  /** The key that submitted the batch: its rows are created under it (four eyes hold for them). */
  @Column({ name: 'key_id', type: 'varchar', length: 64, nullable: true }) keyId: string | null;
  @Column({ name: 'key_role', type: 'varchar', length: 16, nullable: true }) keyRole: 'shop' | 'admin' | null;
  @Column({ name: 'cancelled_at', type: 'timestamptz', nullable: true }) cancelledAt: Date | null;
  /** Repeats of the batchId with other rows (locked past IDEMPOTENCY_CONFLICT_LIMIT). */
  @Column({ name: 'idempotency_conflicts', type: 'int', default: 0 }) idempotencyConflicts: number;
}

/**
 * One row of a batch: the create body without its recipient (`request`), the recipient sealed
 * for this row alone, and the create's answer once there is one. `lease_until` is the claim of
 * the instance sending it; a row whose lease ran out is sent again (the create replays by
 * shopPaymentId).
 */
@Entity('payout_batch_rows')
@Check('ck_payout_batch_rows_state', `"state" IN ('pending','sent','refused','cancelled')`)
@Index('ix_payout_batch_rows_pending', ['batchPk', 'rowNo'], { where: `state = 'pending'` })
export class PayoutBatchRowEntity {
  @PrimaryColumn({ name: 'batch_pk', type: 'uuid' }) batchPk: string;
  @PrimaryColumn({ name: 'row_no', type: 'int' }) rowNo: number;
  @Column({ name: 'shop_payment_id', type: 'varchar', length: 255 }) shopPaymentId: string;
  @Column({ type: 'jsonb' }) request: Record<string, unknown>;
  @Column({ name: 'recipient_sealed', type: 'text' }) recipientSealed: string;
  @Column({ type: 'varchar', length: 16 }) state: PayoutBatchRowState;
  @Column({ type: 'jsonb', nullable: true }) result: Record<string, unknown> | null;
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true }) leaseUntil: Date | null;
  /** Set (once) when the runner hands the row to the create path: a cancel no longer takes it. */
  @Column({ name: 'send_started_at', type: 'timestamptz', nullable: true }) sendStartedAt: Date | null;
  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'clock_now()' }) updatedAt: Date;
}
