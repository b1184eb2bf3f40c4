import type { DataSource, EntityManager } from 'typeorm';
import type { EntryKind, Posting } from './ledger.chart';

/** The ledger's SQL: posting an entry, balances, entries. */

type Querier = Pick<DataSource | EntityManager, 'query'>;

/**
 * An entry's postings, read from its row (`e`): its legs in order, as `p`. The view
 * `ledger_postings` is the same for ad-hoc SQL; the service reads the legs without its join.
 */
export const LEGS = `CROSS JOIN LATERAL unnest(e.legs) WITH ORDINALITY AS p(account, currency, amount, leg)`;

/** An entry's postings as JSON, in their order, amounts as written. */
const POSTINGS_JSON = `(SELECT json_agg(json_build_object('account', x.account, 'currency', x.currency, 'amount', x.amount::text) ORDER BY x.leg)
           FROM unnest(e.legs) WITH ORDINALITY AS x(account, currency, amount, leg))`;

/**
 * Posts one entry with its postings (its legs) in one row: the row's check refuses it unless it
 * balances per currency. The entry's id, or null when an object's entry of this kind exists.
 */
export async function postEntry(
  q: Querier,
  e: {
    kind: EntryKind;
    objectType?: string;
    objectPk?: string;
    objectId?: string;
    keyId?: string | null;
    note?: string | null;
    postings: readonly Posting[];
    /** An operator's `Idempotency-Key`: an entry of the same key (and `keyId`) posts nothing. */
    idempotencyKey?: string;
    /** When it is dated; the transaction's time when left out. */
    at?: Date;
  },
): Promise<string | null> {
  const rows = (await q.query(
    `SELECT ledger_post($1, $2, $3::uuid, $4, $5, $6, $7::jsonb, COALESCE($9::timestamptz, clock_now()), $8) AS id`,
    [
      e.kind,
      e.objectType ?? null,
      e.objectPk ?? null,
      e.objectId ?? null,
      e.keyId ?? null,
      e.note ?? null,
      JSON.stringify(e.postings),
      e.idempotencyKey ?? null,
      e.at ?? null,
    ],
  )) as { id: string | null }[];
  return rows[0]?.id ?? null;
}

/** The entry an admin key posted under an `Idempotency-Key`, if any. */
export async function entryIdByIdempotencyKey(
  q: Querier,
  keyId: string | null,
  key: string,
): Promise<string | null> {
  const rows = (await q.query(
    `SELECT id::text AS id FROM ledger_entries
      WHERE COALESCE(key_id, '') = COALESCE($1, '') AND idempotency_key = $2`,
    [keyId, key],
  )) as { id: string }[];
  return rows[0]?.id ?? null;
}

export interface BalanceRow {
  account: string;
  currency: number;
  balance: string;
}

/** Every account's balance per currency, from the postings of the entries up to `at`. */
export async function balancesAt(q: Querier, at: Date): Promise<BalanceRow[]> {
  return (await q.query(
    `SELECT p.account, p.currency, sum(p.amount)::text AS balance
       FROM ledger_entries e ${LEGS}
      WHERE e.created_at <= $1
      GROUP BY p.account, p.currency
      ORDER BY p.account, p.currency`,
    [at],
  )) as BalanceRow[];
}

export interface EntryFilter {
  /** One entry, by its id. */
  id?: string;
  objectType?: string;
  objectId?: string;
  account?: string;
  /** Entries with a posting in this currency. */
  currency?: number;
  from?: Date;
  to?: Date;
  /** Entries older than this id (the cursor). */
  beforeId?: string;
  limit: number;
}

export interface EntryRow {
  id: string;
  created_at: Date;
  kind: EntryKind;
  object_type: string | null;
  object_id: string | null;
  event_id: string | null;
  key_id: string | null;
  note: string | null;
  postings: Posting[];
}

/**
 * The event of the change that posted an object's entry: the object's first event written in the
 * entry's transaction (the same `created_at`, the transaction's time). Entries posted before
 * entries carried their legs kept the id in `event_id`.
 */
const ENTRY_EVENT = `COALESCE(ev.public_id, (SELECT x.public_id FROM events x
     WHERE e.object_pk IS NOT NULL AND x.entity_type = e.object_type AND x.entity_id = e.object_id
       AND x.type IS NOT NULL AND x.created_at = e.created_at ORDER BY x.id LIMIT 1))`;

/** Entries, newest first, with their postings; `limit + 1` rows so the caller knows of more. */
export async function listEntries(q: Querier, f: EntryFilter): Promise<EntryRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const p = (v: unknown): string => {
    params.push(v);
    return `$${params.length}`;
  };
  if (f.id !== undefined) where.push(`e.id = ${p(f.id)}::bigint`);
  if (f.objectType !== undefined) where.push(`e.object_type = ${p(f.objectType)}`);
  if (f.objectId !== undefined) where.push(`e.object_id = ${p(f.objectId)}`);
  if (f.account !== undefined) {
    where.push(`EXISTS (SELECT 1 FROM unnest(e.legs) a WHERE a.account = ${p(f.account)})`);
  }
  if (f.currency !== undefined) {
    where.push(`EXISTS (SELECT 1 FROM unnest(e.legs) c WHERE c.currency = ${p(f.currency)})`);
  }
  if (f.from !== undefined) where.push(`e.created_at >= ${p(f.from)}`);
  if (f.to !== undefined) where.push(`e.created_at < ${p(f.to)}`);
  if (f.beforeId !== undefined) where.push(`e.id < ${p(f.beforeId)}::bigint`);
  const sql = `SELECT e.id::text AS id, e.created_at, e.kind, e.object_type, e.object_id,
        ${ENTRY_EVENT} AS event_id, e.key_id, e.note,
        ${POSTINGS_JSON} AS postings
      FROM ledger_entries e LEFT JOIN events ev ON ev.id = e.event_id
      ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY e.id DESC
      LIMIT ${p(f.limit + 1)}`;
  return (await q.query(sql, params)) as EntryRow[];
}

/** Per account and currency, the sums of the postings of entries in [from, to). */
export async function postingSums(q: Querier, from: Date, to: Date): Promise<BalanceRow[]> {
  return (await q.query(
    `SELECT p.account, p.currency, sum(p.amount)::text AS balance
       FROM ledger_entries e ${LEGS}
      WHERE e.created_at >= $1 AND e.created_at < $2
      GROUP BY p.account, p.currency ORDER BY p.account, p.currency`,
    [from, to],
  )) as BalanceRow[];
}

/** Per kind and currency, the count of entries and the sum of one account's postings in [from, to). */
export async function kindSums(
  q: Querier,
  from: Date,
  to: Date,
): Promise<
  { kind: EntryKind; account: string; currency: number; count: number; amount: string }[]
> {
  return (await q.query(
    `SELECT e.kind, p.account, p.currency, count(DISTINCT e.id)::int AS count, sum(p.amount)::text AS amount
       FROM ledger_entries e ${LEGS}
      WHERE e.created_at >= $1 AND e.created_at < $2
      GROUP BY e.kind, p.account, p.currency ORDER BY e.kind, p.account, p.currency`,
    [from, to],
  )) as { kind: EntryKind; account: string; currency: number; count: number; amount: string }[];
}

/** Whether the books have been opened (the first reconciliation's `opening` entries). */
export async function hasOpening(q: Querier): Promise<boolean> {
  const rows = (await q.query(
    `SELECT 1 FROM ledger_entries WHERE kind = 'opening' LIMIT 1`,
  )) as unknown[];
  return rows.length > 0;
}

export interface PositionMismatchRow {
  object_type: string;
  object_pk: string;
  object_id: string;
  status: string | null;
  posted: Posting[];
  position: Posting[];
}

const LEGS_JSON = (column: string): string =>
  `COALESCE((SELECT json_agg(json_build_object('account', x.account, 'currency', x.currency, 'amount', x.amount::text) ORDER BY x.account, x.currency)
              FROM unnest(${column}) x), '[]'::json)`;

/**
 * Every object whose entries do not sum to the position its state implies (the database's
 * `ledger_position_mismatches`, over the same position functions the postings use), and how
 * many objects were checked.
 */
export async function positionMismatches(
  q: Querier,
): Promise<{ objects: number; mismatches: PositionMismatchRow[] }> {
  const rows = (await q.query(
    `SELECT m.object_type, m.object_pk, m.object_id, m.status, ${LEGS_JSON('m.posted')} AS posted,
            ${LEGS_JSON('m."position"')} AS "position"
       FROM ledger_position_mismatches() m`,
  )) as PositionMismatchRow[];
  const [counted] = (await q.query(
    `SELECT ((SELECT count(*) FROM invoices) + (SELECT count(*) FROM refunds) + (SELECT count(*) FROM payouts))::int AS n`,
  )) as { n: number }[];
  return { objects: counted.n, mismatches: rows };
}
