import { DataSourceOptions } from 'typeorm';
import { ShopEventSnapshots } from '../audit/shop-event-snapshots';
import type { DbLimits } from '../config/config';
import { ENTITIES } from './entities';
import { GuardedClient } from './guarded-client';
import { MIGRATIONS } from './migrations';

/** DB_* defaults (src/config/config.ts), for the CLI which reads no other setting. */
const DEFAULT_LIMITS: DbLimits = {
  poolSize: 20,
  acquireTimeoutMs: 10_000,
  statementTimeoutMs: 45_000,
  lockTimeoutMs: 40_000,
  idleInTxTimeoutMs: 60_000,
};

/**
 * The one data-source definition, shared by the app (TypeOrmModule) and the CLI (ormconfig.ts).
 * Every session starts with time limits, so one stuck query, lock wait or abandoned transaction
 * is cut off by PostgreSQL instead of holding a connection (and the rows it locks) for good; a
 * request that cannot get a connection in time fails instead of queueing forever.
 */
export function dataSourceOptions(url: string, given: Partial<DbLimits> | number = {}): DataSourceOptions {
  // A number is a pool size alone (tools and tests that want a small pool).
  const limits: DbLimits = { ...DEFAULT_LIMITS, ...(typeof given === 'number' ? { poolSize: given } : given) };
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    subscribers: [ShopEventSnapshots],
    migrationsTableName: 'migrations',
    uuidExtension: 'pgcrypto',
    migrationsRun: false,
    synchronize: false,
    // TypeORM's own error log prints failing queries with their parameters; errors surface as
    // exceptions and are logged, redacted, by the problem filter and the jobs instead.
    logging: false,
    extra: {
      // Never an `error` event without a listener, whoever holds the connection (guarded-client.ts).
      Client: GuardedClient,
      max: limits.poolSize,
      // pg-pool applies it to opening a connection and to waiting for a free one.
      connectionTimeoutMillis: limits.acquireTimeoutMs,
      statement_timeout: limits.statementTimeoutMs,
      lock_timeout: limits.lockTimeoutMs,
      idle_in_transaction_session_timeout: limits.idleInTxTimeoutMs,
      application_name: 'piastrix-orchestrator',
    },
  };
}
