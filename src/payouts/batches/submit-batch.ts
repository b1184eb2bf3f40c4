import { randomUUID } from 'node:crypto';
import { type By, transactionFor } from '../../common/actor';
import { ValidationFailed, type FieldError } from '../../common/errors';
import {
  recordConflict,
  refuseIfLocked,
  secretFieldsSent,
  type ConflictTarget,
} from '../../common/idempotency';
import type { CreatePayoutDto } from '../dto/payout-requests.dto';
import { PAYOUT_SECRET_FIELDS } from '../account-seal';
import { PayoutBatchEntity } from '../payout-batch.entity';
import type { BatchDeps } from './batch-deps';
import {
  canonicalBatchRow,
  requestWithoutRecipient,
  type Submitted,
  validateRows,
  yieldTurn,
} from './batch-rows';
import { batchRowContext, type BatchSummary, summaryOf } from './batch-view';

/** Separates the batch fingerprint from any other HMAC made with the ring. */
const BATCH_INDEX = 'payout-batch';
/** Rows written per statement. */
const CHUNK = 1000;
/** Rows put in their canonical form between two yields. */
const CANONICAL_ROWS_PER_TURN = 500;

/**
 * A repeat's conflict answer names no field that tells one row from another: a batch's rows
 * carry recipients (card numbers), and an answer that depended on them would let a caller test
 * guesses of a masked card against the first request. Only the whole batch, every time, and the
 * secret row fields this repeat sent (in any row).
 */
function batchConflict(rows: readonly CreatePayoutDto[]): FieldError[] {
  return [
    { field: 'rows', message: 'differ from the first request of this batchId' },
    ...secretFieldsSent(rows, PAYOUT_SECRET_FIELDS, 'rows[].'),
  ];
}

/**
 * A real batch: every row valid, or a 400 naming rows and fields (`rows[3].amount`, rows
 * numbered from 1) and nothing stored. Stored in one transaction with the submitting key; the
 * same batchId with the same rows answers the batch as it is now (replayed). With other rows it
 * is an idempotency conflict, counted on the batch as a single create's on its payout: at
 * IDEMPOTENCY_CONFLICT_LIMIT the batchId is locked, and every repeat is refused before its rows
 * are compared (so no guess is answered any more, right or wrong).
 */
export async function submitBatch(
  d: BatchDeps,
  input: Submitted,
  by: By,
): Promise<{ code: number; replayed: boolean; body: BatchSummary }> {
  const { dtos, errors } = await validateRows(d.pipe, input.rows);
  const problems = errors.flatMap((list, i) =>
    list.map((e) => ({ field: `rows[${i + 1}].${e.field}`, message: e.message })),
  );
  if (problems.length > 0) throw new ValidationFailed(problems);
  const rows = dtos as CreatePayoutDto[];
  const batchId = input.batchId ?? randomUUID();
  // The canonical rows a slice at a time: 10,000 of them are tens of milliseconds of work.
  const canonical: string[] = [];
  for (const [i, r] of rows.entries()) {
    if (i > 0 && i % CANONICAL_ROWS_PER_TURN === 0) await yieldTurn();
    canonical.push(canonicalBatchRow(r));
  }
  const fingerprint = d.keys.blindIndex(JSON.stringify(canonical), BATCH_INDEX);
  const shopId = d.shopId;
  const created = await transactionFor(d.dataSource, by, async (m) => {
    const inserted = (await m.query(
      `INSERT INTO payout_batches (shop_id, batch_id, status, row_count, request_fingerprint, key_id, key_role)
       VALUES ($1, $2, 'pending', $3, $4, $5, $6) ON CONFLICT (shop_id, batch_id) DO NOTHING RETURNING id`,
      [shopId, batchId, rows.length, fingerprint, by?.keyId ?? null, by?.role ?? null],
    )) as Array<{ id: string }>;
    if (inserted.length === 0) return false;
    const pk = inserted[0].id;
    for (let start = 0; start < rows.length; start += CHUNK) {
      const chunk = rows.slice(start, start + CHUNK);
      const nos = chunk.map((_, k) => start + k + 1);
      await m.query(
        `INSERT INTO payout_batch_rows (batch_pk, row_no, shop_payment_id, request, recipient_sealed, state)
         SELECT $1, no, id, req, sealed, 'pending'
           FROM unnest($2::int[], $3::varchar[], $4::jsonb[], $5::text[]) AS t(no, id, req, sealed)`,
        [
          pk,
          nos,
          chunk.map((r) => r.shopPaymentId),
          chunk.map((r) => JSON.stringify(requestWithoutRecipient(r))),
          chunk.map((r, k) =>
            d.keys.seal(
              JSON.stringify({ account: r.account, accountDetails: r.accountDetails }),
              batchRowContext(pk, nos[k]),
            ),
          ),
        ],
      );
      await yieldTurn();
    }
    return true;
  });
  const batch = await d.dataSource
    .getRepository(PayoutBatchEntity)
    .findOneByOrFail({ shopId, batchId });
  if (!created) {
    const target: ConflictTarget = {
      object: 'payout_batch',
      id: batch.id,
      key: 'batchId',
      shopId: batchId,
      status: batch.status,
      conflicts: batch.idempotencyConflicts,
    };
    const limit = d.config.idempotencyConflictLimit;
    refuseIfLocked(target, limit);
    if (batch.requestFingerprint !== fingerprint)
      await recordConflict(d.dataSource, by, target, limit, batchConflict(rows), 'api');
  }
  return { code: 202, replayed: !created, body: await summaryOf(d.dataSource.manager, batch) };
}
