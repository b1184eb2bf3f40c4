import type { EntityManager } from 'typeorm';
import { registerSnapshotLoader } from '../../audit/shop-events';
import type { FieldError } from '../../common/errors';
import type { SealContext } from '../../common/key-ring';
import {
  PayoutBatchEntity,
  type PayoutBatchRowState,
  type PayoutBatchStatus,
} from '../payout-batch.entity';

export interface BatchCounts {
  total: number;
  pending: number;
  sent: number;
  refused: number;
  cancelled: number;
}

export interface BatchSummary {
  batchId: string;
  status: PayoutBatchStatus;
  counts: BatchCounts;
  /** The sent rows' payouts by their status now. */
  payoutStatuses: Record<string, number>;
  createdAt: string;
  completedAt: string | null;
  cancelledAt: string | null;
}

export interface BatchRowView {
  row: number;
  shopPaymentId: string;
  state: PayoutBatchRowState;
  /** The create's answer: the payout as it was created, or the problem that refused the row. */
  payout?: Record<string, unknown>;
  problem?: Record<string, unknown>;
  updatedAt: string;
}

export interface DryRunRow {
  row: number;
  shopPaymentId: string | null;
  ok: boolean;
  errors: FieldError[];
  /** Admin approvals the row would wait for (PAYOUT_APPROVAL_THRESHOLD…); 0: sent at once. */
  approvalsRequired?: 0 | 1 | 2;
}

/** The recipient of a row, sealed for that row alone. */
export function batchRowContext(batchPk: string, rowNo: number): SealContext {
  return { table: 'payout_batch_rows', column: 'recipient_sealed', rowId: `${batchPk}:${rowNo}` };
}

registerSnapshotLoader('payout_batch', async (m, ref) => {
  const b = await m.findOneOrFail(PayoutBatchEntity, {
    where: ref.rowId !== undefined ? { id: ref.rowId } : { batchId: ref.objectId },
  });
  return { ...(await summaryOf(m, b)) };
});

/** A batch as its GET shows it: counts by row state, its payouts by status. */
export async function summaryOf(m: EntityManager, b: PayoutBatchEntity): Promise<BatchSummary> {
  const states = (await m.query(
    `SELECT state, count(*)::int AS n FROM payout_batch_rows WHERE batch_pk = $1 GROUP BY state`,
    [b.id],
  )) as Array<{ state: PayoutBatchRowState; n: number }>;
  const counts: BatchCounts = { total: 0, pending: 0, sent: 0, refused: 0, cancelled: 0 };
  for (const s of states) {
    counts[s.state] = s.n;
    counts.total += s.n;
  }
  const statuses = (await m.query(
    `SELECT p.status, count(*)::int AS n FROM payout_batch_rows r
       JOIN payouts p ON p.shop_id = $2 AND p.shop_payment_id = r.shop_payment_id
      WHERE r.batch_pk = $1 AND r.state = 'sent' GROUP BY p.status ORDER BY p.status`,
    [b.id, b.shopId],
  )) as Array<{ status: string; n: number }>;
  return {
    batchId: b.batchId,
    status: b.status,
    counts,
    payoutStatuses: Object.fromEntries(statuses.map((s) => [s.status, s.n])),
    createdAt: b.createdAt.toISOString(),
    completedAt: b.completedAt?.toISOString() ?? null,
    cancelledAt: b.cancelledAt?.toISOString() ?? null,
  };
}

/** UPDATE … RETURNING through TypeORM's query(): [rows, count]. */
export function returned<T>(raw: unknown): T[] {
  const r = raw as [T[], number] | T[];
  return Array.isArray(r[0]) ? (r[0] as T[]) : (r as T[]);
}
