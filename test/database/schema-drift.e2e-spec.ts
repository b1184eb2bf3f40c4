import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { runMigrations } from '../../src/database/migrate';
import { createTestDatabase } from '../support/database';

/**
 * The entities and the migrations describe one schema: on a database built by the migrations,
 * TypeORM's schema builder finds nothing to change. An entity column without its migration (or a
 * migration the entities no longer match) fails here, not in production.
 */

let database: { url: string; drop(): Promise<void> };
let ds: DataSource;

beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  ds = new DataSource(dataSourceOptions(database.url, 2));
  await ds.initialize();
  await runMigrations(ds);
});

afterAll(async () => {
  await ds?.destroy();
  await database?.drop();
});

/**
 * Columns the database alone writes and reads, which no entity maps: what each money object has
 * posted to the books (`ledger_legs`, of the database's own type `ledger_leg[]`, which TypeORM
 * cannot describe), kept by the posting triggers (migration LedgerPositions).
 */
const DATABASE_OWNED = ['invoices', 'refunds', 'payouts', 'disputes'].map(
  (t) => `ALTER TABLE "${t}" DROP COLUMN "ledger_legs"`,
);

it('has nothing to change between the migrated database and the entities', async () => {
  const { upQueries } = await ds.driver.createSchemaBuilder().log();
  const changes = upQueries.map((q) => q.query);
  // The database-owned columns are there, and nothing else differs.
  expect(changes.filter((q) => DATABASE_OWNED.includes(q)).sort()).toEqual(
    [...DATABASE_OWNED].sort(),
  );
  expect(changes.filter((q) => !DATABASE_OWNED.includes(q))).toEqual([]);
});
