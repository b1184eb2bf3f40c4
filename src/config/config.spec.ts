import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, DEFAULT_GATEWAY_CALLS, loadConfig } from './config';
import { devRing, errorOf, real } from './config.spec-helpers';

describe('loadConfig', () => {
  it('uses the sandbox and generated keys with no settings', () => {
    let n = 0;
    const c = loadConfig({}, () => `generated-key-${n++}`, devRing);
    expect(c.sandboxMode).toBe(true);
    expect(c.port).toBe(3000);
    expect(c.gateway.baseUrl).toBe('http://127.0.0.1:4010/gateway/v1/');
    expect(c.apiKeys).toEqual(['generated-key-0']);
    expect(c.adminApiKeys).toEqual(['generated-key-1']);
    expect(c.generatedKeys).toBe(true);
    expect(c.notifyAllowedIps).toEqual(
      expect.arrayContaining(['35.198.100.222', '35.198.175.25', '127.0.0.1']),
    );
    // Sandbox mode is for building against: payouts move on every 2 s unless set.
    expect(c.payouts.pollIntervalS).toBe(2);
    expect(c.payouts.leaseS).toBe(60);
    expect(c.payouts.pollMaxS).toBe(7200);
    expect(c.gateway.timeoutMs).toBe(30000);
    expect(c.publicBaseUrl).toBe('http://localhost:3000');
    expect(c.gateway.calls).toEqual(DEFAULT_GATEWAY_CALLS);
    expect(c.dataEncryptionKeys.map((k) => k.id)).toEqual(['dev']);
    expect(c.devKeyRingPath).toBe('.data/data-encryption-keys');
    expect(c.docsEnabled).toBe(true);
    expect(c.insecureHttp).toEqual([]);
  });

  it('takes the gateway facts as defaults', () => {
    const c = loadConfig(real);
    expect(c.sandboxMode).toBe(false);
    expect(c.gateway.calls['invoice/create-refund'].path).toBe('invoice/create-refund');
    expect(c.gateway.calls['invoice/unhold'].signed).toEqual(['invoice_id', 'now', 'shop_id']);
    expect(c.gateway.duplicateErrorCode).toBe(6);
    expect(c.gateway.absentErrorCode).toBe(7);
    expect(c.payouts.status).toEqual({ success: [5], failed: [8], rejected: [6] });
    expect(c.payouts.pollIntervalS).toBe(30);
    expect(c.notifyAllowedIps).toEqual(['35.198.100.222', '35.198.175.25']);
  });

  it('lets the unshown call shapes be reconfigured', () => {
    const c = loadConfig({
      ...real,
      GATEWAY_CALLS: '{"invoice/create-refund":{"path":"refund/create"}}',
    });
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

  describe('secrets at rest and production guard rails', () => {
    it('reads the key ring: the first key seals, every key opens', () => {
      const second = `old:${Buffer.alloc(32, 3).toString('base64')}`;
      const c = loadConfig({
        ...real,
        DATA_ENCRYPTION_KEYS: `${real.DATA_ENCRYPTION_KEYS}, ${second}`,
      });
      expect(c.dataEncryptionKeys.map((k) => k.id)).toEqual(['k2026', 'old']);
      expect(c.devKeyRingPath).toBeUndefined();
    });

    it.each([
      [{ DATA_ENCRYPTION_KEYS: '' }, 'DATA_ENCRYPTION_KEYS'],
      [{ DATA_ENCRYPTION_KEYS: 'no-colon' }, 'DATA_ENCRYPTION_KEYS'],
      [
        { DATA_ENCRYPTION_KEYS: `a:${Buffer.alloc(16).toString('base64')}` },
        'DATA_ENCRYPTION_KEYS',
      ],
      [
        { DATA_ENCRYPTION_KEYS: `a b:${Buffer.alloc(32).toString('base64')}` },
        'DATA_ENCRYPTION_KEYS',
      ],
      [
        {
          DATA_ENCRYPTION_KEYS: `a:${Buffer.alloc(32).toString('base64')},a:${Buffer.alloc(32).toString('base64')}`,
        },
        'DATA_ENCRYPTION_KEYS',
      ],
      [{ GATEWAY_BASE_URL: 'http://pay.example.com/gateway/v1/' }, 'GATEWAY_BASE_URL'],
      [{ PUBLIC_BASE_URL: 'http://payments.example.com' }, 'PUBLIC_BASE_URL'],
      // Unset, the public address defaults to http://localhost: not an address for production.
      [{ PUBLIC_BASE_URL: '' }, 'PUBLIC_BASE_URL'],
      [{ ALLOW_INSECURE_HTTP: 'maybe' }, 'ALLOW_INSECURE_HTTP'],
      [{ GATEWAY_SECRET_KEY: 'sandbox-secret-key' }, 'GATEWAY_SECRET_KEY'],
      [{ GATEWAY_SHOP_ID: '1001' }, 'GATEWAY_SHOP_ID'],
      [{ GATEWAY_SHOP_ID: '01001' }, 'GATEWAY_SHOP_ID'],
    ])('outside sandbox mode refuses %p in one line naming %s', (env, variable) => {
      const e = errorOf({ ...real, PUBLIC_BASE_URL: 'https://payments.example.com', ...env });
      expect(e).toBeInstanceOf(ConfigError);
      expect(e.variable).toBe(variable);
      expect(e.message).not.toContain('\n');
      expect(e.message).not.toContain(Buffer.alloc(32).toString('base64'));
    });

    it('accepts http:// only with ALLOW_INSECURE_HTTP=true, and says which addresses', () => {
      const c = loadConfig({
        ...real,
        GATEWAY_BASE_URL: 'http://10.0.0.5/gateway/v1/',
        PUBLIC_BASE_URL: 'https://payments.example.com',
        ALLOW_INSECURE_HTTP: 'true',
      });
      expect(c.insecureHttp).toEqual(['GATEWAY_BASE_URL']);
      const d = loadConfig({ ...real, PUBLIC_BASE_URL: '', ALLOW_INSECURE_HTTP: 'true' });
      expect(d.insecureHttp).toEqual(['PUBLIC_BASE_URL']);
    });

    it('NODE_ENV=production without GATEWAY_BASE_URL is an error, not a sandbox', () => {
      const e = errorOf({ NODE_ENV: 'production' });
      expect(e.variable).toBe('GATEWAY_BASE_URL');
      expect(loadConfig({ NODE_ENV: 'development' }, undefined, devRing).sandboxMode).toBe(true);
    });

    it('serves /docs by default in sandbox mode only; DOCS_ENABLED decides', () => {
      const prod = { ...real, PUBLIC_BASE_URL: 'https://payments.example.com' };
      expect(loadConfig(prod).docsEnabled).toBe(false);
      expect(loadConfig({ ...prod, DOCS_ENABLED: 'true' }).docsEnabled).toBe(true);
      expect(loadConfig({ DOCS_ENABLED: 'false' }, undefined, devRing).docsEnabled).toBe(false);
    });

    it('keeps the development API keys under the data directory: made once, the same at every start', () => {
      const dir = mkdtempSync(join(tmpdir(), 'devkeys-'));
      try {
        const first = loadConfig({ DATA_DIR: dir });
        const again = loadConfig({ DATA_DIR: dir });
        const path = join(dir, 'development-api-keys');
        expect(first.devApiKeysPath).toBe(path);
        expect(first.generatedKeys).toBe(true);
        expect(first.apiKeys[0]).toMatch(/^dev_/);
        expect(first.adminApiKeys[0]).not.toBe(first.apiKeys[0]);
        expect([again.apiKeys, again.adminApiKeys]).toEqual([first.apiKeys, first.adminApiKeys]);
        expect(again.shopKeys).toEqual(first.shopKeys);
        expect(statSync(path).mode & 0o077).toBe(0);
        // A configured key wins; the other is still the kept one.
        const mixed = loadConfig({ DATA_DIR: dir, ADMIN_API_KEYS: 'configured-admin-key-0001' });
        expect(mixed.apiKeys).toEqual(first.apiKeys);
        expect(mixed.adminApiKeys).toEqual(['configured-admin-key-0001']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it.each([
      [
        'a line of something else',
        'shop=dev_aaaaaaaaaaaaaaaaaaaa\nadmin=dev_bbbbbbbbbbbbbbbbbbbb\nroot=x\n',
      ],
      ['a missing admin key', 'shop=dev_aaaaaaaaaaaaaaaaaaaa\n'],
      ['a key too short', 'shop=short\nadmin=dev_bbbbbbbbbbbbbbbbbbbb\n'],
      ['one key for both', 'shop=dev_aaaaaaaaaaaaaaaaaaaa\nadmin=dev_aaaaaaaaaaaaaaaaaaaa\n'],
      ['an empty file', ''],
    ])('a kept development keys file with %s stops start-up naming the file', (_what, text) => {
      const dir = mkdtempSync(join(tmpdir(), 'devkeys-'));
      try {
        writeFileSync(join(dir, 'development-api-keys'), text, { mode: 0o600 });
        let error: unknown;
        try {
          loadConfig({ DATA_DIR: dir });
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).variable).toBe(join(dir, 'development-api-keys'));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('keys made by a given generator are not kept', () => {
      const dir = mkdtempSync(join(tmpdir(), 'devkeys-'));
      try {
        const c = loadConfig({ DATA_DIR: dir }, () => 'generated-key-0123456789', devRing);
        expect(c.devApiKeysPath).toBeUndefined();
        expect(existsSync(join(dir, 'development-api-keys'))).toBe(false);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('keeps the development key ring under the data directory: made once, then read', () => {
      const dir = mkdtempSync(join(tmpdir(), 'ring-'));
      try {
        const first = loadConfig({ DATA_DIR: dir });
        const again = loadConfig({ DATA_DIR: dir });
        expect(first.devKeyRingPath).toBe(join(dir, 'data-encryption-keys'));
        expect(again.dataEncryptionKeys).toEqual(first.dataEncryptionKeys);
        expect(statSync(join(dir, 'data-encryption-keys')).mode & 0o077).toBe(0);
        expect(readFileSync(join(dir, 'data-encryption-keys'), 'utf8')).toMatch(
          /^[\w-]+:[A-Za-z0-9+/]+=*\n$/,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
