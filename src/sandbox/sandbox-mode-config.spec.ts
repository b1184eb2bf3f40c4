import { loadConfig } from '../config/config';

const RING = `k1:${Buffer.alloc(32, 1).toString('base64')}`;
const PRODUCTION = {
  GATEWAY_BASE_URL: 'https://gw.example/gateway/v1/',
  GATEWAY_SHOP_ID: '7',
  GATEWAY_SECRET_KEY: 'real-gateway-secret',
  API_KEYS: 'configured-shop-key-0001',
  ADMIN_API_KEYS: 'configured-admin-key-0001',
  DATA_ENCRYPTION_KEYS: RING,
  PUBLIC_BASE_URL: 'https://payments.example.com',
};
const key = (): string => 'dev_generated_key_0123456789';

describe('settings of sandbox mode (for building against)', () => {
  it('polls payouts every 2 s in sandbox mode, every 30 s outside it, and as set when set', () => {
    expect(loadConfig({}, key).payouts.pollIntervalS).toBe(2);
    expect(loadConfig(PRODUCTION).payouts.pollIntervalS).toBe(30);
    expect(loadConfig({ PAYOUT_POLL_INTERVAL_S: '45' }, key).payouts.pollIntervalS).toBe(45);
    expect(loadConfig({ ...PRODUCTION, PAYOUT_POLL_INTERVAL_S: '5' }).payouts.pollIntervalS).toBe(5);
    // The lease still outlives a round.
    expect(loadConfig({}, key).payouts.leaseS).toBeGreaterThanOrEqual(60);
  });

  it('a sandbox hold lasts SANDBOX_HOLD_TTL_S (a week unless set); a bad value stops start-up naming it', () => {
    expect(loadConfig({}, key).sandbox.holdTtlS).toBe(604800);
    expect(loadConfig({ SANDBOX_HOLD_TTL_S: '60' }, key).sandbox.holdTtlS).toBe(60);
    for (const bad of ['0', '-5', 'week', '1.5e3x'])
      expect(() => loadConfig({ SANDBOX_HOLD_TTL_S: bad }, key)).toThrow(/SANDBOX_HOLD_TTL_S/);
  });

  it('tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; the service name has a default', () => {
    expect(loadConfig({}, key).otel).toEqual({ endpoint: undefined, serviceName: 'piastrix-orchestrator' });
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SERVICE_NAME: 'shop-payments' }, key).otel,
    ).toEqual({ endpoint: 'http://127.0.0.1:4318', serviceName: 'shop-payments' });
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, key)).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });
});
