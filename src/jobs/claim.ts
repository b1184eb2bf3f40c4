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
  return (await claimDueTimed(dataSource, opts)).map((r) => r.id);
}

export interface ClaimedRow {
  id: string;
  /** Seconds between the row's due time and this claim (what `payout_poll_lateness_seconds` observes). */
  lateS: number;
}

/** `claimDue`, also telling how late each row was claimed. */
export async function claimDueTimed(
  dataSource: DataSource,
  opts: ClaimOptions,
): Promise<ClaimedRow[]> {
  const params: unknown[] = [opts.limit, opts.leaseSeconds, opts.shopId];
  if (opts.owner !== undefined) params.push(opts.owner);
  const rows = (await dataSource.query(claimSql(opts), params)) as
    [Array<{ id: string; late_s: number }>, number] | Array<{ id: string; late_s: number }>;
  // The pg driver returns [rows, count] for UPDATE ... RETURNING through TypeORM.
  const list = Array.isArray(rows[0])
    ? (rows[0] as Array<{ id: string; late_s: number }>)
    : (rows as Array<{ id: string; late_s: number }>);
  return list.map((r) => ({ id: r.id, lateS: r.late_s }));
}

/**
 * The claim statement (table and column names come from the fixed options above, never from
 * input); exported so a test can EXPLAIN exactly what runs.
 */
export function claimSql(opts: ClaimOptions): string {
  const ownerSet = opts.owner !== undefined ? ', lease_owner = $4' : '';
  return `UPDATE ${opts.table} SET lease_until = now() + make_interval(secs => $2)${ownerSet}
      WHERE id IN (
        SELECT id FROM ${opts.table}
         WHERE shop_id = $3 AND ${opts.dueColumn} <= now()
           AND (lease_until IS NULL OR lease_until < now())
         ORDER BY ${opts.dueColumn}
         LIMIT $1
         FOR UPDATE SKIP LOCKED)
      RETURNING id, GREATEST(0, EXTRACT(EPOCH FROM now() - ${opts.dueColumn}))::float8 AS late_s`;
}

/** Runs `fn` over `items` with at most `concurrency` in flight. */
export async function forEachBounded<T>(
  items: T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++];
      await fn(item);
    }
  });
  await Promise.all(workers);
}
