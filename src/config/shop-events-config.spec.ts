import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from './config';

const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (e) {
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('shop events settings', () => {
  it('default to no webhooks (events only in the feed) and the documented retry window', () => {
    const c = loadConfig({}).shopEvents;
    expect(c).toMatchObject({
      urls: [],
      secret: null,
      timeoutMs: 10000,
      retryForS: 259200,
      leaseS: 60,
    });
  });

  it('decode the whsec_ secret and keep the address list', () => {
    const c = loadConfig({
      SHOP_WEBHOOK_URL: 'https://a.example/h, https://b.example/h',
      SHOP_WEBHOOK_SECRET: WHSEC,
    }).shopEvents;
    expect(c.urls).toEqual(['https://a.example/h', 'https://b.example/h']);
    expect(c.secret).toEqual(Buffer.from(WHSEC.slice(6), 'base64'));
  });

  it.each([
    [{ SHOP_WEBHOOK_URL: 'https://a.example/h' }, 'SHOP_WEBHOOK_SECRET'],
    [{ SHOP_WEBHOOK_URL: 'ftp://a.example/h', SHOP_WEBHOOK_SECRET: WHSEC }, 'SHOP_WEBHOOK_URL'],
    [{ SHOP_WEBHOOK_URL: 'not a url', SHOP_WEBHOOK_SECRET: WHSEC }, 'SHOP_WEBHOOK_URL'],
    [{ SHOP_WEBHOOK_SECRET: 'whsec_short' }, 'SHOP_WEBHOOK_SECRET'],
    [{ SHOP_WEBHOOK_SECRET: 'whsec_***not base64***' }, 'SHOP_WEBHOOK_SECRET'],
    [{ SHOP_WEBHOOK_LEASE_S: '5' }, 'SHOP_WEBHOOK_LEASE_S'],
    [{ SHOP_WEBHOOK_RETRY_FOR_S: '-1' }, 'SHOP_WEBHOOK_RETRY_FOR_S'],
  ])('refuse %o naming %s, never printing the secret', (env, variable) => {
    const e = errorOf(env);
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.variable).toBe(variable);
    expect(e.message).not.toContain(WHSEC.slice(6));
  });
});
