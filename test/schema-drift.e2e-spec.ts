import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source';
import { runMigrations } from '../src/database/migrate';
import { createTestDatabase } from './support/database';

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

it('has nothing to change between the migrated database and the entities', async () => {
  const { upQueries } = await ds.driver.createSchemaBuilder().log();
  expect(upQueries.map((q) => q.query)).toEqual([]);
});
