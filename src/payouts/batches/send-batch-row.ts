import type { By } from '../../common/actor';
import { crashPoint } from '../../common/crash-point';
import { DomainError, RequestInProgress } from '../../common/errors';
import { toProblem } from '../../common/problem.filter';
import { CreatePayoutDto } from '../dto/payout-requests.dto';
import { PayoutBatchEntity, type PayoutBatchRowState } from '../payout-batch.entity';
import { create } from '../operations/create-payout';
import type { BatchDeps } from './batch-deps';
import { batchRowContext, returned } from './batch-view';
import { cancelAwaitingPayout } from './cancel-batch';

/**
 * Sends one claimed row through the create path and records its answer after. The row is first
 * marked as begun (send_started_at) by one conditional UPDATE, under the row's lock: a cancel
 * that took the row first leaves nothing to send, and a cancel after it leaves the row alone
 * (its create may be on its way). A crash between the create and its record leaves the row
 * pending; when its lease runs out it is sent again and the create replays by shopPaymentId:
 * the gateway sees one create. The create acts for the key that submitted the batch. Returns
 * false when the answer is not known yet (the row is left for a later claim).
 */
export async function sendBatchRow(d: BatchDeps, batchPk: string, rowNo: number): Promise<boolean> {
  const rows = returned<{
    request: Record<string, unknown>;
    recipient_sealed: string;
    key_id: string | null;
    key_role: 'shop' | 'admin' | null;
  }>(
    await d.dataSource.query(
      `UPDATE payout_batch_rows r SET send_started_at = COALESCE(r.send_started_at, clock_now())
         FROM payout_batches b
        WHERE r.batch_pk = $1 AND r.row_no = $2 AND r.state = 'pending' AND b.id = r.batch_pk
        RETURNING r.request, r.recipient_sealed, b.key_id, b.key_role`,
      [batchPk, rowNo],
    ),
  );
  if (rows.length === 0) return true;
  const row = rows[0];
  const recipient = JSON.parse(
    d.keys.unseal(row.recipient_sealed, batchRowContext(batchPk, rowNo)),
  ) as Record<string, unknown>;
  const by: By =
    row.key_id === null
      ? undefined
      : { keyId: row.key_id, role: row.key_role ?? 'shop', scopes: ['payouts'] };
  let state: PayoutBatchRowState;
  let result: Record<string, unknown>;
  let shopPaymentId: string | null = null;
  try {
    const dto = (await d.pipe.transform(
      { ...row.request, ...recipient },
      { type: 'body', metatype: CreatePayoutDto },
    )) as CreatePayoutDto;
    const stored = await create(d.payout, dto, by);
    state = 'sent';
    result = { payout: stored.body };
    shopPaymentId = dto.shopPaymentId;
  } catch (e) {
    // Not answered yet (another copy is waiting for the gateway) or not the row's fault.
    if (!(e instanceof DomainError) || e.status >= 500 || e instanceof RequestInProgress)
      return false;
    state = 'refused';
    result = { problem: toProblem(e) };
  }
  crashPoint('payout_batch.row.after_create');
  await d.dataSource.query(
    `UPDATE payout_batch_rows SET state = $3, result = $4, lease_until = NULL, updated_at = clock_now()
      WHERE batch_pk = $1 AND row_no = $2 AND state = 'pending'`,
    [batchPk, rowNo, state, result],
  );
  // Cancelled while this row's create was on its way: a payout it left waiting for approval
  // (never sent) is cancelled with the rest of the batch.
  if (shopPaymentId !== null) {
    const batch = await d.dataSource.getRepository(PayoutBatchEntity).findOneBy({ id: batchPk });
    if (batch?.cancelledAt != null) await cancelAwaitingPayout(d, batch, shopPaymentId, by);
  }
  return true;
}
