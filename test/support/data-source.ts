import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { runMigrations } from '../../src/database/migrate';
import { createTestDatabase } from './database';

/**
 * A suite's own database (createTestDatabase) under a TypeORM data source of `poolSize`
 * connections, every migration run: for the suites that read the schema or the planner directly,
 * without the app. `close` ends the connections and drops the database.
 */
export async function openMigratedDataSource(
  poolSize = 2,
): Promise<{ ds: DataSource; close(): Promise<void> }> {
  const db = await createTestDatabase();
  const ds = new DataSource(dataSourceOptions(db.url, poolSize));
  await ds.initialize();
  await runMigrations(ds);
  return {
    ds,
    close: async () => {
      await ds.destroy();
      await db.drop();
    },
  };
}
