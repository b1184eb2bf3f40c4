import { DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

/** The one data-source definition, shared by the app (TypeOrmModule) and the CLI (ormconfig.ts). */
export function dataSourceOptions(url: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    uuidExtension: 'pgcrypto',
    migrationsRun: false,
    synchronize: false,
    // TypeORM's own error log prints failing queries with their parameters; errors surface as
    // exceptions and are logged, redacted, by the problem filter and the jobs instead.
    logging: false,
    extra: { max: 20, application_name: 'piastrix-orchestrator' },
  };
}
