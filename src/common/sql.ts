import type { ClientBase, Pool, PoolClient, QueryResultRow } from 'pg';
import { ShapedQuery, type ShapeSlot } from '../database/shaped-query';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import type { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';

/**
 * Plain parameterised SQL for the hot paths. TypeORM stays for the schema, the
 * migrations and the admin and list pages; a request that runs thousands of times a second
 * sends named statements straight through `pg` (parsed and planned once per connection) and
 * hydrates rows with the entity's own column metadata, without the query builder's per-query
 * alias and column machinery.
 */

/**
 * A list of TypeScript constants written into SQL text (`'a','b'`), for a predicate that must
 * read as literals: one that a partial index's predicate has to match at plan time, which a
 * bound parameter would not. Only plain words are taken.
 */
export function sqlList(values: readonly string[]): string {
  for (const v of values)
    if (!/^[A-Za-z_]+$/.test(v)) throw new Error(`sqlList: ${JSON.stringify(v)} is not a word`);
  return values.map((v) => `'${v}'`).join(',');
}

/**
 * A statement with a stable name: `pg` prepares it once per connection and reuses the plan. One
 * without a name (`planEachTime`) is planned at every execution instead.
 */
export interface Statement {
  readonly name?: string;
  readonly text: string;
}

/**
 * A statement PostgreSQL plans at each execution (no name: `pg` sends it as the unnamed
 * statement), for one that joins a batch of keys against a table that grows. A prepared
 * statement's generic plan is made once per connection with the table's size then, and kept:
 * one made while `invoices` held 26 rows kept hashing a sequential scan of the whole table for
 * every batch once it held thousands (19.7 ms of a 22 ms answer batch of two rows, seen with
 * auto_explain under the create benchmark). Planned each time, with the batch's keys bound as an
 * array PostgreSQL can count (`= ANY($n)`), it reads the batch's rows by their index at any size.
 */
export function planEachTime(text: string): Statement {
  return { text };
}

const names = new Set<string>();

/** Declares a named statement once, at module load; two statements never share a name. */
export function statement(name: string, text: string): Statement {
  if (names.has(name)) throw new Error(`statement ${name} is declared twice`);
  names.add(name);
  return { name, text };
}

/** The `pg` pool under a TypeORM data source (the same connections, limits and timeouts). */
export function poolOf(ds: DataSource): Pool {
  return (ds.driver as PostgresDriver).master as Pool;
}

/** Something that runs a query: the pool (autocommit) or a client (inside a transaction). */
export type Queryable = Pool | ClientBase;

/**
 * Runs a statement and returns its rows, made from the row shape the statement keeps between
 * executions (src/database/shaped-query.ts).
 */
export function run<R extends QueryResultRow = Record<string, unknown>>(
  on: Queryable,
  st: Statement,
  values: readonly unknown[],
): Promise<R[]> {
  let slot = shapes.get(st);
  if (slot === undefined) shapes.set(st, (slot = {}));
  const query = new ShapedQuery(
    { name: st.name, text: st.text, values: values as unknown[] },
    slot,
  );
  return new Promise<R[]>((resolve, reject) => {
    (on as unknown as { query: QueryWithCallback }).query(query, (err, result) =>
      err ? reject(err) : resolve(result!.rows as R[]),
    );
  });
}

/** `query(submittable, callback)`, as both a pool and a client take it. */
type QueryWithCallback = (
  query: ShapedQuery,
  callback: (err: Error | null | undefined, result?: { rows: unknown[] }) => void,
) => void;

const shapes = new WeakMap<Statement, ShapeSlot>();

/**
 * The connection of a TypeORM transaction (`dataSource.transaction(m => …)`), so a plain
 * statement joins the transaction the rest of the write path runs in.
 */
export async function clientOf(m: EntityManager): Promise<PoolClient> {
  const runner = m.queryRunner;
  if (!runner) throw new Error('clientOf: the entity manager is not inside a transaction');
  return (await runner.connect()) as PoolClient;
}

/**
 * Rows of parameters as one array per parameter (row i's parameter n is element i of array n),
 * each written as its PostgreSQL array literal (arrayLiteral): the parameters of a statement that
 * reads several rows through `unnest($n::type[])`.
 */
export function byColumn(rows: readonly (readonly unknown[])[]): string[] {
  return rows[0].map((_, i) => arrayLiteral(rows.map((r) => r[i])));
}

/**
 * A one-dimensional array parameter as its PostgreSQL literal, the text `pg` would send for it
 * (its utils' arrayString), made in one pass: each element quoted, `\` and `"` escaped by one
 * replacement instead of two, a Date as its ISO instant (`pg` writes the same instant in the
 * process's local offset, a time-zone look-up per element). Under the create benchmark pg's own
 * took 10 µs of each create, in the batched claim's 26 arrays.
 */
export function arrayLiteral(values: readonly unknown[]): string {
  let text = '{';
  for (let i = 0; i < values.length; i++) text += (i > 0 ? ',' : '') + arrayElement(values[i]);
  return `${text}}`;
}

const NEEDS_ESCAPE = /[\\"]/;
const BACKSLASH = /\\/g;
const QUOTE = /"/g;

function arrayElement(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  let text: string;
  switch (typeof value) {
    case 'string':
      text = value;
      break;
    case 'number':
    case 'bigint':
    case 'boolean':
      text = String(value);
      break;
    default:
      if (!(value instanceof Date))
        // A nested array, a buffer or an object: no batch statement sends one.
        throw new Error(
          `arrayLiteral: no array element of type ${Object.prototype.toString.call(value)}`,
        );
      if (Number.isNaN(value.getTime())) throw new Error('arrayLiteral: an invalid Date');
      text = value.toISOString();
  }
  // Most elements have nothing to escape: found by one search, not rebuilt by a replacement.
  if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
  return `"${text.replace(BACKSLASH, '\\\\').replace(QUOTE, '\\"')}"`;
}

/** A jsonb parameter: written as JSON text, so an array is never taken for a PostgreSQL array. */
export function jsonb(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/**
 * Rows of one entity's table into entity objects, as TypeORM hydrates them (the entity's
 * constructor, then each column's driver conversion and transformer), without its query builder.
 * Columns missing from the row stay undefined.
 *
 * The constructor matters for speed: it defines every declared field, so the object keeps V8's
 * fast properties. Built from `Object.create(prototype)` instead, the 50-odd properties set by a
 * computed name turned it into a dictionary after the twelfth, and every later read, copy and
 * spread of the row paid a hash lookup per field (`test/invoices/view-read.e2e-spec.ts` holds it).
 */
export class RowMapper<T extends ObjectLiteral> {
  private readonly columns: ReadonlyArray<{
    databaseName: string;
    propertyName: string;
    hydrate: (raw: unknown) => unknown;
  }>;
  private readonly make: new () => object;

  constructor(ds: DataSource, target: EntityTarget<T>) {
    const meta = ds.getMetadata(target);
    const driver = ds.driver as PostgresDriver;
    this.columns = meta.columns.map((c) => ({
      databaseName: c.databaseName,
      propertyName: c.propertyName,
      hydrate: hydratorOf(driver, c),
    }));
    this.make = meta.target as new () => object;
  }

  map(row: Record<string, unknown>): T {
    const entity = new this.make() as Record<string, unknown>;
    for (const c of this.columns) {
      const raw = row[c.databaseName];
      if (raw === undefined) continue;
      entity[c.propertyName] = c.hydrate(raw);
    }
    return entity as T;
  }
}

/**
 * The column types whose values TypeORM's Postgres driver hands on as pg parsed them (text,
 * numbers, uuids, jsonb, numeric as text, booleans; a timestamp only made a Date if it is text):
 * for these, hydrating is that and the column's transformer. Any other type goes through the
 * driver's prepareHydratedValue, which walks its list of special types for every value (a test
 * holds the two equal for every column of every entity).
 */
const AS_PARSED: ReadonlySet<string> = new Set([
  'varchar',
  'character varying',
  'text',
  'char',
  'character',
  'uuid',
  'int',
  'integer',
  'int4',
  'smallint',
  'bigint',
  'int8',
  'numeric',
  'decimal',
  'jsonb',
  'json',
  'boolean',
  'bool',
  'timestamptz',
  'timestamp with time zone',
]);

/** One column's raw value into its entity value, as prepareHydratedValue makes it. */
function hydratorOf(driver: PostgresDriver, c: ColumnMetadata): (raw: unknown) => unknown {
  const type = typeof c.type === 'string' ? c.type : null;
  if (type === null || !AS_PARSED.has(type) || c.isArray || Array.isArray(c.transformer))
    return (raw) => driver.prepareHydratedValue(raw, c);
  const transformer = c.transformer;
  const date = type === 'timestamptz' || type === 'timestamp with time zone';
  // A timestamp pg left as text becomes a Date, as DateUtils.normalizeHydratedDate makes it.
  const plain = (raw: unknown): unknown =>
    date && typeof raw === 'string' && raw !== '' ? new Date(raw) : raw;
  if (!transformer) return plain;
  return (raw) => transformer.from(plain(raw));
}

const mappers = new WeakMap<
  DataSource,
  Map<EntityTarget<ObjectLiteral>, RowMapper<ObjectLiteral>>
>();

/** A plain row of `target`'s table (SELECT * or RETURNING *) as the entity; one mapper per data source. */
export function entityFromRow<T extends ObjectLiteral>(
  ds: DataSource,
  target: EntityTarget<T>,
  row: Record<string, unknown>,
): T {
  let perSource = mappers.get(ds);
  if (!perSource) mappers.set(ds, (perSource = new Map()));
  let mapper = perSource.get(target as EntityTarget<ObjectLiteral>);
  if (!mapper) {
    mapper = new RowMapper<ObjectLiteral>(ds, target as EntityTarget<ObjectLiteral>);
    perSource.set(target as EntityTarget<ObjectLiteral>, mapper);
  }
  return mapper.map(row) as T;
}
