import { capFieldErrors, type FieldError, ValidationFailed } from '../../common/errors';
import { Amount } from '../../common/money';
import { currencyName } from '../../common/currency';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../../common/pagination';
import type { OutputPayway } from '../../gateway/gateway.types';
import { forEachBounded } from '../../jobs/claim';
import { boundsCheckFor, checkConvertedBounds } from '../../payway-config/currency-conversion';
import type { CreatePayoutDto } from '../dto/payout-requests.dto';
import { approvalsNeeded } from '../payout-approval';
import { controlWriteOff, writeOffNeedsQuote } from '../payout.rules';
import { accountProblems, amountProblems } from '../payout-validation';
import type { BatchDeps } from './batch-deps';
import { type Submitted, validateRows, yieldTurn } from './batch-rows';
import type { DryRunRow } from './batch-view';

/**
 * The least room a page of rows has, in bytes of JSON: one row with its capped errors fits.
 * Past it a page takes at most half the request's own size: the answer is smaller than the body.
 */
const MIN_PAGE_BYTES = 4096;
/** withdraw/try calls of one dry run at once (rows in another currency than their payway's). */
const PRICING_CONCURRENCY = 4;

export interface DryRunAnswer {
  batchId: string | null;
  counts: { total: number; valid: number; invalid: number };
  items: DryRunRow[];
  /** Send the same body again with `cursor` for the next rows; null on the last page. */
  nextCursor: string | null;
}

/**
 * A row as withdraw/try prices it (the create's way): in another currency than its payway's, or
 * a `ps_amount` whose write-off the amount type does not fix. `shopWriteOff` null: not quoted.
 */
interface Priced {
  shopWriteOff: Amount | null;
  problems: FieldError[];
}

/**
 * Dry run: every check that can be made without sending (the create body, the payway's amount
 * and account rules, the converted bounds of a row in another currency, repeats within the batch,
 * ids already used, PAYOUT_ROW_PREVIEW, the caps and the approvals a row would wait for, a row in
 * another currency counted by its write-off as withdraw/try prices it), answered per row. Writes
 * nothing and calls no gateway route that creates anything. Bounded like every refusal: at most
 * MAX_FIELD_ERRORS errors a row, the rows paged (`limit`, `cursor`) within a page size that keeps
 * the answer smaller than the request (`bodyBytes`), the work yielding between slices of rows.
 */
export async function dryRunBatch(
  d: BatchDeps,
  input: Submitted,
  page: { limit?: number; cursor?: string; bodyBytes: number },
): Promise<DryRunAnswer> {
  const { dtos, errors } = await validateRows(d.pipe, input.rows);
  const ids = dtos.filter((x): x is CreatePayoutDto => x !== null).map((x) => x.shopPaymentId);
  const existing = new Set(
    (
      (await d.dataSource.query(
        `SELECT shop_payment_id FROM payouts WHERE shop_id = $1 AND shop_payment_id = ANY($2::varchar[])`,
        [d.shopId, ids],
      )) as Array<{ shop_payment_id: string }>
    ).map((r) => r.shop_payment_id),
  );
  const priced = await priceRows(d, dtos);
  const items: DryRunRow[] = [];
  for (const [i, dto] of dtos.entries()) {
    if (i > 0 && i % 50 === 0) await yieldTurn();
    const problems = [...errors[i]];
    if (dto !== null) {
      if (existing.has(dto.shopPaymentId))
        problems.push({
          field: 'shopPaymentId',
          message: 'is already used by a payout (a real batch would replay it or answer 409)',
        });
      problems.push(...(await paywayProblems(d, dto)));
      problems.push(...(priced.get(i)?.problems ?? []));
      problems.push(...(await d.preview.preview(dto)));
    }
    const raw = input.rows[i] as Record<string, unknown> | null;
    const id =
      dto?.shopPaymentId ??
      (typeof raw?.shopPaymentId === 'string' ? raw.shopPaymentId.slice(0, 255) : null);
    items.push({ row: i + 1, shopPaymentId: id, ok: problems.length === 0, errors: problems });
  }
  // The money controls, as a real batch would meet them in row order: the daily caps (today's
  // sums plus the batch's earlier rows) and how many admin approvals each row needs. A row is
  // weighed by the one figure a create weighs it by, its write-off in its shop currency
  // (controlWriteOff), quoted by withdraw/try when the amount type does not fix it. A row whose
  // write-off a control needs and could not be quoted has a problem of its own; the amount
  // stands in only where no control weighs it. Rows with other problems are left out: a real
  // batch with them is refused whole.
  const checked = dtos.flatMap((x, i) => (x !== null && items[i].ok ? [{ x, i }] : []));
  const writeOffs = checked.map(({ x, i }) => {
    const amount = Amount.parse(x.amount);
    const shopWriteOff = priced.get(i)?.shopWriteOff ?? null;
    return controlWriteOff({ amount, amountType: x.amountType, shopWriteOff }) ?? amount;
  });
  const caps = await d.controls.previewCaps(
    d.shopId,
    checked.map(({ x }, k) => ({
      // The share as previewCaps counts a shop_amount: the write-off itself.
      amount: writeOffs[k],
      amountType: 'shop_amount' as const,
      shopCurrency: x.shopCurrency,
      account: x.account,
    })),
  );
  checked.forEach(({ x, i }, k) => {
    const cap = caps[k];
    if (cap !== null) {
      items[i].errors.push({
        field: 'amount',
        message: `would pass the ${cap.cap} cap of ${currencyName(x.shopCurrency)}: ${cap.remaining.toString()} left`,
      });
      items[i].ok = false;
    }
    items[i].approvalsRequired = approvalsNeeded(
      d.config.payoutApproval,
      writeOffs[k],
      x.shopCurrency,
    );
  });
  for (const item of items) item.errors = capFieldErrors(item.errors);
  const valid = items.filter((r) => r.ok).length;
  return {
    batchId: input.batchId ?? null,
    counts: { total: items.length, valid, invalid: items.length - valid },
    ...pageOf(items, page),
  };
}

/** The page after `cursor`: at most `limit` rows, and no more bytes than the body allows. */
function pageOf(
  items: DryRunRow[],
  page: { limit?: number; cursor?: string; bodyBytes: number },
): { items: DryRunRow[]; nextCursor: string | null } {
  let after: number;
  try {
    after = Number(decodeCursor(page.cursor, 'bigint') ?? '0');
  } catch {
    throw new ValidationFailed([{ field: 'cursor', message: 'is not a cursor of this dry run' }]);
  }
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  const budget = Math.max(MIN_PAGE_BYTES, Math.floor(page.bodyBytes / 2));
  const out: DryRunRow[] = [];
  let bytes = 0;
  for (let i = after; i < items.length && out.length < limit; i++) {
    const size = JSON.stringify(items[i]).length + 1;
    if (out.length > 0 && bytes + size > budget) break;
    out.push(items[i]);
    bytes += size;
  }
  const last = out.length > 0 ? out[out.length - 1].row : after;
  return { items: out, nextCursor: last < items.length ? encodeCursor(String(last)) : null };
}

async function paywayProblems(d: BatchDeps, dto: CreatePayoutDto): Promise<FieldError[]> {
  let payway: OutputPayway;
  try {
    payway = await d.payways.getPayway('payout', dto.payway);
  } catch (e) {
    if (e instanceof ValidationFailed) return e.errors;
    throw e;
  }
  const local = boundsCheckFor(dto.shopCurrency, payway.currency) === 'local';
  return [
    // In another currency the bounds apply after conversion (priceRows).
    ...amountProblems(dto.amount, local ? payway : ({} as OutputPayway), dto.amountType),
    ...accountProblems(dto.account, dto.accountDetails, payway),
  ];
}

/**
 * Rows priced by withdraw/try as the create prices them (same terms asked once): those in
 * another shop currency than their payway's, with the converted bounds checked, and `ps_amount`
 * rows whose write-off a threshold or a cap of their currency weighs. By row index.
 */
async function priceRows(
  d: BatchDeps,
  dtos: Array<CreatePayoutDto | null>,
): Promise<Map<number, Priced>> {
  const asked: Array<{ i: number; dto: CreatePayoutDto; payway: OutputPayway; local: boolean }> =
    [];
  for (const [i, dto] of dtos.entries()) {
    if (dto === null) continue;
    let payway: OutputPayway;
    try {
      payway = await d.payways.getPayway('payout', dto.payway);
    } catch (e) {
      if (e instanceof ValidationFailed) continue;
      throw e;
    }
    const local = boundsCheckFor(dto.shopCurrency, payway.currency) === 'local';
    // The dry run previews the thresholds and the caps, not the balance.
    const weighed =
      writeOffNeedsQuote(dto.amountType) && d.controls.weighsWriteOff(dto.shopCurrency, false);
    if (!local || weighed) asked.push({ i, dto, payway, local });
  }
  const quotes = new Map<string, Promise<Priced>>();
  const out = new Map<number, Priced>();
  await forEachBounded(asked, PRICING_CONCURRENCY, async ({ i, dto, payway, local }) => {
    const terms = [
      Amount.parse(dto.amount).canonicalText(),
      dto.amountType,
      dto.shopCurrency,
      dto.payway,
    ];
    const key = JSON.stringify(terms);
    let quote = quotes.get(key);
    if (quote === undefined) {
      quote = quoteRow(d, dto, local ? null : payway);
      quotes.set(key, quote);
    }
    out.set(i, await quote);
  });
  return out;
}

/** `foreign`: the payway of a row in another currency (its converted bounds checked); null when local. */
async function quoteRow(
  d: BatchDeps,
  dto: CreatePayoutDto,
  foreign: OutputPayway | null,
): Promise<Priced> {
  try {
    const r = await d.gateway.tryWithdraw({
      amount: dto.amount,
      amount_type: dto.amountType,
      payway: dto.payway,
      shop_currency: dto.shopCurrency,
    });
    return {
      shopWriteOff: Amount.fromText(String(r.shop_write_off)),
      problems:
        foreign === null
          ? []
          : checkConvertedBounds({ amount: r.payee_receive, currency: r.ps_currency }, foreign),
    };
  } catch {
    // Unpriced, and said so (a real batch row is priced when it is sent).
    if (foreign !== null)
      return {
        shopWriteOff: null,
        problems: [
          {
            field: 'shopCurrency',
            message: 'could not be priced in the payway currency now (withdraw/try failed)',
          },
        ],
      };
    // A local ps_amount, asked because a control weighs its write-off (as at create).
    return {
      shopWriteOff: null,
      problems: [
        {
          field: 'amount',
          message:
            'its write-off could not be quoted now (withdraw/try failed); the approval thresholds, caps and balance check weigh it',
        },
      ],
    };
  }
}
