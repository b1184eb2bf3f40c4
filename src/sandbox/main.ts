import { loadConfig } from '../config/config';
import { startSandbox } from './sandbox.server';

/**
 * Standalone gateway sandbox: `npm run sandbox`. Reads SANDBOX_PORT (default 4010),
 * SANDBOX_SHOP_ID, SANDBOX_SECRET_KEY, SANDBOX_PAYOUT_SHOP_ID, SANDBOX_PAYOUT_SECRET_KEY, SANDBOX_TIME_SCALE, SANDBOX_CATALOGUE and
 * SANDBOX_NOTIFY_FORMAT; prints its base URL; stops cleanly on SIGTERM and SIGINT.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env).sandbox;
  const sandbox = await startSandbox({
    port: config.port,
    shopId: config.shopId,
    secretKey: config.secretKey,
    payoutShopId: config.payoutShopId,
    payoutSecretKey: config.payoutSecretKey,
    timeScale: config.timeScale,
    cataloguePath: config.cataloguePath,
    notifyFormat: config.notifyFormat,
  });
  console.log(
    `Gateway sandbox: ${sandbox.baseUrl} (payment shop_id ${config.shopId}, agent shop_id ${config.payoutShopId}; control API ${sandbox.origin}/sandbox)`,
  );

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping the gateway sandbox`);
    sandbox.close().then(
      () => process.exit(0),
      (e: unknown) => {
        console.error('Gateway sandbox did not stop cleanly:', e);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
