import { loadConfig } from './config/config';
import { startBanner } from './start-banner';

const RING = `k1:${Buffer.alloc(32, 1).toString('base64')}`;

describe('start banner', () => {
  it('in sandbox mode shows the addresses, the generated keys and a curl using the shop key', () => {
    let n = 0;
    const config = loadConfig(
      { PORT: '3100', SANDBOX_PORT: '4100' },
      () => `dev_generated_key_${++n}_0123456789`,
    );
    const text = startBanner(config, new Date(0));
    expect(text).toContain('http://localhost:3100/docs');
    expect(text).toContain('http://localhost:3100/admin');
    expect(text).toContain('http://localhost:4100/gateway/v1/');
    expect(text).toMatch(/shop:\s+dev_generated_key_1_0123456789/);
    expect(text).toMatch(/admin:\s+dev_generated_key_2_0123456789/);
    expect(text).toContain(
      "curl -X POST http://localhost:3100/api/v1/invoices -H 'Authorization: Bearer dev_generated_key_1_0123456789'",
    );
  });

  it('in sandbox mode says whether the sandbox clock is moved, and by how much', () => {
    const config = loadConfig({ SANDBOX_PORT: '4100' }, () => 'dev_generated_key_0123456789');
    expect(startBanner(config, new Date(0))).toContain('clock:    the system clock');
    expect(startBanner(config, new Date(0), 86_400)).toContain(
      'clock:    moved 86400 s ahead by the sandbox clock: 1970-01-02T00:00:00.000Z',
    );
  });

  it('in sandbox mode names the sandbox settings kept from an earlier run, and nothing on a fresh start', () => {
    const config = loadConfig({ SANDBOX_PORT: '4100' }, () => 'dev_generated_key_0123456789');
    expect(startBanner(config, new Date(0))).not.toContain('kept from an earlier run');
    expect(startBanner(config, new Date(0), 0, { latencyMs: 3000, notifyFormat: 'form' })).toContain(
      'settings: kept from an earlier run: latencyMs: 3000, notifyFormat: "form"',
    );
  });

  it('says where kept development keys are', () => {
    const config = {
      ...loadConfig({}, () => 'dev_generated_key_0123456789'),
      devApiKeysPath: '.data/development-api-keys',
    };
    expect(startBanner(config)).toContain(
      'Development API keys (sandbox mode, kept in .data/development-api-keys):',
    );
  });

  it('never prints configured keys or the gateway secret', () => {
    const config = loadConfig({
      GATEWAY_BASE_URL: 'https://gw.example/gateway/v1/',
      GATEWAY_SHOP_ID: '7',
      GATEWAY_SECRET_KEY: 'real-gateway-secret',
      API_KEYS: 'configured-shop-key-0001',
      ADMIN_API_KEYS: 'configured-admin-key-0001',
      DATA_ENCRYPTION_KEYS: RING,
      PUBLIC_BASE_URL: 'https://payments.example.com',
    });
    const text = startBanner(config);
    for (const secret of [
      'real-gateway-secret',
      'configured-shop-key-0001',
      'configured-admin-key-0001',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('Bearer $API_KEY');
    expect(text).toContain('https://gw.example/gateway/v1/');
    expect(text).not.toContain(Buffer.alloc(32, 1).toString('base64'));
    expect(text).toContain('API docs: off');
  });

  it('says where shop webhooks go, without what may hold a secret, or that they are in the feed only', () => {
    const feedOnly = loadConfig({}, () => 'dev_generated_key_0123456789');
    expect(startBanner(feedOnly)).toMatch(/webhooks: feed only/);
    const config = loadConfig(
      {
        SHOP_WEBHOOK_URL: 'https://shop.example/hooks/in?token=s3cret#x,http://127.0.0.1:9000/events',
        SHOP_WEBHOOK_SECRET: `whsec_${Buffer.alloc(24, 3).toString('base64')}`,
      },
      () => 'dev_generated_key_0123456789',
    );
    const text = startBanner(config);
    expect(text).toContain('webhooks: https://shop.example/hooks/in, http://127.0.0.1:9000/events');
    for (const secret of ['s3cret', '#x']) expect(text).not.toContain(secret);
  });

  it('an address with user information is refused at start-up, naming the variable and never its password', () => {
    for (const url of ['https://user:hook-password@shop.example/hooks', 'https://user@shop.example/hooks', 'https://:hook-password@shop.example/hooks']) {
      let message = '';
      try {
        loadConfig(
          { SHOP_WEBHOOK_URL: url, SHOP_WEBHOOK_SECRET: `whsec_${Buffer.alloc(24, 3).toString('base64')}` },
          () => 'dev_generated_key_0123456789',
        );
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toMatch(/^Invalid configuration: SHOP_WEBHOOK_URL .*user information/);
      expect(message).not.toContain('hook-password');
    }
  });
});
