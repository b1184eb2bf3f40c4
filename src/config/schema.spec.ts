import { ConfigError, loadConfig } from './config';
import { devRing, errorOf, real } from './config.spec-helpers';
import { allVars } from './configuration-doc';
import { CONFIG_GROUPS, V } from './schema';

const generated = (): string => `generated-key-${Math.random().toString(36).slice(2)}-0123456789`;
const sandbox = (env: Record<string, string> = {}) => loadConfig(env, generated, devRing);

/** What a variable needs beside it to be read at all (both-or-neither settings). */
const COMPANIONS: Record<string, Record<string, string>> = {
  GATEWAY_PAYOUT_SHOP_ID: { GATEWAY_PAYOUT_SECRET_KEY: 'payout-secret-value' },
  TRUST_PROXY_ALLOW_WIDE: { TRUST_PROXY: '10.0.0.1' },
};

describe('the schema', () => {
  it('declares each variable once, under one group', () => {
    const names = CONFIG_GROUPS.flatMap((g) => Object.keys(g.vars));
    expect(new Set(names).size).toBe(names.length);
    expect(Object.keys(V)).toHaveLength(names.length);
    for (const g of CONFIG_GROUPS)
      for (const v of Object.values(g.vars)) expect(v.group).toBe(g.title);
  });

  // A declaration that loadConfig never reads would be documented and never validated.
  it.each(allVars().filter((v) => ['integer', 'number', 'boolean'].includes(v.type)))(
    '$name is read and checked by loadConfig',
    ({ name }) => {
      for (const bad of ['nope', '-1', '1e3', '0x10', '１２']) {
        const e = errorOf({ ...real, ...COMPANIONS[name], [name]: bad });
        expect(e).toBeInstanceOf(ConfigError);
        expect(e.variable).toBe(name);
        expect(e.message).not.toMatch(/\n/);
      }
    },
  );

  it.each(allVars().filter((v) => v.type === 'integer' && v.bounds.includes('–')))(
    '$name refuses a value past its upper bound ($bounds)',
    ({ name, bounds }) => {
      const max = Number(bounds.split('–')[1]);
      expect(errorOf({ ...real, ...COMPANIONS[name], [name]: String(max + 1) }).message).toBe(
        `Invalid configuration: ${name} must be between ${bounds.split('–')[0]} and ${max}, got ${max + 1}`,
      );
    },
  );
});

describe('secrets in start-up errors', () => {
  const MARK = 'Zq9SecretMark';
  /** A value each secret variable refuses, carrying the marker. */
  const BAD: Record<string, Record<string, string>> = {
    DATABASE_URL: { DATABASE_URL: `mysql://app:${MARK}@db/app` },
    API_KEYS: { API_KEYS: `${MARK}:payments+bogus` },
    ADMIN_API_KEYS: { ADMIN_API_KEYS: `a${MARK}` },
    DATA_ENCRYPTION_KEYS: { DATA_ENCRYPTION_KEYS: `k1:${MARK}` },
    GATEWAY_SECRET_KEY: { GATEWAY_SECRET_KEY: 'sandbox-secret-key' },
    GATEWAY_PAYOUT_SECRET_KEY: { GATEWAY_PAYOUT_SHOP_ID: '42', GATEWAY_PAYOUT_SECRET_KEY: MARK },
    REDIS_URL: { REDIS_URL: `http://:${MARK}@redis:6379` },
    SHOP_WEBHOOK_SECRET: { SHOP_WEBHOOK_SECRET: `whsec_${MARK}!` },
  };
  /** Secrets every value of which is accepted: nothing to refuse, so nothing to leak. */
  const ANY_VALUE = ['METRICS_TOKEN'];

  it('has a refused value for every secret variable', () => {
    const secrets = allVars()
      .filter((v) => v.secret)
      .map((v) => v.name);
    expect([...Object.keys(BAD), ...ANY_VALUE].sort()).toEqual([...secrets].sort());
  });

  it.each(Object.entries(BAD))(
    '%s: the error names it and never repeats the value',
    (name, env) => {
      const e = errorOf({ ...real, ...env });
      expect(e.variable).toBe(name);
      for (const shown of [
        MARK,
        MARK.toLowerCase(),
        encodeURIComponent(MARK),
        Buffer.from(MARK).toString('base64'),
      ])
        expect(e.message).not.toContain(shown);
      if (name === 'GATEWAY_SECRET_KEY') expect(e.message).not.toContain('sandbox-secret-key');
    },
  );
});

describe('RECONCILE_BOOKS_AT, OTEL_*, SANDBOX_HOLD_TTL_S', () => {
  it('have their documented defaults', () => {
    for (const c of [sandbox(), loadConfig(real)]) {
      expect(c.reconcileBooksAtMinutes).toBe(60);
      expect(c.otel).toEqual({ endpoint: undefined, serviceName: 'piastrix-orchestrator' });
      expect(c.sandbox.holdTtlS).toBe(604800);
    }
  });

  it('take set values', () => {
    const c = loadConfig({
      ...real,
      RECONCILE_BOOKS_AT: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SERVICE_NAME: ' payments-eu ',
      SANDBOX_HOLD_TTL_S: '60',
    });
    expect(c.reconcileBooksAtMinutes).toBe(0);
    expect(c.otel).toEqual({ endpoint: 'http://collector:4318', serviceName: 'payments-eu' });
    expect(c.sandbox.holdTtlS).toBe(60);
  });

  it.each([
    ['RECONCILE_BOOKS_AT', '-5', 'must be a whole number, got "-5"'],
    ['RECONCILE_BOOKS_AT', '1.5', 'must be a whole number, got "1.5"'],
    ['RECONCILE_BOOKS_AT', '60 min', 'must be a whole number, got "60 min"'],
    ['SANDBOX_HOLD_TTL_S', '0', 'must be between 1 and 9007199254740991, got 0'],
    ['SANDBOX_HOLD_TTL_S', '7d', 'must be a whole number, got "7d"'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318', 'must be an http(s) URL'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'not a url', 'must be an absolute URL'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'ftp://collector', 'must be an http(s) URL'],
  ])('%s=%s is refused in one line', (name, value, problem) => {
    expect(errorOf({ ...real, [name]: value }).message).toBe(
      `Invalid configuration: ${name} ${problem}`,
    );
  });
});

describe('PAYOUT_POLL_INTERVAL_S', () => {
  it('polls every 2 s in sandbox mode and every 30 s with a real gateway, unless set', () => {
    expect(sandbox().payouts.pollIntervalS).toBe(2);
    expect(sandbox({ PAYOUT_POLL_INTERVAL_S: '' }).payouts.pollIntervalS).toBe(2);
    expect(sandbox({ PAYOUT_POLL_INTERVAL_S: ' 30 ' }).payouts.pollIntervalS).toBe(30);
    expect(sandbox({ PAYOUT_POLL_INTERVAL_S: '0.5' }).payouts.pollIntervalS).toBe(0.5);
    expect(loadConfig(real).payouts.pollIntervalS).toBe(30);
    expect(loadConfig({ ...real, PAYOUT_POLL_INTERVAL_S: '2' }).payouts.pollIntervalS).toBe(2);
  });

  it('keeps the lease at least 60 s and twice the interval', () => {
    expect(sandbox().payouts.leaseS).toBe(60);
    expect(sandbox({ PAYOUT_POLL_INTERVAL_S: '45' }).payouts.leaseS).toBe(90);
    expect(loadConfig({ ...real, PAYOUT_LEASE_S: '5' }).payouts.leaseS).toBe(5);
  });

  it('refuses zero, negatives and units in sandbox mode as well', () => {
    for (const bad of ['0', '-2', '2s', 'fast'])
      expect(() => sandbox({ PAYOUT_POLL_INTERVAL_S: bad })).toThrow(
        `Invalid configuration: PAYOUT_POLL_INTERVAL_S must be a positive number, got "${bad}"`,
      );
  });
});
