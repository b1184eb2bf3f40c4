import type { DataSource } from 'typeorm';
import { NotFound } from '../../common/errors';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../../common/pagination';
import { PayoutBatchEntity, type PayoutBatchRowState } from '../payout-batch.entity';
import { type BatchRowView, type BatchSummary, summaryOf } from './batch-view';

/** A batch with a page of its rows (`GET /payouts/batches/{batchId}`). */
export async function getBatch(
  ds: DataSource,
  shopId: number,
  batchId: string,
  q: { limit?: number; cursor?: string },
): Promise<BatchSummary & { items: BatchRowView[]; nextCursor: string | null }> {
  const batch = await ds.getRepository(PayoutBatchEntity).findOneBy({ shopId, batchId });
  if (batch === null) throw new NotFound('Payout batch', batchId);
  return { ...(await summaryOf(ds.manager, batch)), ...(await batchRows(ds, batch.id, q)) };
}

/** A batch's rows in order, paged by row number. */
export async function batchRows(
  ds: DataSource,
  batchPk: string,
  q: { limit?: number; cursor?: string },
): Promise<{ items: BatchRowView[]; nextCursor: string | null }> {
  const limit = q.limit ?? DEFAULT_PAGE_SIZE;
  const after = Number(decodeCursor(q.cursor, 'bigint') ?? '0');
  const rows = (await ds.query(
    `SELECT row_no, shop_payment_id, state, result, updated_at FROM payout_batch_rows
      WHERE batch_pk = $1 AND row_no > $2 ORDER BY row_no LIMIT $3`,
    [batchPk, after, limit + 1],
  )) as Array<{
    row_no: number;
    shop_payment_id: string;
    state: PayoutBatchRowState;
    result: Record<string, unknown> | null;
    updated_at: Date;
  }>;
  const page = rows.slice(0, limit);
  return {
    items: page.map((r) => ({
      row: r.row_no,
      shopPaymentId: r.shop_payment_id,
      state: r.state,
      ...(r.result ?? {}),
      updatedAt: r.updated_at.toISOString(),
    })),
    nextCursor: rows.length > limit ? encodeCursor(String(page[page.length - 1].row_no)) : null,
  };
}

/** Batches newest first (the console). */
export async function listBatches(ds: DataSource, limit: number): Promise<BatchSummary[]> {
  const batches = await ds
    .getRepository(PayoutBatchEntity)
    .find({ order: { createdAt: 'DESC' }, take: limit });
  return Promise.all(batches.map((b) => summaryOf(ds.manager, b)));
}
