import type { FieldError } from '../common/errors';
import { inputProblem, MAX_KEYS_PER_OBJECT } from '../common/input-guard';
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

/**
 * RFC 4180 text (comma separated, `"` quoting with `""` inside quotes, CRLF or LF line ends) to
 * records. Stops with a problem past `maxRecords` so a huge body costs no more than that.
 */
export function parseCsvRecords(
  text: string,
  maxRecords: number,
  /** Called with the first record as soon as it is read: may refuse the rest unread. */
  onFirst?: (record: string[]) => void,
): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endRecord = (): void => {
    record.push(field);
    field = '';
    // A blank line (one empty field) is no record.
    if (!(record.length === 1 && record[0] === '')) {
      if (records.length >= maxRecords)
        throw new CsvProblem({ field: 'body', message: `has more than ${maxRecords - 1} rows` });
      records.push(record);
      if (records.length === 1) onFirst?.(record);
    }
    record = [];
  };
  for (; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c !== '"') field += c;
      else if (text[i + 1] === '"') {
        field += '"';
        i++;
      } else quoted = false;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n') endRecord();
    else if (c === '\r' && text[i + 1] === '\n') {
      endRecord();
      i++;
    } else field += c;
  }
  if (quoted) throw new CsvProblem({ field: 'body', message: 'ends inside a quoted field' });
  if (field !== '' || record.length > 0) endRecord();
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
 * edge holds a JSON body to (inputProblem: NUL characters, lone surrogates, reserved keys).
 */
export function csvToRows(text: string): Array<Record<string, unknown>> {
  let columns: Column[] = [];
  const records = parseCsvRecords(text, MAX_BATCH_ROWS + 1, (first) => {
    columns = headerColumns(first);
  });
  if (records.length === 0) throw new CsvProblem({ field: 'body', message: 'has no header row' });
  const rows = records.slice(1).map((cells, n) => {
    if (cells.length !== columns.length)
      throw new CsvProblem({
        field: `rows[${n + 1}]`,
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
    return row;
  });
  const problem = inputProblem('/', {}, { rows });
  if (problem !== null) throw new CsvProblem(problem);
  return rows;
}
