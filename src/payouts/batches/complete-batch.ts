import { PayoutBatchEntity } from '../payout-batch.entity';
import type { BatchDeps } from './batch-deps';
import { returned, summaryOf } from './batch-view';

/**
 * Completes a batch whose every row has an answer, with its event, in one transaction. Two
 * instances finishing the last rows at once: the batch row's lock lets one of them through.
 */
export async function completeBatchIfDone(d: BatchDeps, batchPk: string): Promise<boolean> {
  return d.dataSource.transaction(async (m) => {
    const done = returned<{ id: string }>(
      await m.query(
        `UPDATE payout_batches SET status = 'completed', completed_at = clock_now()
          WHERE id = $1 AND status <> 'completed'
            AND NOT EXISTS (SELECT 1 FROM payout_batch_rows WHERE batch_pk = $1 AND state = 'pending')
          RETURNING id`,
        [batchPk],
      ),
    );
    if (done.length === 0) return false;
    const batch = await m.findOneByOrFail(PayoutBatchEntity, { id: batchPk });
    const view = await summaryOf(m, batch);
    await d.audit.record(m, {
      entityType: 'payout_batch',
      entityId: batch.batchId,
      fromStatus: 'processing',
      toStatus: 'completed',
      cause: 'api',
      rowId: batch.id,
      committedView: { ...view },
    });
    return true;
  });
}
