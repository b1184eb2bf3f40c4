import type { AppConfig } from './config/config';
import { shownAddress } from './common/redact';

/** The payway the banner's example invoice uses: one the built-in sandbox always offers. */
export const EXAMPLE_PAYWAY = 'card_core_payin_rub[mock_server,success_with_callback]';

/**
 * The block `npm start` ends with: where everything is and one request that works. Development
 * keys appear only when they were generated (sandbox mode: made once, kept under DATA_DIR,
 * printed at every start); configured keys are secrets and are never printed. In sandbox mode it
 * says whether the sandbox clock is moved (`clockOffsetS`, kept from an earlier run), and names
 * the sandbox settings kept from an earlier run (`keptSettings`: a latency left on would
 * otherwise look like a slow service).
 */
export function startBanner(
  config: AppConfig,
  now: Date = new Date(),
  clockOffsetS = 0,
  keptSettings: Record<string, unknown> = {},
): string {
  const base = `http://localhost:${config.port}`;
  const key = config.generatedKeys ? config.apiKeys[0] : '$API_KEY';
  const body = JSON.stringify({
    shopOrderId: `try-${now.getTime()}`,
    amount: '100.00',
    currency: 643,
    payway: EXAMPLE_PAYWAY,
    description: 'First test invoice',
  });
  const lines = [
    '',
    `Payment orchestration service is ready${config.sandboxMode ? ' (sandbox mode)' : ''}`,
    `  service:  ${base}`,
    config.docsEnabled
      ? `  API docs: ${base}/docs`
      : '  API docs: off (DOCS_ENABLED=true serves /docs)',
    `  console:  ${base}/admin`,
    config.sandboxMode
      ? `  sandbox:  http://localhost:${config.sandbox.port}/gateway/v1/`
      : `  gateway:  ${config.gateway.baseUrl}`,
    `  webhooks: ${webhookTargets(config.shopEvents.urls)}`,
  ];
  if (config.sandboxMode)
    lines.push(
      clockOffsetS > 0
        ? `  clock:    moved ${clockOffsetS} s ahead by the sandbox clock: ${new Date(now.getTime() + clockOffsetS * 1000).toISOString()} (POST http://localhost:${config.sandbox.port}/sandbox/clock/advance moves it on)`
        : `  clock:    the system clock (POST http://localhost:${config.sandbox.port}/sandbox/clock/advance {"seconds": 3600} moves it)`,
    );
  const kept = Object.entries(keptSettings);
  if (config.sandboxMode && kept.length > 0)
    lines.push(
      `  settings: kept from an earlier run: ${kept.map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')} (POST http://localhost:${config.sandbox.port}/sandbox/settings changes them)`,
    );
  if (config.generatedKeys) {
    lines.push(
      config.devApiKeysPath === undefined
        ? 'Development API keys (sandbox mode, made for this run):'
        : `Development API keys (sandbox mode, kept in ${config.devApiKeysPath}):`,
      `  shop:  ${config.apiKeys[0]}`,
      `  admin: ${config.adminApiKeys[0]}`,
    );
  }
  lines.push(
    'Create a test invoice:',
    `  curl -X POST ${base}/api/v1/invoices -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '${body}'`,
    '',
  );
  return lines.join('\n');
}

/**
 * Where shop events are POSTed, each address without its user, password, query or fragment (any
 * of which may hold a secret); none: the events are only in the feed.
 */
export function webhookTargets(urls: readonly string[]): string {
  if (urls.length === 0) return 'feed only (GET /api/v1/events; SHOP_WEBHOOK_URL sends them)';
  return urls.map(shownAddress).join(', ');
}
