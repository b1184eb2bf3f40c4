import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { KeyRing } from '../common/key-ring';
import { ConfigError, loadConfig } from '../config/config';
import { dataSourceOptions } from '../database/data-source';
import { resealAll } from './reseal';

/**
 * `npm run keys:rotate`: re-seals every secret kept at rest under the first key of
 * DATA_ENCRYPTION_KEYS. Run it with the service's own settings, while the service runs; stop it
 * and start it again at any time. Exit code 0 once nothing is left under another key.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  if (config.databaseUrl === undefined)
    throw new ConfigError('DATABASE_URL', 'is required for keys:rotate');
  const batch = Number(process.env.KEYS_ROTATE_BATCH ?? '500');
  if (!Number.isInteger(batch) || batch < 1)
    throw new ConfigError('KEYS_ROTATE_BATCH', 'must be a whole number above 0');
  const keys = new KeyRing(config.dataEncryptionKeys);
  const ds = new DataSource({ ...dataSourceOptions(config.databaseUrl), extra: { max: 2 } });
  await ds.initialize();
  try {
    console.log(`Re-sealing under key "${keys.primaryId}" (batches of ${batch})`);
    const report = await resealAll(ds, keys, {
      // GATEWAY_SECRET_KEY: the payment shop, the one shop of the versions that derived keys from it.
      legacySecret: config.gateway.shops.payment.secretKey,
      batchSize: batch,
      onBatch: (column, n) => console.log(`  ${column}: ${n} re-sealed`),
    });
    for (const [column, n] of Object.entries(report.resealed)) console.log(`${column}: ${n}`);
    for (const f of report.failed)
      console.error(`cannot open ${f.column} of row ${f.id}: ${f.reason}`);
    if (report.remaining > 0) {
      console.error(
        `${report.remaining} value(s) not under "${keys.primaryId}" yet: run keys:rotate again`,
      );
      process.exitCode = 1;
    } else {
      console.log(
        `Done: every value is sealed under "${keys.primaryId}"; older keys may be dropped.`,
      );
    }
  } finally {
    await ds.destroy();
  }
}

main().catch((e: unknown) => {
  console.error(
    e instanceof ConfigError ? e.message : `keys:rotate failed: ${(e as Error).message}`,
  );
  process.exit(1);
});
