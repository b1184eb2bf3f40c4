import type { FieldError } from '../common/errors';
import { MAX_KEYS_PER_OBJECT, valueProblem } from '../common/input-guard';
import { METADATA_MAX_KEYS, reservedMetadataKey } from '../common/metadata';

/** The most rows one batch takes (shared/API.md, Payouts). */
export const MAX_BATCH_ROWS = 10_000;

/** Plain columns of a CSV batch: the create body's own field names. */
const PLAIN_COLUMNS = new Set([
  'shopPaymentId',
  'amount',
  'amountType',
  'shopCurrency',
  'payway',
  'account',
  'description',
]);
/**
 * Object fields, one column per key: `accountDetails.name`, `metadata.orderRef`; each column is
 * a key of its object, and an object takes no more keys than in a JSON row (metadata's limit;
 * for accountDetails the limit every JSON object has).
 */
const OBJECT_COLUMNS: ReadonlyMap<string, number> = new Map([
  ['accountDetails', MAX_KEYS_PER_OBJECT],
  ['metadata', METADATA_MAX_KEYS],
]);

export class CsvProblem extends Error {
  constructor(readonly problem: FieldError) {
    super(`${problem.field}: ${problem.message}`);
  }
}

/** Characters scanned between two yields to the event loop (about a millisecond of work). */
const YIELD_CHARS = 32 * 1024;
/** Rows mapped (and walked for what the edge refuses) between two yields. */
const ROWS_PER_TURN = 200;
const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

/** Lets every other request in (health, notifications) between two slices of a batch's work. */
export function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * RFC 4180 text (comma separated, `"` quoting with `""` inside quotes, CRLF or LF line ends) to
 * records. Stops with a problem past `maxRecords` so a huge body costs no more than that. Fields
 * are cut out of the text (slices, found with indexOf and a scan of character codes), never built
 * a character at a time, and the work yields to the event loop every YIELD_CHARS characters: a
 * 5 MB body never holds the process (shared/API.md, Limits).
 */
export async function parseCsvRecords(
  text: string,
  maxRecords: number,
  /** Called with the first record as soon as it is read: may refuse the rest unread. */
  onFirst?: (record: string[]) => void,
): Promise<string[][]> {
  const records: string[][] = [];
  let record: string[] = [];
  const n = text.length;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let nextYield = i + YIELD_CHARS;
  const endRecord = (last: string): void => {
    record.push(last);
    // A blank line (one empty field) is no record.
    if (!(record.length === 1 && record[0] === '')) {
      if (records.length >= maxRecords)
        throw new CsvProblem({ field: 'body', message: `has more than ${maxRecords - 1} rows` });
      records.push(record);
      if (records.length === 1) onFirst?.(record);
    }
    record = [];
  };
  while (i < n) {
    if (i >= nextYield) {
      await yieldTurn();
      nextYield = i + YIELD_CHARS;
    }
    let value = '';
    let j = i;
    if (text.charCodeAt(j) === QUOTE) {
      // A quoted part: up to the quote that is not doubled, `""` standing for one quote.
      j++;
      for (;;) {
        const q = text.indexOf('"', j);
        if (q < 0) throw new CsvProblem({ field: 'body', message: 'ends inside a quoted field' });
        if (text.charCodeAt(q + 1) === QUOTE) {
          value += text.slice(j, q + 1);
          j = q + 2;
        } else {
          value += text.slice(j, q);
          j = q + 1;
          break;
        }
      }
    }
    // The rest of the field, as it is, up to a comma or a line end (a lone CR is a character).
    let k = j;
    for (; k < n; k++) {
      const c = text.charCodeAt(k);
      if (c === COMMA || c === LF || (c === CR && text.charCodeAt(k + 1) === LF)) break;
    }
    value += text.slice(j, k);
    const c = k < n ? text.charCodeAt(k) : -1;
    if (c === COMMA) {
      record.push(value);
      i = k + 1;
    } else {
      endRecord(value);
      i = c === CR ? k + 2 : k + 1;
    }
  }
  // A comma at the very end leaves an empty last field.
  if (record.length > 0) endRecord('');
  return records;
}

/** Where a column's value goes in a row: a plain field, or a key of an object field. */
interface Column {
  field: string;
  key: string | null;
}

/**
 * The header, checked whole before any row is read: every name a create field, none twice, and
 * no object with more columns than a JSON object of it may have keys. Refused by name.
 */
export function headerColumns(cells: readonly string[]): Column[] {
  const perObject = new Map<string, number>();
  const seen = new Set<string>();
  const columns: Column[] = [];
  for (const raw of cells) {
    const name = raw.trim();
    const shown = `header.${name.slice(0, 60)}`;
    const dot = name.indexOf('.');
    const field = dot < 0 ? name : name.slice(0, dot);
    const known =
      dot < 0 ? PLAIN_COLUMNS.has(name) : OBJECT_COLUMNS.has(field) && dot < name.length - 1;
    if (!known)
      throw new CsvProblem({ field: shown, message: 'is not a field of a payout create' });
    if (seen.has(name)) throw new CsvProblem({ field: shown, message: 'appears twice' });
    seen.add(name);
    if (dot >= 0) {
      // As in a JSON row: a key the framework would drop is refused by name.
      const reserved = reservedMetadataKey({
        [field === 'metadata' ? 'metadata' : '-']: { [name.slice(dot + 1)]: '' },
      });
      if (reserved !== null)
        throw new CsvProblem({ ...reserved, field: `header.${reserved.field}` });
      const n = (perObject.get(field) ?? 0) + 1;
      const limit = OBJECT_COLUMNS.get(field) ?? 0;
      if (n > limit)
        throw new CsvProblem({
          field: `header.${field}`,
          message: `has more than ${limit} ${field}.<key> columns; at most ${limit} keys are allowed`,
        });
      perObject.set(field, n);
    }
    columns.push({ field, key: dot < 0 ? null : name.slice(dot + 1) });
  }
  return columns;
}

/**
 * A CSV batch to the rows of its JSON form: the header names the create body's fields
 * (`accountDetails.<name>` and `metadata.<key>` for object fields); an empty cell leaves its
 * field out, as if absent from the JSON row. The header is checked as soon as it is read
 * (headerColumns); the rows are then mapped in one pass over their cells, and held to what the
 * edge holds a JSON body to (valueProblem: NUL characters, lone surrogates), ROWS_PER_TURN rows
 * between two yields.
 */
export async function csvToRows(text: string): Promise<Array<Record<string, unknown>>> {
  let columns: Column[] = [];
  const records = await parseCsvRecords(text, MAX_BATCH_ROWS + 1, (first) => {
    columns = headerColumns(first);
  });
  if (records.length === 0) throw new CsvProblem({ field: 'body', message: 'has no header row' });
  const rows: Array<Record<string, unknown>> = [];
  for (let n = 1; n < records.length; n++) {
    if (n % ROWS_PER_TURN === 0) await yieldTurn();
    const cells = records[n];
    if (cells.length !== columns.length)
      throw new CsvProblem({
        field: `rows[${n}]`,
        message: `has ${cells.length} cells where the header has ${columns.length}`,
      });
    const row: Record<string, unknown> = {};
    for (let k = 0; k < columns.length; k++) {
      const value = cells[k];
      if (value === '') continue;
      const { field, key } = columns[k];
      if (key === null) row[field] = value;
      else ((row[field] ??= {}) as Record<string, string>)[key] = value;
    }
    const problem = valueProblem(row, `rows.${n - 1}`, 2);
    if (problem !== null) throw new CsvProblem(problem);
    rows.push(row);
  }
  return rows;
}
