import type { FieldError } from '../common/errors';

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
/** Object fields, one column per key: `accountDetails.name`, `metadata.orderRef`. */
const OBJECT_COLUMNS = ['accountDetails', 'metadata'];

export class CsvProblem extends Error {
  constructor(readonly problem: FieldError) {
    super(`${problem.field}: ${problem.message}`);
  }
}

/**
 * RFC 4180 text (comma separated, `"` quoting with `""` inside quotes, CRLF or LF line ends) to
 * records. Stops with a problem past `maxRecords` so a huge body costs no more than that.
 */
export function parseCsvRecords(text: string, maxRecords: number): string[][] {
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

/**
 * A CSV batch to the rows of its JSON form: the header names the create body's fields
 * (`accountDetails.<name>` and `metadata.<key>` for object fields); an empty cell leaves its
 * field out, as if absent from the JSON row. Unknown or repeated columns are refused by name.
 */
export function csvToRows(text: string): Array<Record<string, unknown>> {
  const records = parseCsvRecords(text, MAX_BATCH_ROWS + 1);
  if (records.length === 0) throw new CsvProblem({ field: 'body', message: 'has no header row' });
  const header = records[0].map((h) => h.trim());
  const seen = new Set<string>();
  for (const name of header) {
    const dot = name.indexOf('.');
    const known = dot < 0 ? PLAIN_COLUMNS.has(name) : OBJECT_COLUMNS.includes(name.slice(0, dot)) && dot < name.length - 1;
    if (!known) throw new CsvProblem({ field: `header.${name.slice(0, 60)}`, message: 'is not a field of a payout create' });
    if (seen.has(name)) throw new CsvProblem({ field: `header.${name.slice(0, 60)}`, message: 'appears twice' });
    seen.add(name);
  }
  return records.slice(1).map((cells, n) => {
    if (cells.length !== header.length)
      throw new CsvProblem({
        field: `rows[${n + 1}]`,
        message: `has ${cells.length} cells where the header has ${header.length}`,
      });
    const row: Record<string, unknown> = {};
    header.forEach((name, k) => {
      const value = cells[k];
      if (value === '') return;
      const dot = name.indexOf('.');
      if (dot < 0) {
        row[name] = value;
        return;
      }
      const obj = name.slice(0, dot);
      const inner = (row[obj] ??= {}) as Record<string, string>;
      inner[name.slice(dot + 1)] = value;
    });
    return row;
  });
}
