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
    logging: ['error'],
    extra: { max: 20, application_name: 'piastrix-orchestrator' },
  };
}
