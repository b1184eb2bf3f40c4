import { DataSource } from 'typeorm';

export interface ClaimOptions {
  /** Table with `id uuid`, the due column and `lease_until timestamptz`. */
  table: 'invoices' | 'refunds' | 'payouts';
  /** Column holding the next due time, e.g. `next_check_at` or `next_poll_at`. */
  dueColumn: 'next_check_at' | 'next_poll_at';
  limit: number;
  /** How long the claim holds; a crashed instance's rows are taken over after it. */
  leaseSeconds: number;
  /** Optional `lease_owner` value (payouts have the column). */
  owner?: string;
  /**
   * Only rows of this gateway shop: a row is settled with its own shop's credentials, and another
   * shop's object must never be asked about (or created again) under the configured shop.
   */
  shopId: number;
}

/**
 * Claims due rows for one instance: picks rows whose due time has come and whose lease is free
 * or expired, skipping rows another instance is claiming right now (FOR UPDATE SKIP LOCKED),
 * and leases them in the same statement. Processing a claimed row must then set its next due
 * time (or null) and clear `lease_until`. Any number of instances can call this concurrently:
 * each row goes to one of them per lease.
 */
export async function claimDue(dataSource: DataSource, opts: ClaimOptions): Promise<string[]> {
  return (await claimDueRows(dataSource, opts, [])).map((r) => r.id);
}

/**
 * A leased row as the claim returned it: its id, how late it was claimed (seconds between its
 * due time and the claim: what `payout_poll_lateness_seconds` observes), and the asked-for
 * columns by their SQL names.
 */
export type ClaimedColumns = { id: string; late_s: number } & Record<string, unknown>;

/**
 * `claimDue` that also returns `columns` of each leased row as the claim left it (e.g.
 * `xmin`, which tells a later write whether the row changed since), so the caller needs no
 * read per row. `columns` are constants of the caller's code, never input.
 */
export async function claimDueRows(
  dataSource: DataSource,
  opts: ClaimOptions,
  columns: readonly string[],
): Promise<ClaimedColumns[]> {
  const params: unknown[] = [opts.limit, opts.leaseSeconds, opts.shopId];
  if (opts.owner !== undefined) params.push(opts.owner);
  const rows = (await dataSource.query(claimSql(opts, columns), params)) as
    [ClaimedColumns[], number] | ClaimedColumns[];
  // The pg driver returns [rows, count] for UPDATE ... RETURNING through TypeORM.
  return Array.isArray(rows[0]) ? (rows[0] as ClaimedColumns[]) : (rows as ClaimedColumns[]);
}

/**
 * The claim statement (table and column names come from the fixed options above, never from
 * input); exported so a test can EXPLAIN exactly what runs.
 */
export function claimSql(opts: ClaimOptions, columns: readonly string[] = []): string {
  const ownerSet = opts.owner !== undefined ? ', lease_owner = $4' : '';
  const more = columns.map((c) => `, ${c}`).join('');
  return `UPDATE ${opts.table} SET lease_until = clock_now() + make_interval(secs => $2)${ownerSet}
      WHERE id IN (
        SELECT id FROM ${opts.table}
         WHERE shop_id = $3 AND ${opts.dueColumn} <= clock_now()
           AND (lease_until IS NULL OR lease_until < clock_now())
         ORDER BY ${opts.dueColumn}
         LIMIT $1
         FOR UPDATE SKIP LOCKED)
      RETURNING id, GREATEST(0, EXTRACT(EPOCH FROM clock_now() - ${opts.dueColumn}))::float8 AS late_s${more}`;
}

/**
 * Runs `fn` over `items` with at most `concurrency` in flight. Once `stop()` says so (the
 * application is shutting down), no further item is started; those are returned, so the caller
 * can hand their leases back at once instead of leaving them to run out.
 */
export async function forEachBounded<T>(
  items: T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
  stop: () => boolean = () => false,
): Promise<T[]> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length && !stop()) {
      const item = items[next++];
      await fn(item);
    }
  });
  await Promise.all(workers);
  return items.slice(next);
}

/**
 * Hands back the leases of claimed rows this instance will not work on after all (it is
 * stopping): another instance, or this one's successor, may claim them at once.
 */
export async function releaseLeases(
  ds: DataSource,
  table: 'invoices' | 'refunds',
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  await ds.query(`UPDATE ${table} SET lease_until = NULL WHERE id = ANY($1::uuid[])`, [ids]);
}
