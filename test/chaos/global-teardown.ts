import { rmSync } from 'node:fs';
import { readRows, tableText } from './support/results';
import type { ControlledPostgres } from './support/world';

/** Prints the chaos table (every scenario's row) and stops the suite's PostgreSQL. */
export default async function globalTeardown(): Promise<void> {
  const file = process.env.CHAOS_RESULTS;
  if (file) {
    const rows = readRows(file);
    console.log(`\nChaos suite: ${rows.length} scenarios\n${tableText(rows)}\n`);
    rmSync(file, { force: true });
  }
  const pg = (globalThis as { __CHAOS_PG__?: ControlledPostgres }).__CHAOS_PG__;
  if (pg) {
    await pg.stop();
    rmSync(pg.dir, { recursive: true, force: true });
  }
}
