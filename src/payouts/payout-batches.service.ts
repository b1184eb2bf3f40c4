import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { registerSnapshotLoader } from '../audit/shop-events';
import { crashPoint } from '../common/crash-point';
import {
  DomainError,
  type FieldError,
  NotFound,
  RequestInProgress,
  ValidationFailed,
} from '../common/errors';
import { KeyRing, type SealContext } from '../common/key-ring';
import { decodeCursor, encodeCursor, DEFAULT_PAGE_SIZE } from '../common/pagination';
import { toProblem } from '../common/problem.filter';
import { createValidationPipe } from '../common/validation';
import { GatewayService } from '../gateway';
import { PaywayConfigService } from '../payway-config/payway-config.service';
import { boundsCheckFor } from '../payway-config/currency-conversion';
import type { OutputPayway } from '../gateway/gateway.types';
import { CreatePayoutDto } from './dto/payout-requests.dto';
import { canonicalPayoutRequest } from './payout-fingerprint';
import { csvToRows, CsvProblem, MAX_BATCH_ROWS } from './payout-batch-csv';
import {
  PayoutBatchEntity,
  type PayoutBatchRowState,
  type PayoutBatchStatus,
} from './payout-batch.entity';
import { accountProblems, amountProblems } from './payout-validation';
import { PAYOUT_ROW_PREVIEW, type PayoutRowPreview } from './payout-row-preview';
import { PayoutsService } from './payouts.service';
import { PayoutControls } from './payout-controls';
import { approvalsNeeded } from './payout-approval';
import { Amount } from '../common/money';
import { APP_CONFIG, type AppConfig } from '../config/config';

/** A batch's id as the shop gives it (or a generated UUID). */
const BATCH_ID = /^[A-Za-z0-9._:-]{1,100}$/;
/** Separates the batch fingerprint from any other HMAC made with the ring. */
const BATCH_INDEX = 'payout-batch';

export interface BatchCounts {
  total: number;
  pending: number;
  sent: number;
  refused: number;
}

export interface BatchSummary {
  batchId: string;
  status: PayoutBatchStatus;
  counts: BatchCounts;
  /** The sent rows' payouts by their status now. */
  payoutStatuses: Record<string, number>;
  createdAt: string;
  completedAt: string | null;
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

interface Submitted {
  batchId: string | undefined;
  rows: unknown[];
}

registerSnapshotLoader('payout_batch', async (m, ref) => {
  const b = await m.findOneOrFail(PayoutBatchEntity, {
    where: ref.rowId !== undefined ? { id: ref.rowId } : { batchId: ref.objectId },
  });
  return { ...(await summaryOf(m, b)) };
});

async function summaryOf(m: EntityManager, b: PayoutBatchEntity): Promise<BatchSummary> {
  const states = (await m.query(
    `SELECT state, count(*)::int AS n FROM payout_batch_rows WHERE batch_pk = $1 GROUP BY state`,
    [b.id],
  )) as Array<{ state: PayoutBatchRowState; n: number }>;
  const counts: BatchCounts = { total: 0, pending: 0, sent: 0, refused: 0 };
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
  };
}

/** UPDATE … RETURNING through TypeORM's query(): [rows, count]. */
function returned<T>(raw: unknown): T[] {
  const r = raw as [T[], number] | T[];
  return Array.isArray(r[0]) ? (r[0] as T[]) : (r as T[]);
}

/**
 * Payout batches (`POST /payouts/batches`): many creates in one request. Every row is checked
 * with the create's own DTO before anything is stored; a real batch is stored at once (rows with
 * their recipients sealed) and sent in the background by PayoutBatchRunner, each row through
 * PayoutsService.create, so every rule of a single create holds for a batch row too.
 */
@Injectable()
export class PayoutBatchesService {
  private readonly pipe = createValidationPipe();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly payways: PaywayConfigService,
    private readonly payouts: PayoutsService,
    private readonly audit: AuditService,
    private readonly keys: KeyRing,
    @Inject(PAYOUT_ROW_PREVIEW) private readonly preview: PayoutRowPreview,
    private readonly controls: PayoutControls,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private get shopId(): number {
    return this.gateway.shopId('payout');
  }

  /** The body as JSON `{batchId?, rows}` or CSV text (batchId from the query). */
  parse(body: unknown, csv: boolean, queryBatchId: string | undefined): Submitted {
    let batchId = queryBatchId;
    let rows: unknown;
    if (csv) {
      if (typeof body !== 'string')
        throw new ValidationFailed([{ field: 'body', message: 'must be CSV text' }]);
      try {
        rows = csvToRows(body);
      } catch (e) {
        if (e instanceof CsvProblem) throw new ValidationFailed([e.problem]);
        throw e;
      }
    } else {
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw new ValidationFailed([
          { field: 'body', message: 'must be an object {batchId?, rows}' },
        ]);
      const { batchId: given, rows: list, ...rest } = body as Record<string, unknown>;
      const extra = Object.keys(rest);
      if (extra.length > 0)
        throw new ValidationFailed(
          extra.map((f) => ({ field: f.slice(0, 60), message: 'should not exist' })),
        );
      if (given !== undefined) {
        if (typeof given !== 'string')
          throw new ValidationFailed([{ field: 'batchId', message: 'must be a string' }]);
        if (batchId !== undefined && batchId !== given)
          throw new ValidationFailed([
            { field: 'batchId', message: 'differs between the query and the body' },
          ]);
        batchId = given;
      }
      rows = list;
    }
    if (batchId !== undefined && !BATCH_ID.test(batchId))
      throw new ValidationFailed([
        {
          field: 'batchId',
          message: 'must be 1-100 characters of letters, digits, ".", "_", ":" or "-"',
        },
      ]);
    if (!Array.isArray(rows))
      throw new ValidationFailed([{ field: 'rows', message: 'is required (an array)' }]);
    if (rows.length === 0)
      throw new ValidationFailed([{ field: 'rows', message: 'must have at least 1 row' }]);
    if (rows.length > MAX_BATCH_ROWS)
      throw new ValidationFailed([
        { field: 'rows', message: `must have at most ${MAX_BATCH_ROWS} rows` },
      ]);
    return { batchId, rows };
  }

  /** Each row through the create's own validation; row numbers start at 1. */
  private async validateRows(
    rows: unknown[],
  ): Promise<{ dtos: Array<CreatePayoutDto | null>; errors: FieldError[][] }> {
    const dtos: Array<CreatePayoutDto | null> = [];
    const errors: FieldError[][] = [];
    const seen = new Map<string, number>();
    for (const [i, row] of rows.entries()) {
      if (typeof row !== 'object' || row === null || Array.isArray(row)) {
        dtos.push(null);
        errors.push([{ field: 'row', message: 'must be an object' }]);
        continue;
      }
      try {
        const dto = (await this.pipe.transform(row, {
          type: 'body',
          metatype: CreatePayoutDto,
        })) as CreatePayoutDto;
        const first = seen.get(dto.shopPaymentId);
        if (first !== undefined) {
          dtos.push(null);
          errors.push([
            { field: 'shopPaymentId', message: `repeats the shopPaymentId of row ${first}` },
          ]);
          continue;
        }
        seen.set(dto.shopPaymentId, i + 1);
        dtos.push(dto);
        errors.push([]);
      } catch (e) {
        if (!(e instanceof ValidationFailed)) throw e;
        dtos.push(null);
        errors.push(e.errors);
      }
    }
    return { dtos, errors };
  }

  /**
   * Dry run: every check that can be made without sending (the create body, the payway's amount
   * and account rules, repeats within the batch, ids already used, and PAYOUT_ROW_PREVIEW),
   * answered per row. Writes nothing and calls no gateway route that creates anything.
   */
  async dryRun(input: Submitted): Promise<{
    batchId: string | null;
    counts: { total: number; valid: number; invalid: number };
    items: DryRunRow[];
  }> {
    const { dtos, errors } = await this.validateRows(input.rows);
    const ids = dtos.filter((d): d is CreatePayoutDto => d !== null).map((d) => d.shopPaymentId);
    const existing = new Set(
      (
        (await this.dataSource.query(
          `SELECT shop_payment_id FROM payouts WHERE shop_id = $1 AND shop_payment_id = ANY($2::varchar[])`,
          [this.shopId, ids],
        )) as Array<{ shop_payment_id: string }>
      ).map((r) => r.shop_payment_id),
    );
    const items: DryRunRow[] = [];
    for (const [i, dto] of dtos.entries()) {
      const problems = [...errors[i]];
      if (dto !== null) {
        if (existing.has(dto.shopPaymentId))
          problems.push({
            field: 'shopPaymentId',
            message: 'is already used by a payout (a real batch would replay it or answer 409)',
          });
        problems.push(...(await this.paywayProblems(dto)));
        problems.push(...(await this.preview.preview(dto)));
      }
      const raw = input.rows[i] as Record<string, unknown> | null;
      const id =
        dto?.shopPaymentId ??
        (typeof raw?.shopPaymentId === 'string' ? raw.shopPaymentId.slice(0, 255) : null);
      items.push({ row: i + 1, shopPaymentId: id, ok: problems.length === 0, errors: problems });
    }
    // The money controls (issue #27), as a real batch would meet them in row order: the daily caps
    // (today's sums plus the batch's earlier rows) and how many admin approvals each row needs.
    const checked = dtos.flatMap((d, i) => (d !== null && items[i].ok ? [{ d, i }] : []));
    // (Rows with other problems are left out: a real batch with them is refused whole.)
    const caps = await this.controls.previewCaps(
      this.shopId,
      checked.map(({ d }) => ({
        amount: Amount.parse(d.amount),
        amountType: d.amountType,
        shopCurrency: d.shopCurrency,
        account: d.account,
      })),
    );
    checked.forEach(({ d, i }, k) => {
      const cap = caps[k];
      if (cap !== null) {
        items[i].errors.push({
          field: 'amount',
          message: `would pass the ${cap.cap} cap of currency ${d.shopCurrency}: ${cap.remaining.toString()} left`,
        });
        items[i].ok = false;
      }
      items[i].approvalsRequired = approvalsNeeded(
        this.config.payoutApproval,
        Amount.parse(d.amount),
        d.shopCurrency,
      );
    });
    const valid = items.filter((r) => r.ok).length;
    return {
      batchId: input.batchId ?? null,
      counts: { total: items.length, valid, invalid: items.length - valid },
      items,
    };
  }

  private async paywayProblems(dto: CreatePayoutDto): Promise<FieldError[]> {
    let payway: OutputPayway;
    try {
      payway = await this.payways.getPayway('payout', dto.payway);
    } catch (e) {
      if (e instanceof ValidationFailed) return e.errors;
      throw e;
    }
    const local = boundsCheckFor(dto.shopCurrency, payway.currency) === 'local';
    return [
      // In another currency the bounds apply after conversion (withdraw/try, at create time).
      ...amountProblems(dto.amount, local ? payway : ({} as OutputPayway), dto.amountType),
      ...accountProblems(dto.account, dto.accountDetails, payway),
    ];
  }

  /**
   * A real batch: every row valid, or a 400 naming rows and fields (`rows[3].amount`, rows
   * numbered from 1) and nothing stored. Stored in one transaction; the same batchId with the
   * same rows answers the batch as it is now (replayed), with other rows 409.
   */
  async submit(input: Submitted): Promise<{ code: number; replayed: boolean; body: BatchSummary }> {
    const { dtos, errors } = await this.validateRows(input.rows);
    const problems = errors.flatMap((list, i) =>
      list.map((e) => ({ field: `rows[${i + 1}].${e.field}`, message: e.message })),
    );
    if (problems.length > 0) throw new ValidationFailed(problems);
    const rows = dtos as CreatePayoutDto[];
    const batchId = input.batchId ?? randomUUID();
    const fingerprint = this.keys.blindIndex(
      JSON.stringify(rows.map(canonicalBatchRow)),
      BATCH_INDEX,
    );
    const shopId = this.shopId;
    const created = await this.dataSource.transaction(async (m) => {
      const inserted = (await m.query(
        `INSERT INTO payout_batches (shop_id, batch_id, status, row_count, request_fingerprint)
         VALUES ($1, $2, 'pending', $3, $4) ON CONFLICT (shop_id, batch_id) DO NOTHING RETURNING id`,
        [shopId, batchId, rows.length, fingerprint],
      )) as Array<{ id: string }>;
      if (inserted.length === 0) return false;
      const pk = inserted[0].id;
      for (let start = 0; start < rows.length; start += 1000) {
        const chunk = rows.slice(start, start + 1000);
        const nos = chunk.map((_, k) => start + k + 1);
        await m.query(
          `INSERT INTO payout_batch_rows (batch_pk, row_no, shop_payment_id, request, recipient_sealed, state)
           SELECT $1, no, id, req, sealed, 'pending'
             FROM unnest($2::int[], $3::varchar[], $4::jsonb[], $5::text[]) AS t(no, id, req, sealed)`,
          [
            pk,
            nos,
            chunk.map((d) => d.shopPaymentId),
            chunk.map((d) => JSON.stringify(requestWithoutRecipient(d))),
            chunk.map((d, k) =>
              this.keys.seal(
                JSON.stringify({ account: d.account, accountDetails: d.accountDetails }),
                batchRowContext(pk, nos[k]),
              ),
            ),
          ],
        );
      }
      return true;
    });
    const batch = await this.dataSource
      .getRepository(PayoutBatchEntity)
      .findOneByOrFail({ shopId, batchId });
    if (!created && batch.requestFingerprint !== fingerprint)
      throw new DomainError(
        'conflict',
        409,
        'Conflict',
        `batch ${batchId} exists with other rows; a repeat must send the same rows`,
        { errors: [{ field: 'rows', message: 'differ from the first request of this batchId' }] },
      );
    return { code: 202, replayed: !created, body: await summaryOf(this.dataSource.manager, batch) };
  }

  async get(
    batchId: string,
    q: { limit?: number; cursor?: string },
  ): Promise<BatchSummary & { items: BatchRowView[]; nextCursor: string | null }> {
    const batch = await this.dataSource
      .getRepository(PayoutBatchEntity)
      .findOneBy({ shopId: this.shopId, batchId });
    if (batch === null) throw new NotFound('Payout batch', batchId);
    return {
      ...(await summaryOf(this.dataSource.manager, batch)),
      ...(await this.rowsOf(batch.id, q)),
    };
  }

  /** A batch's rows in order, paged by row number. */
  async rowsOf(
    batchPk: string,
    q: { limit?: number; cursor?: string },
  ): Promise<{ items: BatchRowView[]; nextCursor: string | null }> {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const after = Number(decodeCursor(q.cursor, 'bigint') ?? '0');
    const rows = (await this.dataSource.query(
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
  async list(limit: number): Promise<BatchSummary[]> {
    const batches = await this.dataSource
      .getRepository(PayoutBatchEntity)
      .find({ order: { createdAt: 'DESC' }, take: limit });
    return Promise.all(batches.map((b) => summaryOf(this.dataSource.manager, b)));
  }

  /**
   * Sends one claimed row through the create path and records its answer after. A crash
   * between the two leaves the row pending; when its lease runs out it is sent again and the
   * create replays by shopPaymentId: the gateway sees one create. Returns false when the
   * answer is not known yet (the row is left for a later claim).
   */
  async sendRow(batchPk: string, rowNo: number): Promise<boolean> {
    const rows = (await this.dataSource.query(
      `SELECT request, recipient_sealed FROM payout_batch_rows WHERE batch_pk = $1 AND row_no = $2 AND state = 'pending'`,
      [batchPk, rowNo],
    )) as Array<{ request: Record<string, unknown>; recipient_sealed: string }>;
    if (rows.length === 0) return true;
    const recipient = JSON.parse(
      this.keys.unseal(rows[0].recipient_sealed, batchRowContext(batchPk, rowNo)),
    ) as Record<string, unknown>;
    let state: PayoutBatchRowState;
    let result: Record<string, unknown>;
    try {
      const dto = (await this.pipe.transform(
        { ...rows[0].request, ...recipient },
        { type: 'body', metatype: CreatePayoutDto },
      )) as CreatePayoutDto;
      // The batch runner's job acts for nobody: the rows' writes record no key.
      const stored = await this.payouts.create(dto, undefined);
      state = 'sent';
      result = { payout: stored.body };
    } catch (e) {
      // Not answered yet (another copy is waiting for the gateway) or not the row's fault.
      if (!(e instanceof DomainError) || e.status >= 500 || e instanceof RequestInProgress)
        return false;
      state = 'refused';
      result = { problem: toProblem(e) };
    }
    crashPoint('payout_batch.row.after_create');
    await this.dataSource.query(
      `UPDATE payout_batch_rows SET state = $3, result = $4, lease_until = NULL, updated_at = now()
        WHERE batch_pk = $1 AND row_no = $2 AND state = 'pending'`,
      [batchPk, rowNo, state, result],
    );
    return true;
  }

  /**
   * Completes a batch whose every row has an answer, with its event, in one transaction. Two
   * instances finishing the last rows at once: the batch row's lock lets one of them through.
   */
  async completeIfDone(batchPk: string): Promise<boolean> {
    return this.dataSource.transaction(async (m) => {
      const done = returned<{ id: string }>(
        await m.query(
          `UPDATE payout_batches SET status = 'completed', completed_at = now()
            WHERE id = $1 AND status <> 'completed'
              AND NOT EXISTS (SELECT 1 FROM payout_batch_rows WHERE batch_pk = $1 AND state = 'pending')
            RETURNING id`,
          [batchPk],
        ),
      );
      if (done.length === 0) return false;
      const batch = await m.findOneByOrFail(PayoutBatchEntity, { id: batchPk });
      const view = await summaryOf(m, batch);
      await this.audit.record(m, {
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
}

/** What a row asked for, minus its recipient (sealed apart). */
function requestWithoutRecipient(d: CreatePayoutDto): Record<string, unknown> {
  return {
    shopPaymentId: d.shopPaymentId,
    amount: d.amount,
    amountType: d.amountType,
    shopCurrency: d.shopCurrency,
    payway: d.payway,
    ...(d.description !== undefined ? { description: d.description } : {}),
    ...(d.metadata !== undefined ? { metadata: d.metadata } : {}),
  };
}

/** A row in the create's canonical form (amounts by value), with its metadata keys sorted. */
function canonicalBatchRow(d: CreatePayoutDto): string {
  const metadata = d.metadata
    ? Object.fromEntries(Object.entries(d.metadata).sort(([a], [b]) => a.localeCompare(b)))
    : null;
  return JSON.stringify([canonicalPayoutRequest(d), metadata]);
}
