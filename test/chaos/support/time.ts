import type { World } from './world';

/**
 * Time compression for leases the environment cannot shorten: once every instance is dead, the
 * leases and call claims they held are moved into the past, as if their time had run out. Only
 * ever called while no service instance runs, so no live claim is taken away.
 */
export async function expireLeasesOfDeadInstances(world: World): Promise<void> {
  if (world.service?.alive()) throw new Error('leases are expired only while no instance runs');
  const cols = await world.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name IN ('invoices', 'refunds', 'payouts')
        AND column_name IN ('lease_until', 'call_lease_until')`,
  );
  for (const c of cols) {
    // Identifiers from the catalogue query above, never from input.
    await world.query(
      `UPDATE "${c.table_name}" SET "${c.column_name}" = now() - interval '1 second' WHERE "${c.column_name}" > now()`,
    );
  }
}
