import { ConfigError, DEFAULT_GATEWAY_CALLS, loadConfig } from './config';

const real = {
  GATEWAY_BASE_URL: 'https://pay.example.com/gateway/v1/',
  GATEWAY_SHOP_ID: '42',
  GATEWAY_SECRET_KEY: 's3cr3t-value',
  API_KEYS: 'shop-key-0123456789abcdef',
  ADMIN_API_KEYS: 'admin-key-0123456789abcdef',
};

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (e) {
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('uses the sandbox and generated keys with no settings', () => {
    let n = 0;
    const c = loadConfig({}, () => `generated-key-${n++}`);
    expect(c.sandboxMode).toBe(true);
    expect(c.port).toBe(3000);
    expect(c.gateway.baseUrl).toBe('http://127.0.0.1:4010/gateway/v1/');
    expect(c.apiKeys).toEqual(['generated-key-0']);
    expect(c.adminApiKeys).toEqual(['generated-key-1']);
    expect(c.generatedKeys).toBe(true);
    expect(c.notifyAllowedIps).toEqual(expect.arrayContaining(['35.198.100.222', '35.198.175.25', '127.0.0.1']));
    expect(c.payouts.pollIntervalS).toBe(30);
    expect(c.payouts.pollMaxS).toBe(7200);
    expect(c.gateway.timeoutMs).toBe(30000);
    expect(c.publicBaseUrl).toBe('http://localhost:3000');
    expect(c.gateway.calls).toEqual(DEFAULT_GATEWAY_CALLS);
  });

  it('takes the gateway facts as defaults', () => {
    const c = loadConfig(real);
    expect(c.sandboxMode).toBe(false);
    expect(c.gateway.calls['invoice/create-refund'].path).toBe('invoice/create-refund');
    expect(c.gateway.calls['invoice/unhold'].signed).toEqual(['invoice_id', 'now', 'shop_id']);
    expect(c.gateway.duplicateErrorCode).toBe(6);
    expect(c.gateway.absentErrorCode).toBe(7);
    expect(c.payouts.status).toEqual({ success: [5], failed: [8], rejected: [6] });
    expect(c.notifyAllowedIps).toEqual(['35.198.100.222', '35.198.175.25']);
  });

  it('lets the unshown call shapes be reconfigured', () => {
    const c = loadConfig({ ...real, GATEWAY_CALLS: '{"invoice/create-refund":{"path":"refund/create"}}' });
    expect(c.gateway.calls['invoice/create-refund']).toEqual({
      path: 'refund/create',
      signed: ['amount', 'invoice_id', 'shop_id', 'shop_refund_id'],
    });
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ GATEWAY_BASE_URL: 'https://x.example/api/' }, 'GATEWAY_BASE_URL'],
    [{ PAYOUT_POLL_INTERVAL_S: '-1' }, 'PAYOUT_POLL_INTERVAL_S'],
    [{ GATEWAY_CALLS: '{"nope":{}}' }, 'GATEWAY_CALLS'],
    [{ GATEWAY_FATAL_ERROR_CODES: '10,x' }, 'GATEWAY_FATAL_ERROR_CODES'],
  ])('names the variable in one line for %p', (env, variable) => {
    const e = errorOf({ ...real, ...env });
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.variable).toBe(variable);
    expect(e.message).toContain(variable);
    expect(e.message).not.toContain('\n');
  });

  it('refuses a real gateway without credentials or keys, and never prints the secret', () => {
    expect(errorOf({ ...real, GATEWAY_SECRET_KEY: '' }).variable).toBe('GATEWAY_SECRET_KEY');
    expect(errorOf({ ...real, API_KEYS: '' }).variable).toBe('API_KEYS');
    expect(errorOf({ ...real, ADMIN_API_KEYS: '' }).variable).toBe('ADMIN_API_KEYS');
    expect(errorOf({ ...real, PORT: 'x' }).message).not.toContain('s3cr3t-value');
  });
});
