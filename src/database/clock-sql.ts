import type { DataSource } from 'typeorm';

/**
 * How SQL reads the service's clock (src/common/clock.ts): every time-driven statement says
 * `clock_now()`, never `now()`. The function is `SELECT now()` (inlined by the planner: no cost
 * outside sandbox mode), and in sandbox mode `SELECT now() + <offset>`, rewritten by the sandbox
 * clock in the same transaction as the stored offset. The offset is a constant of the function's
 * text, not a read of a table, so a statement costs the same with the clock moved or not, and
 * every connection of every instance sees the new time from the commit on.
 */
export function clockFunctionSql(offsetSeconds: number): string {
  const body =
    offsetSeconds === 0 ? 'SELECT now()' : `SELECT now() + make_interval(secs => ${Number(offsetSeconds)})`;
  return `CREATE OR REPLACE FUNCTION clock_now() RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $clock$${body}$clock$`;
}

/** The offset a previous sandbox run left (0 when the clock never moved). */
export async function storedClockOffset(ds: DataSource): Promise<number> {
  const rows = (await ds.query(`SELECT offset_seconds FROM service_clock WHERE id`)) as Array<{ offset_seconds: number }>;
  return rows.length === 0 ? 0 : Number(rows[0].offset_seconds);
}

/** Stores the offset and rewrites `clock_now()` with it, in one transaction. */
export async function storeClockOffset(ds: DataSource, offsetSeconds: number): Promise<void> {
  if (!Number.isFinite(offsetSeconds) || offsetSeconds < 0) throw new Error('clock offset must be a finite number ≥ 0');
  await ds.transaction(async (m) => {
    await m.query(
      `INSERT INTO service_clock (id, offset_seconds) VALUES (true, $1)
       ON CONFLICT (id) DO UPDATE SET offset_seconds = EXCLUDED.offset_seconds`,
      [offsetSeconds],
    );
    await m.query(clockFunctionSql(offsetSeconds));
  });
}
