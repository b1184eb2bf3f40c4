import { Query, Result, types as pgTypes } from 'pg';

/**
 * A `pg` query whose result rows are built from a row shape kept per statement.
 *
 * For every execution `pg` reads the statement's row description and, for each column, looks
 * up its parser and sets its name on a null-prototype object, which it then copies into the
 * empty row every row is spread from (Result.addFields). With a fresh name string per column
 * per execution, that is a string-table look-up per column, a dictionary built and sorted, and a
 * copy from it: under the open-loop create load, 27 µs of each create (the claim returns 31
 * columns), and again in every read of a view.
 *
 * Here the statement keeps the shape its last description made: the column names, their
 * parsers and formats, and the empty row. An execution's description is compared with it
 * column by column (name, type, format, and the parser the type has now on this connection:
 * each client has its own type overrides, which fall back to pg's); the same, the kept shape
 * is used; any difference, a new shape is made exactly as `pg` makes it and kept instead.
 * Rows are then made as Result.parseRow makes them (the empty row spread, each value parsed,
 * a binary value copied first), reading the kept names. The rows are the same objects, key for
 * key, value for value, in the same order (test/database/shaped-query.e2e-spec.ts).
 */

interface FieldDescription {
  name: string;
  dataTypeID: number;
  format?: string;
}

type Parser = (value: unknown) => unknown;

interface TypeSource {
  getTypeParser(oid: number, format?: string): Parser;
}

/** The row shape of a statement's last description. */
export interface RowShape {
  names: string[];
  oids: number[];
  formats: string[];
  parsers: Parser[];
  empty: Record<string, null>;
}

/** Where a statement keeps its row shape between executions. */
export interface ShapeSlot {
  shape?: RowShape;
}

function parserOf(types: TypeSource | undefined, oid: number, format: string): Parser {
  return (types ?? (pgTypes as unknown as TypeSource)).getTypeParser(oid, format);
}

/** The shape `pg`'s addFields makes of a description. */
export function shapeOf(
  fields: readonly FieldDescription[],
  types: TypeSource | undefined,
): RowShape {
  const row = Object.create(null) as Record<string, null>;
  const names: string[] = [];
  const oids: number[] = [];
  const formats: string[] = [];
  const parsers: Parser[] = [];
  for (const f of fields) {
    const format = f.format || 'text';
    row[f.name] = null;
    names.push(f.name);
    oids.push(f.dataTypeID);
    formats.push(format);
    parsers.push(parserOf(types, f.dataTypeID, format));
  }
  return { names, oids, formats, parsers, empty: { ...row } };
}

/** Whether a description makes exactly this shape (the same columns, types, formats, parsers). */
export function fits(
  shape: RowShape,
  fields: readonly FieldDescription[],
  types: TypeSource | undefined,
): boolean {
  if (shape.names.length !== fields.length) return false;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    const format = f.format || 'text';
    if (
      f.name !== shape.names[i] ||
      f.dataTypeID !== shape.oids[i] ||
      format !== shape.formats[i] ||
      parserOf(types, f.dataTypeID, format) !== shape.parsers[i]
    )
      return false;
  }
  return true;
}

interface ResultInternals {
  fields: FieldDescription[];
  _parsers: Parser[] | undefined;
  _types: TypeSource | undefined;
  _prebuiltEmptyResultObject: Record<string, null> | null;
}

/** A Result whose rows come from the slot's shape (see above). */
class ShapedResult extends Result {
  private shape: RowShape | undefined;

  constructor(
    rowMode: string | undefined,
    types: unknown,
    private readonly slot: ShapeSlot,
  ) {
    super(rowMode as never, types as never);
  }

  addFields(fieldDescriptions: FieldDescription[]): void {
    const self = this as unknown as ResultInternals;
    self.fields = fieldDescriptions;
    const kept = this.slot.shape;
    const shape =
      kept !== undefined && fits(kept, fieldDescriptions, self._types)
        ? kept
        : (this.slot.shape = shapeOf(fieldDescriptions, self._types));
    this.shape = shape;
    // As pg leaves them, for anything that reads them (its array rows read the parsers).
    if (fieldDescriptions.length) self._parsers = shape.parsers;
    self._prebuiltEmptyResultObject = shape.empty;
  }

  parseRow(rowData: unknown[]): Record<string, unknown> {
    const shape = this.shape!;
    const row: Record<string, unknown> = { ...shape.empty };
    const { names, parsers, formats } = shape;
    for (let i = 0, len = rowData.length; i < len; i++) {
      const raw = rowData[i];
      if (raw === null) row[names[i]] = null;
      else row[names[i]] = parsers[i](formats[i] === 'binary' ? Buffer.from(raw as Buffer) : raw);
    }
    return row;
  }
}

/**
 * A query whose result rows are made from `slot`'s shape. Its callback is the one `client.query`
 * or `pool.query` is given beside it (the pool wraps it to release its client first).
 */
export class ShapedQuery extends Query {
  constructor(config: { name?: string; text: string; values: unknown[] }, slot: ShapeSlot) {
    super(config);
    const self = this as unknown as {
      _rowMode: string | undefined;
      types: unknown;
      _result: unknown;
      _results: unknown;
    };
    const result = new ShapedResult(self._rowMode, self.types, slot);
    self._result = result;
    self._results = result;
  }
}
