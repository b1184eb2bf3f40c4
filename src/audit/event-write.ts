import { createHash } from 'node:crypto';
import type { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { actingKeyOf, traceParentOf } from '../common/actor';
import type { RowScope } from './shop-event-snapshots';
import { BatchedWrite } from '../common/batched-write';
import type { Pool, PoolClient } from 'pg';
import { JsonText } from '../common/json-text';
import { arrayLiteral, clientOf, planEachTime, poolOf, run, type Statement } from '../common/sql';
import type { AuditCause, AuditEntityType } from './audit-event.entity';

/**
 * One round trip for a status change: the object's row UPDATE and its audit entry /
 * shop event INSERT (with the object's next sequence) in one statement, a CTE, inside the
 * caller's transaction (which holds the row lock, as for AuditService.record). The statement
 * is built once per table and set of columns, and prepared by name on each connection; the
 * statement for a batch of such changes is planned at each execution (changesStatement).
 */

interface ColumnWrite {
  /** SQL for the parameter, with its cast. */
  param: (n: number) => string;
  databaseName: string;
  toDb: (value: unknown) => unknown;
  /** The value as JSON for jsonb_populate_record (a batch's row): jsonb columns as they are. */
  toJson: (value: unknown) => unknown;
  jsonb: boolean;
}

const built = new Map<string, Statement>();
const columnCache = new WeakMap<DataSource, Map<unknown, Map<string, ColumnWrite>>>();

function columnsOf(ds: DataSource, target: EntityTarget<ObjectLiteral>): Map<string, ColumnWrite> {
  let perSource = columnCache.get(ds);
  if (!perSource) columnCache.set(ds, (perSource = new Map()));
  let cols = perSource.get(target);
  if (cols) return cols;
  cols = new Map();
  for (const c of ds.getMetadata(target).columns) cols.set(c.propertyName, columnWrite(c));
  perSource.set(target, cols);
  return cols;
}

function columnWrite(c: ColumnMetadata): ColumnWrite {
  const type = typeof c.type === 'string' ? c.type : '';
  const cast = type === 'jsonb' ? '::jsonb' : type === 'numeric' ? '::numeric' : '';
  const transformer = Array.isArray(c.transformer) ? undefined : c.transformer;
  return {
    databaseName: c.databaseName,
    param: (n) => `$${n}${cast}`,
    toDb: (value) => {
      const v = transformer ? transformer.to(value) : value;
      if (type === 'jsonb')
        return v === null || v === undefined
          ? null
          : v instanceof JsonText
            ? v.text
            : JSON.stringify(v);
      return v;
    },
    toJson: (value) => {
      const v: unknown = transformer ? transformer.to(value) : value;
      return v === undefined ? null : v;
    },
    jsonb: type === 'jsonb',
  };
}

/**
 * The row was not the version the write was conditional on (RowChangeWithEvent.version): nothing
 * was written; the caller goes the locked way.
 */
export class RowChanged extends Error {
  constructor(table: string, rowId: string) {
    super(`${table} row ${rowId} changed since it was read`);
  }
}

export interface RowChangeWithEvent {
  table: 'invoices' | 'refunds' | 'payouts';
  target: EntityTarget<ObjectLiteral>;
  /** The row's primary key. */
  rowId: string;
  /**
   * Write only if the row is still this version (its `xmin` as read, outside any lock); else
   * RowChanged. For a write that did not lock the row first (a create's answer).
   */
  version?: string;
  /** Property names (of the entity) and their new values; written as the entity's columns. */
  changes: Record<string, unknown>;
  /**
   * The columns of the written row to return (database names; the primary key is always there):
   * only what the caller reads, since every column returned is parsed and hydrated.
   * Absent: every column.
   */
  returning?: readonly string[];
  event: {
    entityType: AuditEntityType;
    entityId: string;
    fromStatus: string | null;
    toStatus: string;
    cause: AuditCause;
    details: Record<string, unknown>;
    /** The shop event's type, or null for an audit entry alone. */
    type: string | null;
    /** The object's view as committed (the shop event's data). */
    data: Record<string, unknown> | null;
    /**
     * The property of `changes` (a jsonb column: a create's stored answer) whose value is `data`
     * as JSON: the event's data is then written from that column's value instead of being
     * serialised a second time.
     */
    dataIs?: string;
  };
}

/**
 * Writes the row's changes and its event in one statement; returns the event's id and the row as
 * the statement left it (the `returning` columns), so the caller can tell whether the view it
 * wrote into the event is the row's.
 */
export async function updateWithEvent(
  m: EntityManager,
  w: RowChangeWithEvent,
): Promise<{ eventId: string; row: Record<string, unknown> }> {
  const cols = columnsOf(m.connection, w.target);
  const props = Object.keys(w.changes).filter((p) => w.changes[p] !== undefined);
  const set: ColumnWrite[] = [];
  for (const p of props) {
    const col = cols.get(p);
    if (!col) throw new Error(`updateWithEvent: ${w.table} has no column for ${p}`);
    set.push(col);
  }
  const dataAt = dataColumnOf(w, props, set);
  const returning = returningOf(w);
  // The statement's identity: the table, the columns set in order (their parameters and casts
  // follow from them), the version guard and the columns returned.
  const guarded = w.version !== undefined;
  let names = '';
  for (const c of set) names += `${c.databaseName},`;
  const key = `${w.table}:${names}${guarded ? ':xmin' : ''}:${returning}`;
  const st = built.get(key) ?? singleStatement(w.table, set, guarded, returning, key);
  const keyId = actingKeyOf(m);
  const traceParent = traceParentOf(m);
  // The single-row statement's parameters, built only when that statement is sent: a batched
  // change goes as its row's JSON instead, so a batched create's answer is serialised once.
  const values = (): unknown[] => {
    const out: unknown[] = [w.rowId];
    for (let i = 0; i < set.length; i++) out.push(set[i].toDb(w.changes[props[i]]));
    const dataText = dataAt >= 0 ? out[1 + dataAt] : undefined;
    if (guarded) out.push(w.version);
    out.push(
      w.event.entityType,
      w.event.entityId,
      w.event.fromStatus,
      w.event.toStatus,
      w.event.cause,
      JSON.stringify(w.event.details),
      w.event.type,
      w.event.data === null ? null : (dataText ?? JSON.stringify(w.event.data)),
      keyId,
      traceParent,
    );
    return out;
  };
  let rows: Record<string, unknown>[];
  const queued = (): QueuedChange => ({
    values,
    ...batchRow(w, set, props, keyId, traceParent, dataAt),
  });
  const shape = { ds: m.connection, w, key, single: st, returning };
  if (guarded && !m.queryRunner) {
    // A conditional write outside a transaction (a create's answer): the turn's share a statement.
    const on = { owner: m.connection, pool: poolOf(m.connection) };
    rows = await batcherFor(on, shape, set).write(queued());
  } else if (m.queryRunner && batchingTransactions.has(m.queryRunner)) {
    // A transaction that applies several objects at once (batchChangesIn): its changes of one
    // turn share a statement.
    const client = await clientOf(m);
    rows = await batcherFor({ owner: client, client }, shape, set).write(queued());
  } else if (m.queryRunner) {
    rows = await runScoped(await clientOf(m), st, values(), { table: w.table, rowId: w.rowId });
  } else {
    rows = await run(poolOf(m.connection), st, values());
  }
  if (rows.length !== 1) {
    if (guarded) throw new RowChanged(w.table, w.rowId);
    throw new Error(`updateWithEvent: no ${w.table} row ${w.rowId}`);
  }
  const { event_id__: eventId, ...row } = rows[0];
  return { eventId: eventId as string, row };
}

/** The written row's columns a change returns (`RowChangeWithEvent.returning`), as SQL. */
function returningOf(w: RowChangeWithEvent): string {
  if (w.returning === undefined) return 'u.*';
  // Callers pass a few constant lists: each one's SQL is made once.
  let text = returningTexts.get(w.returning);
  if (text === undefined) {
    text = ['id', ...w.returning.filter((c) => c !== 'id')].map((c) => `u.${c}`).join(', ');
    returningTexts.set(w.returning, text);
  }
  return text;
}
const returningTexts = new WeakMap<readonly string[], string>();

/** `returning` for a change whose caller reads nothing of the row back (its id comes alone). */
export const ID_ONLY: readonly string[] = Object.freeze([]);

/**
 * The statement a batch of changes shaped like `w` is written with, and its parameters for
 * `changes` (each `{ rowId, version, changes, event }` as `w`'s own): what the batcher sends,
 * for the test of its plan.
 */
export function batchStatementFor(
  ds: DataSource,
  w: RowChangeWithEvent,
  rows: readonly RowChangeWithEvent[],
): { statement: Statement; values: unknown[] } {
  const cols = columnsOf(ds, w.target);
  const props = Object.keys(w.changes).filter((p) => w.changes[p] !== undefined);
  const set = props.map((p) => cols.get(p)!);
  return {
    statement: changesStatement(ds, w, set, returningOf(w)),
    values: batchValues(
      rows.map((r) => batchRow(r, set, props, null, null, dataColumnOf(r, props, set))),
    ),
  };
}

/**
 * changesStatement's parameters for these rows (batchRow): the rows as one JSON array, each
 * column whose JSON is made already (JsonText: a create's stored answer) put in its row's
 * `set__` as that text rather than serialised again; and the rows' ids.
 */
function batchValues(rows: readonly BatchRow[]): unknown[] {
  let json = '[';
  for (let i = 0; i < rows.length; i++) {
    const { row, raw } = rows[i];
    if (raw.length === 0) {
      json += (i > 0 ? ',' : '') + JSON.stringify(row);
      continue;
    }
    // The row's keys in its order, set__ closed after its made columns: only whole JSON values
    // are joined, never a search in the text.
    let set = JSON.stringify(row.set__).slice(0, -1);
    for (const [name, text] of raw)
      set += `${set.length > 1 ? ',' : ''}${JSON.stringify(name)}:${text}`;
    const version =
      row.version__ === undefined ? '' : `,"version__":${JSON.stringify(row.version__)}`;
    json += `${i > 0 ? ',' : ''}{"id__":${JSON.stringify(row.id__)}${version},"set__":${set}},"ev__":${JSON.stringify(row.ev__)}}`;
  }
  return [`${json}]`, arrayLiteral(rows.map((r) => r.row.id__))];
}

/**
 * The index in `set` of the column the event's data is (RowChangeWithEvent.event.dataIs), or -1
 * when the data is serialised on its own.
 */
function dataColumnOf(
  w: RowChangeWithEvent,
  props: readonly string[],
  set: readonly ColumnWrite[],
): number {
  const name = w.event.dataIs;
  if (name === undefined || w.event.data === null) return -1;
  const at = props.indexOf(name);
  if (at < 0 || !set[at].jsonb || w.changes[name] === null)
    throw new Error(
      `updateWithEvent: the event's data is no jsonb value set on ${w.table}: ${name}`,
    );
  return at;
}

/**
 * One change as an element of the batch statement's JSON array (changesStatement's `$1`). An
 * event whose data is a column set here (`dataAt`, see dataColumnOf) names that column instead of
 * carrying the same JSON again.
 */
function batchRow(
  w: RowChangeWithEvent,
  set: readonly ColumnWrite[],
  props: readonly string[],
  keyId: string | null,
  traceParent: string | null,
  dataAt: number,
): BatchRow {
  const columns: Record<string, unknown> = {};
  const raw: Array<[string, string]> = [];
  for (let i = 0; i < set.length; i++) {
    const value = w.changes[props[i]];
    if (set[i].jsonb && value instanceof JsonText) raw.push([set[i].databaseName, value.text]);
    else columns[set[i].databaseName] = set[i].toJson(value);
  }
  const row = {
    id__: w.rowId,
    version__: w.version,
    set__: columns,
    ev__: {
      ...w.event,
      details: w.event.details,
      data: dataAt >= 0 ? undefined : (w.event.data ?? undefined),
      dataIs: undefined,
      dataFrom__: dataAt >= 0 ? set[dataAt].databaseName : undefined,
      keyId,
      traceParent: traceParent ?? undefined,
    },
  };
  return { row, raw };
}

/**
 * One change as an element of the batch statement's JSON array: `row` as JSON.stringify writes
 * it, and `raw` the columns of its `set__` whose JSON text is made already (JsonText).
 */
interface BatchRow {
  row: {
    id__: string;
    version__?: string;
    set__: Record<string, unknown>;
    ev__: Record<string, unknown>;
  };
  raw: Array<[string, string]>;
}

/**
 * updateWithEvent's single-row statement for one shape: `$1` the row's id, then one parameter
 * per column set, the version when guarded, then the event's ten. Built once per shape (`key`).
 */
function singleStatement(
  table: RowChangeWithEvent['table'],
  set: readonly ColumnWrite[],
  guarded: boolean,
  returning: string,
  key: string,
): Statement {
  const sets = set.map((c, i) => `${c.databaseName} = ${c.param(i + 2)}`);
  const guard = guarded ? ` AND xmin = $${set.length + 2}::text::xid` : '';
  const base = set.length + 1 + (guarded ? 1 : 0);
  const text = `WITH u AS (UPDATE ${table} SET ${sets.join(', ')} WHERE id = $1${guard} RETURNING *),
      e AS (INSERT INTO events (entity_type, entity_id, from_status, to_status, cause, details, type, data, key_id, trace_parent, sequence)
      SELECT $${base + 1}::varchar, $${base + 2}::varchar, $${base + 3}, $${base + 4}, $${base + 5}, $${base + 6}::jsonb,
             $${base + 7}::varchar, $${base + 8}::jsonb, $${base + 9}, $${base + 10},
             CASE WHEN $${base + 7}::varchar IS NULL THEN NULL ELSE
               (SELECT COALESCE(MAX(e.sequence), 0) + 1 FROM events e
                 WHERE e.entity_type = $${base + 1}::varchar AND e.entity_id = $${base + 2}::varchar AND e.sequence IS NOT NULL)
             END
        FROM u
      RETURNING id)
      SELECT e.id AS event_id__, ${returning} FROM e, u`;
  const st = { name: `upd_evt_${createHash('sha1').update(key).digest('hex').slice(0, 16)}`, text };
  built.set(key, st);
  return st;
}

/** One conditional row change with its event, queued for a batch (updateWithEvent's values too). */
interface QueuedChange extends BatchRow {
  /** The single-row statement's parameters (built when it is sent alone). */
  values: () => unknown[];
}

type ChangeBatcher = BatchedWrite<QueuedChange, Record<string, unknown>[]>;

/** Per data source (autocommit changes) or per connection (a batching transaction's). */
const batchers = new WeakMap<object, Map<string, ChangeBatcher>>();

/** Transactions whose changes of one turn share a statement (batchChangesIn). */
const batchingTransactions = new WeakSet<object>();

/**
 * In this transaction, status changes with their events (updateWithEvent) asked for in the same
 * turn go as one statement: for a caller that applies several objects concurrently in one
 * transaction (a batch of notifications). A failed batch statement fails the transaction, so
 * each of its callers gets the error (nothing is retried inside an aborted transaction).
 */
export function batchChangesIn(m: EntityManager): void {
  if (!m.queryRunner) throw new Error('batchChangesIn: not inside a transaction');
  batchingTransactions.add(m.queryRunner);
}

/**
 * A statement that changes the rows `scope` names only: the shop events' before-commit check
 * (ShopEventSnapshots) then knows other rows' events of the transaction stay current.
 */
async function runScoped(
  client: PoolClient,
  st: Statement,
  values: unknown[],
  scope: RowScope | RowScope[],
): Promise<Record<string, unknown>[]> {
  const config = { name: st.name, text: st.text, values, rowScope: scope };
  return (await client.query<Record<string, unknown>>(config)).rows;
}

/**
 * The batcher of one statement shape (table, columns set, guard, columns returned) on `owner`
 * (a data source: autocommit; a transaction's connection): the changes of one turn go as one
 * statement (BatchedWrite); one alone goes as the single-row statement. A row the batch did not
 * change (its version moved) gets no row back, as alone, and its caller gets RowChanged.
 * Autocommit: a batch PostgreSQL refused is written again row by row; in a transaction, never.
 */
function batcherFor(
  on: { owner: DataSource; pool: Pool } | { owner: PoolClient; client: PoolClient },
  shape: {
    ds: DataSource;
    w: RowChangeWithEvent;
    key: string;
    single: Statement;
    returning: string;
  },
  set: readonly ColumnWrite[],
): ChangeBatcher {
  const { ds, w, key, single, returning } = shape;
  let perOwner = batchers.get(on.owner);
  if (!perOwner) batchers.set(on.owner, (perOwner = new Map()));
  let batcher = perOwner.get(key);
  if (batcher) return batcher;
  const inTransaction = 'client' in on;
  const many = changesStatement(ds, w, set, returning);
  const scopeOf = (c: QueuedChange): RowScope => ({ table: w.table, rowId: c.row.id__ as string });
  batcher = new BatchedWrite<QueuedChange, Record<string, unknown>[]>({
    name: inTransaction ? 'status_change_in_transaction' : 'status_change',
    key: (c) => c.row.id__ as string,
    one: (c) =>
      'client' in on
        ? runScoped(on.client, single, c.values(), scopeOf(c))
        : run(on.pool, single, c.values()),
    many: async (changes) => {
      const values = batchValues(changes);
      const rows =
        'client' in on
          ? await runScoped(on.client, many, values, changes.map(scopeOf))
          : await run(on.pool, many, values);
      const byId = new Map<string, Record<string, unknown>>();
      for (const { row_id__: id, ...row } of rows) byId.set(id as string, row);
      return changes.map((c) => {
        const row = byId.get(c.row.id__ as string);
        return row ? [row] : [];
      });
    },
    ...(inTransaction ? { aloneAfter: () => false } : {}),
  });
  perOwner.set(key, batcher);
  return batcher;
}

/**
 * updateWithEvent's statement for several rows: each element of the JSON array `$1` is one row's
 * id, version, new column values (read as the table's row type, so each takes its column's type)
 * and event (its data, or `dataFrom__`: the column set whose value it is); `$2` the same ids as an
 * array (the rows are found by their index: planEachTime).
 * Each event's id is drawn first, so each row is returned with its own event's id.
 */
function changesStatement(
  ds: DataSource,
  w: RowChangeWithEvent,
  set: readonly ColumnWrite[],
  returning: string,
): Statement {
  const idType = ds.getMetadata(w.target).primaryColumns[0].type;
  const idSql = typeof idType === 'string' ? idType : 'bigint';
  const id = `v.id__::${idSql}`;
  const idArray = `${idSql}[]`;
  const ev = (f: string) => `v.ev__->>'${f}'`;
  const text = `WITH v AS MATERIALIZED (
      SELECT x->>'id__' AS id__, x->>'version__' AS version__, x->'ev__' AS ev__, x->'set__' AS set__,
             nextval(pg_get_serial_sequence('events', 'id')) AS ev_id__,
             jsonb_populate_record(NULL::${w.table}, x->'set__') AS r
        FROM jsonb_array_elements($1::jsonb) AS x),
    u AS (UPDATE ${w.table} t SET ${set.map((c) => `${c.databaseName} = (v.r).${c.databaseName}`).join(', ')}
        FROM v WHERE t.id = ANY($2::${idArray}) AND t.id = ${id}${w.version !== undefined ? ' AND t.xmin = v.version__::xid' : ''}
      RETURNING t.*),
    e AS (INSERT INTO events (id, entity_type, entity_id, from_status, to_status, cause, details, type, data, key_id, trace_parent, sequence)
      SELECT v.ev_id__, ${ev('entityType')}, ${ev('entityId')}, ${ev('fromStatus')}, ${ev('toStatus')},
             ${ev('cause')}, v.ev__->'details', ${ev('type')},
             COALESCE(v.ev__->'data', v.set__->(${ev('dataFrom__')})), ${ev('keyId')}, ${ev('traceParent')},
             CASE WHEN ${ev('type')} IS NULL THEN NULL ELSE
               (SELECT COALESCE(MAX(s.sequence), 0) + 1 FROM events s
                 WHERE s.entity_type = ${ev('entityType')} AND s.entity_id = ${ev('entityId')} AND s.sequence IS NOT NULL)
             END
        FROM v JOIN u ON u.id = ${id}
      RETURNING id)
    SELECT v.id__ AS row_id__, e.id AS event_id__, ${returning}
      FROM v JOIN u ON u.id = ${id} JOIN e ON e.id = v.ev_id__`;
  // Planned at each execution, the batch's ids ($2) counted: see planEachTime.
  return planEachTime(text);
}
