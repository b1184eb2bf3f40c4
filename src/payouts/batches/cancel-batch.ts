import { type By, transactionFor } from '../../common/actor';
import { NotFound } from '../../common/errors';
import { lockPayout } from '../operations/payout-deps';
import { PayoutBatchEntity } from '../payout-batch.entity';
import { write } from '../payout-transitions';
import type { BatchDeps } from './batch-deps';
import { batchRowContext, type BatchSummary, returned, summaryOf } from './batch-view';
import { cancelledRowView } from './cancelled-row-view';
import { completeBatchIfDone } from './complete-batch';

export interface CancelAnswer extends BatchSummary {
  /** Rows this request cancelled (rows not begun, and payouts still waiting for approval). */
  cancelledNow: number;
}

/**
 * `POST /payouts/batches/{batchId}/cancel`: every row not yet sent is cancelled, never to be
 * sent; rows already sent go on. Two kinds of rows are not sent yet:
 *
 * - rows the runner has not begun: one UPDATE takes them `cancelled` under their row locks,
 *   conditionally on `state = 'pending' AND send_started_at IS NULL`. The runner marks a row
 *   begun with the same kind of UPDATE before its create, so of the two exactly one wins each
 *   row: a row cancelled is never sent, and a row begun is not called cancelled. Each is the
 *   event `payout.cancelled`, its data a PayoutView of the row as it was asked for
 *   (cancelledRowView: there is no payout row of it);
 * - payouts the batch created that wait for approval (nothing sent): each `cancelled` under the
 *   payout's lock by the state machine, as a rejection would be, so an approval racing it finds
 *   it final (and one that came first sent it: it goes on).
 *
 * The batch keeps the time of its (first) cancel; a row whose create was under way then is
 * looked at again when its answer is recorded (sendBatchRow). Repeating the cancel is harmless.
 */
export async function cancelBatch(d: BatchDeps, batchId: string, by: By): Promise<CancelAnswer> {
  const repo = d.dataSource.getRepository(PayoutBatchEntity);
  const found = await repo.findOneBy({ shopId: d.shopId, batchId });
  if (found === null) throw new NotFound('Payout batch', batchId);
  const rowsCancelled = await transactionFor(d.dataSource, by, async (m) => {
    await m.query(
      `UPDATE payout_batches SET cancelled_at = COALESCE(cancelled_at, clock_now()) WHERE id = $1`,
      [found.id],
    );
    const rows = returned<{
      row_no: number;
      shop_payment_id: string;
      request: Record<string, unknown>;
      recipient_sealed: string;
      updated_at: Date;
    }>(
      await m.query(
        `UPDATE payout_batch_rows
            SET state = 'cancelled', lease_until = NULL, updated_at = clock_now(),
                result = jsonb_build_object('payout', jsonb_build_object('shopPaymentId', shop_payment_id, 'status', 'cancelled'))
          WHERE batch_pk = $1 AND state = 'pending' AND send_started_at IS NULL
          RETURNING row_no, shop_payment_id, request, recipient_sealed, updated_at`,
        [found.id],
      ),
    );
    for (const r of rows)
      await d.audit.record(m, {
        entityType: 'payout',
        entityId: r.shop_payment_id,
        fromStatus: null,
        toStatus: 'cancelled',
        cause: 'api',
        details: { call: 'cancel', batchId, row: r.row_no },
        committedView: { ...cancelledRowView({
          request: { ...r.request, shopPaymentId: r.shop_payment_id },
          account: accountOf(d, found.id, r.row_no, r.recipient_sealed),
          createdAt: found.createdAt,
          cancelledAt: r.updated_at,
        }) },
      });
    return rows.length;
  });
  const awaiting = (await d.dataSource.query(
    `SELECT r.shop_payment_id FROM payout_batch_rows r
       JOIN payouts p ON p.shop_id = $2 AND p.shop_payment_id = r.shop_payment_id
      WHERE r.batch_pk = $1 AND r.state = 'sent' AND p.status = 'awaiting_approval'
      ORDER BY r.row_no`,
    [found.id, d.shopId],
  )) as Array<{ shop_payment_id: string }>;
  let payoutsCancelled = 0;
  for (const a of awaiting)
    if (await cancelAwaitingPayout(d, found, a.shop_payment_id, by)) payoutsCancelled += 1;
  // Nothing left to send: the batch completes now (its event), not at the runner's next tick.
  await completeBatchIfDone(d, found.id);
  const batch = await repo.findOneByOrFail({ id: found.id });
  return {
    ...(await summaryOf(d.dataSource.manager, batch)),
    cancelledNow: rowsCancelled + payoutsCancelled,
  };
}

/** A row's recipient account, opened for its cancelled view (shown masked); unreadable: nothing shown. */
function accountOf(d: BatchDeps, batchPk: string, rowNo: number, sealed: string): string {
  try {
    const r = JSON.parse(d.keys.unseal(sealed, batchRowContext(batchPk, rowNo))) as { account?: unknown };
    return typeof r.account === 'string' ? r.account : '';
  } catch {
    return '';
  }
}

/**
 * A payout of a cancelled batch that still waits for approval: `cancelled` (final, never sent)
 * under its lock, through the state machine. False when it is no longer waiting (approved and
 * sent, or rejected, first).
 */
export async function cancelAwaitingPayout(
  d: BatchDeps,
  batch: PayoutBatchEntity,
  shopPaymentId: string,
  by: By,
): Promise<boolean> {
  return transactionFor(d.dataSource, by, async (m) => {
    const p = await lockPayout(m, { shopId: d.shopId, shopPaymentId });
    if (p === null || p.status !== 'awaiting_approval') return false;
    await write(m, p, 'cancelled', 'api', { call: 'cancel', batchId: batch.batchId });
    return true;
  });
}
