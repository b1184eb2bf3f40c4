import type { ValidationPipe } from '@nestjs/common';
import { capFieldErrors, type FieldError, ValidationFailed } from '../../common/errors';
import { reservedMetadataKey } from '../../common/metadata';
import { CreatePayoutDto } from '../dto/payout-requests.dto';
import { canonicalPayoutRequest } from '../payout-fingerprint';
import { BodyError } from '../../common/http-edge';
import { valueProblem } from '../../common/input-guard';
import { csvToRows, CsvProblem, MAX_BATCH_ROWS, yieldTurn } from '../payout-batch-csv';
import { parseBatchJson } from '../payout-batch-json';

/** A batch's id as the shop gives it (or a generated UUID). */
const BATCH_ID = /^[A-Za-z0-9._:-]{1,100}$/;
/** Rows checked between two yields to the event loop: a large batch never holds the process. */
const ROWS_PER_TURN = 50;

export interface Submitted {
  batchId: string | undefined;
  rows: unknown[];
}

export { yieldTurn };

/** Rows walked for what the edge refuses (NUL, lone surrogates, depth, width) between two yields. */
const WALK_ROWS_PER_TURN = 200;

/**
 * A JSON body's text parsed a slice at a time (payout-batch-json.ts), then held to what the edge
 * holds every other body to (valueProblem), its rows walked a slice at a time: the edge leaves
 * this route's body as text so that none of this runs before the guard has checked the key.
 */
async function jsonBody(text: string): Promise<unknown> {
  let body: unknown;
  try {
    body = await parseBatchJson(text);
  } catch (e) {
    if (e instanceof SyntaxError) throw new BodyError(400, 'entity.parse.failed');
    throw e;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const { rows, ...rest } = body as Record<string, unknown>;
  const top = valueProblem(Array.isArray(rows) ? { ...rest, rows: [] } : body, '', 0);
  if (top !== null) throw new ValidationFailed([top]);
  if (Array.isArray(rows))
    for (const [i, row] of rows.entries()) {
      if (i > 0 && i % WALK_ROWS_PER_TURN === 0) await yieldTurn();
      const problem = valueProblem(row, `rows.${i}`, 2);
      if (problem !== null) throw new ValidationFailed([problem]);
    }
  return body;
}

/** The body as JSON `{batchId?, rows}` or CSV text (batchId from the query), read a slice at a time. */
export async function parseBatch(
  text: unknown,
  csv: boolean,
  queryBatchId: string | undefined,
): Promise<Submitted> {
  let batchId = queryBatchId;
  let rows: unknown;
  if (csv) {
    if (typeof text !== 'string')
      throw new ValidationFailed([{ field: 'body', message: 'must be CSV text' }]);
    try {
      rows = await csvToRows(text);
    } catch (e) {
      if (e instanceof CsvProblem) throw new ValidationFailed([e.problem]);
      throw e;
    }
  } else {
    const body = typeof text === 'string' ? await jsonBody(text) : text;
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

/**
 * Each row through the create's own validation; row numbers start at 1. A row's errors are
 * capped as a single create's are (capFieldErrors); the work yields every ROWS_PER_TURN rows.
 */
export async function validateRows(
  pipe: ValidationPipe,
  rows: unknown[],
): Promise<{ dtos: Array<CreatePayoutDto | null>; errors: FieldError[][] }> {
  const dtos: Array<CreatePayoutDto | null> = [];
  const errors: FieldError[][] = [];
  const seen = new Map<string, number>();
  // Identical refused rows are refused identically: checked once (thousands of `{}` cost one).
  const refused = new Map<string, FieldError[]>();
  for (const [i, row] of rows.entries()) {
    if (i > 0 && i % ROWS_PER_TURN === 0) await yieldTurn();
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      dtos.push(null);
      errors.push([{ field: 'row', message: 'must be an object' }]);
      continue;
    }
    // What the edge refuses in a single create's body (a key the framework would drop).
    const reserved = reservedMetadataKey(row);
    if (reserved !== null) {
      dtos.push(null);
      errors.push([reserved]);
      continue;
    }
    const text = JSON.stringify(row);
    const known = refused.get(text);
    if (known !== undefined) {
      dtos.push(null);
      errors.push(known);
      continue;
    }
    try {
      const dto = (await pipe.transform(row, {
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
      const capped = capFieldErrors(e.errors);
      refused.set(text, capped);
      dtos.push(null);
      errors.push(capped);
    }
  }
  return { dtos, errors };
}

/** What a row asked for, minus its recipient (sealed apart). */
export function requestWithoutRecipient(d: CreatePayoutDto): Record<string, unknown> {
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
export function canonicalBatchRow(d: CreatePayoutDto): string {
  const metadata = d.metadata
    ? Object.fromEntries(Object.entries(d.metadata).sort(([a], [b]) => a.localeCompare(b)))
    : null;
  return JSON.stringify([canonicalPayoutRequest(d), metadata]);
}
