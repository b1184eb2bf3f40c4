import {
  EventSubscriber,
  type EntitySubscriberInterface,
  type EntityManager,
  type QueryRunner,
  type TransactionCommitEvent,
  type TransactionRollbackEvent,
} from 'typeorm';
import { type EventObjectType, snapshotOf } from './shop-events';
import { sameJson } from '../common/same-json';

interface Pending {
  eventId: string;
  objectType: EventObjectType;
  ref: { rowId?: string; objectId: string };
  data: Record<string, unknown>;
  /**
   * The object's table, when `data` is exactly the row the event's own statement left
   * (src/audit/event-write.ts): then, if no later statement of this transaction names the table,
   * the row is unchanged (it is locked by this transaction, no trigger writes it) and the
   * before-commit read is skipped. Without it the row is always read again.
   */
  table?: 'invoices' | 'refunds';
}

/**
 * What each connection ran: a running count, the count at the last statement naming a table, and
 * for statements that declare they change one row only (`rowScope`, updateWithEvent's), the
 * count at the last one per row instead.
 */
interface Ran {
  count: number;
  lastNaming: Map<string, number>;
  lastRow: Map<string, number>;
}

/**
 * Set on a query config by a statement that changes exactly the rows it names (one, or a list for
 * a batch) and no other row of a watched table: it makes other rows' events of the transaction
 * no less current.
 */
export interface RowScope {
  table: string;
  rowId: string;
}
const ran = new WeakMap<object, Ran>();
const WATCHED_TABLES = ['invoices', 'refunds'] as const;
const NAMES = new Map(WATCHED_TABLES.map((t) => [t, new RegExp(`\\b${t}\\b`)]));

/**
 * Counts the statements a connection runs and remembers the last one naming each watched table.
 * Installed once per connection (its `query` wrapped), on the first event remembered on it.
 */
function trackStatements(client: { query: (...args: unknown[]) => unknown }): Ran {
  const known = ran.get(client);
  if (known) return known;
  const state: Ran = { count: 0, lastNaming: new Map(), lastRow: new Map() };
  ran.set(client, state);
  const query = client.query.bind(client);
  client.query = (...args: unknown[]) => {
    state.count += 1;
    const first = args[0];
    const scope = (first as { rowScope?: RowScope | RowScope[] } | null)?.rowScope;
    if (scope !== undefined) {
      for (const one of Array.isArray(scope) ? scope : [scope])
        state.lastRow.set(`${one.table}:${one.rowId}`, state.count);
      return query(...args);
    }
    const text =
      typeof first === 'string' ? first : ((first as { text?: unknown } | null)?.text ?? '');
    if (typeof text === 'string')
      for (const [table, re] of NAMES) if (re.test(text)) state.lastNaming.set(table, state.count);
    return query(...args);
  };
  return state;
}

/** The connection's statement count now (after the event's own statement), or null when untracked. */
function connectionOf(manager: EntityManager): { query: (...args: unknown[]) => unknown } | null {
  const conn = (manager.queryRunner as unknown as { databaseConnection?: unknown } | undefined)
    ?.databaseConnection;
  return conn && typeof (conn as { query?: unknown }).query === 'function'
    ? (conn as { query: (...args: unknown[]) => unknown })
    : null;
}

const seenAt = new WeakMap<Pending, number>();

/** Per open transaction: the last event of each object it wrote. */
const pending = new WeakMap<QueryRunner, Map<string, Pending>>();

/** Remembers an event so its `data` is brought up to date just before its transaction commits. */
export function rememberForCommit(manager: EntityManager, p: Pending): void {
  const qr = manager.queryRunner;
  if (!qr?.isTransactionActive) return;
  if (p.table !== undefined) {
    const conn = connectionOf(manager);
    if (conn) seenAt.set(p, trackStatements(conn).count);
  }
  const byObject = pending.get(qr) ?? new Map<string, Pending>();
  byObject.set(JSON.stringify([p.objectType, p.ref.objectId]), p);
  pending.set(qr, byObject);
}

/**
 * The write path may change the object after its event (the poller sets the next poll, a create
 * stores its answer): the last event of each object in a transaction carries the object as it is
 * committed, which is exactly what a GET returns from then on. Earlier events of the same object
 * in that transaction keep the view of their own moment.
 */
@EventSubscriber()
export class ShopEventSnapshots implements EntitySubscriberInterface {
  async beforeTransactionCommit(event: TransactionCommitEvent): Promise<void> {
    const byObject = pending.get(event.queryRunner);
    if (!byObject) return;
    const conn = connectionOf(event.manager);
    const state = conn ? ran.get(conn) : undefined;
    for (const p of byObject.values()) {
      const at = seenAt.get(p);
      // No statement of this transaction has named the table since the event was written: the
      // locked row is as the event's statement left it, and the event already carries its view.
      if (
        at !== undefined &&
        p.table !== undefined &&
        state &&
        (state.lastNaming.get(p.table) ?? 0) <= at &&
        (p.ref.rowId === undefined || (state.lastRow.get(`${p.table}:${p.ref.rowId}`) ?? 0) <= at)
      )
        continue;
      const data = await snapshotOf(event.manager, p.objectType, p.ref);
      if (sameJson(data, p.data)) continue;
      await event.manager.query(`UPDATE events SET data = $1 WHERE id = $2`, [data, p.eventId]);
      p.data = data;
    }
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    if (!event.queryRunner.isTransactionActive) pending.delete(event.queryRunner);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) pending.delete(event.queryRunner);
  }
}
