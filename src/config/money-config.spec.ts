import { ConfigError, loadConfig } from './config';
import { errorOf, real } from './config.spec-helpers';

describe('two gateway shops', () => {
  it('single shop: without GATEWAY_PAYOUT_* the payment shop also pays out, as before', () => {
    const c = loadConfig(real);
    expect(c.gateway.shops).toEqual({
      payment: { shopId: 42, secretKey: 's3cr3t-value' },
      payout: { shopId: 42, secretKey: 's3cr3t-value' },
    });
  });

  it('takes an agent shop with its own secret', () => {
    const c = loadConfig({
      ...real,
      GATEWAY_PAYOUT_SHOP_ID: '43',
      GATEWAY_PAYOUT_SECRET_KEY: 'agent-s3cr3t',
    });
    expect(c.gateway.shops.payment).toEqual({ shopId: 42, secretKey: 's3cr3t-value' });
    expect(c.gateway.shops.payout).toEqual({ shopId: 43, secretKey: 'agent-s3cr3t' });
  });

  it.each([
    [{ GATEWAY_PAYOUT_SHOP_ID: '43' }, 'GATEWAY_PAYOUT_SECRET_KEY'],
    [{ GATEWAY_PAYOUT_SECRET_KEY: 'agent-s3cr3t' }, 'GATEWAY_PAYOUT_SHOP_ID'],
    [
      { GATEWAY_PAYOUT_SHOP_ID: 'x', GATEWAY_PAYOUT_SECRET_KEY: 'agent-s3cr3t' },
      'GATEWAY_PAYOUT_SHOP_ID',
    ],
    [
      { GATEWAY_PAYOUT_SHOP_ID: '42', GATEWAY_PAYOUT_SECRET_KEY: 'agent-s3cr3t' },
      'GATEWAY_PAYOUT_SECRET_KEY',
    ],
    [
      { GATEWAY_PAYOUT_SHOP_ID: '43', GATEWAY_PAYOUT_SECRET_KEY: 'sandbox-payout-secret-key' },
      'GATEWAY_PAYOUT_SECRET_KEY',
    ],
    [
      { GATEWAY_PAYOUT_SHOP_ID: '43', GATEWAY_PAYOUT_SECRET_KEY: 'sandbox-secret-key' },
      'GATEWAY_PAYOUT_SECRET_KEY',
    ],
    [
      { GATEWAY_PAYOUT_SHOP_ID: '1002', GATEWAY_PAYOUT_SECRET_KEY: 'agent-s3cr3t' },
      'GATEWAY_PAYOUT_SHOP_ID',
    ],
  ])('both or neither, one secret per shop id: %j → one line naming %s', (env, variable) => {
    const e = errorOf({ ...real, ...env });
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.variable).toBe(variable);
    expect(e.message.split('\n')).toHaveLength(1);
    expect(e.message).not.toContain('agent-s3cr3t');
    expect(e.message).not.toContain('s3cr3t-value');
  });

  it('accepts the payment shop named again as the agent shop with the same secret', () => {
    const c = loadConfig({
      ...real,
      GATEWAY_PAYOUT_SHOP_ID: '42',
      GATEWAY_PAYOUT_SECRET_KEY: 's3cr3t-value',
    });
    expect(c.gateway.shops.payout).toEqual(c.gateway.shops.payment);
  });

  it('sandbox mode: a separate agent shop by default, configurable, or one shop for both', () => {
    const c = loadConfig({});
    expect(c.gateway.shops.payment).toEqual({ shopId: 1001, secretKey: 'sandbox-secret-key' });
    expect(c.gateway.shops.payout).toEqual({
      shopId: 1002,
      secretKey: 'sandbox-payout-secret-key',
    });
    expect(c.sandbox).toMatchObject({
      payoutShopId: 1002,
      payoutSecretKey: 'sandbox-payout-secret-key',
    });

    const own = loadConfig({ SANDBOX_PAYOUT_SHOP_ID: '7', SANDBOX_PAYOUT_SECRET_KEY: 'seven' });
    expect(own.gateway.shops.payout).toEqual({ shopId: 7, secretKey: 'seven' });

    const one = loadConfig({ SANDBOX_PAYOUT_SHOP_ID: '1001' });
    expect(one.gateway.shops.payout).toEqual(one.gateway.shops.payment);
    expect(
      errorOf({ SANDBOX_PAYOUT_SHOP_ID: '1001', SANDBOX_PAYOUT_SECRET_KEY: 'other' }).variable,
    ).toBe('SANDBOX_PAYOUT_SECRET_KEY');
    expect(
      errorOf({ SANDBOX_SECRET_KEY: 'same', SANDBOX_PAYOUT_SECRET_KEY: 'same' }).variable,
    ).toBe('SANDBOX_PAYOUT_SECRET_KEY');
  });

  it('IDEMPOTENCY_CONFLICT_LIMIT: 3 by default, a whole number from 1, one line naming it otherwise', () => {
    expect(loadConfig(real).idempotencyConflictLimit).toBe(3);
    expect(loadConfig({ ...real, IDEMPOTENCY_CONFLICT_LIMIT: '5' }).idempotencyConflictLimit).toBe(
      5,
    );
    for (const bad of ['0', '-1', 'three', '2.5']) {
      const e = errorOf({ ...real, IDEMPOTENCY_CONFLICT_LIMIT: bad });
      expect(e.variable).toBe('IDEMPOTENCY_CONFLICT_LIMIT');
      expect(e.message.split('\n')).toHaveLength(1);
    }
  });
});

describe('REPORT_TIMEZONE', () => {
  it('defaults to UTC and keeps an IANA name in its canonical spelling', () => {
    expect(loadConfig(real).reportTimeZone).toBe('UTC');
    expect(loadConfig({ ...real, REPORT_TIMEZONE: '' }).reportTimeZone).toBe('UTC');
    expect(loadConfig({ ...real, REPORT_TIMEZONE: 'Europe/Moscow' }).reportTimeZone).toBe(
      'Europe/Moscow',
    );
    expect(loadConfig({ ...real, REPORT_TIMEZONE: 'europe/moscow' }).reportTimeZone).toBe(
      'Europe/Moscow',
    );
    expect(loadConfig({ ...real, REPORT_TIMEZONE: 'Etc/GMT-3' }).reportTimeZone).toBe('Etc/GMT-3');
  });

  // Offsets and POSIX strings are refused: PostgreSQL reads `UTC+3` as three hours WEST of UTC.
  it.each([
    'Mars/Phobos',
    'UTC+3',
    '+03:00',
    '03:00',
    'Europe/Moscow; DROP TABLE invoices',
    'Europe/../Moscow',
    'Europe/Moscow\nx',
    `Europe/${'x'.repeat(80)}`,
  ])('refuses REPORT_TIMEZONE=%j with one line naming it', (value) => {
    const e = errorOf({ ...real, REPORT_TIMEZONE: value });
    expect(e.variable).toBe('REPORT_TIMEZONE');
    expect(e.message.split('\n')).toHaveLength(1);
  });
});

describe('retention settings', () => {
  it('has the documented defaults and takes whole days', () => {
    expect(loadConfig(real).retention).toEqual({
      deliveriesDays: 30,
      notificationsDays: 180,
      eventsDays: 90,
    });
    expect(
      loadConfig({
        ...real,
        RETENTION_DELIVERIES_DAYS: '7',
        RETENTION_NOTIFICATIONS_DAYS: '365',
        RETENTION_EVENTS_DAYS: ' 14 ',
      }).retention,
    ).toEqual({ deliveriesDays: 7, notificationsDays: 365, eventsDays: 14 });
  });

  it.each([
    ['RETENTION_DELIVERIES_DAYS', '0'],
    ['RETENTION_DELIVERIES_DAYS', '-1'],
    ['RETENTION_NOTIFICATIONS_DAYS', '1.5'],
    ['RETENTION_NOTIFICATIONS_DAYS', '30d'],
    ['RETENTION_EVENTS_DAYS', '0x10'],
    ['RETENTION_EVENTS_DAYS', '1e3'],
    ['RETENTION_EVENTS_DAYS', '99999999'],
    ['RETENTION_DELIVERIES_DAYS', '３０'],
  ])('refuses %s=%s with one line naming it', (name, value) => {
    const e = errorOf({ ...real, [name]: value });
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.variable).toBe(name);
    expect(e.message.split('\n')).toHaveLength(1);
  });

  it('refuses a feed retention no longer than the webhook retry window', () => {
    // 3 days of retries by default: a 3-day feed would prune events still being pushed.
    const e = errorOf({ ...real, RETENTION_EVENTS_DAYS: '3' });
    expect(e.variable).toBe('RETENTION_EVENTS_DAYS');
    expect(e.message).toContain('SHOP_WEBHOOK_RETRY_FOR_S');
    expect(
      loadConfig({ ...real, RETENTION_EVENTS_DAYS: '3', SHOP_WEBHOOK_RETRY_FOR_S: '86400' })
        .retention.eventsDays,
    ).toBe(3);
  });
});

describe('loadConfig: payout approval thresholds', () => {
  it('parses per-currency thresholds exactly; unset or empty is none', () => {
    const c = loadConfig({
      ...real,
      PAYOUT_APPROVAL_THRESHOLD: '643:50000.00, 840:1000.00',
      PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:200000.00000001',
    });
    expect(c.payoutApproval.single.get(643)?.toString()).toBe('50000.00');
    expect(c.payoutApproval.single.get(840)?.toString()).toBe('1000.00');
    expect(c.payoutApproval.dual.get(643)?.toString()).toBe('200000.00000001');
    expect(c.payoutApproval.dual.has(840)).toBe(false);
    expect(loadConfig(real).payoutApproval.single.size).toBe(0);
    expect(loadConfig({ ...real, PAYOUT_APPROVAL_THRESHOLD: ' ' }).payoutApproval.single.size).toBe(
      0,
    );
  });

  it.each([
    ['PAYOUT_APPROVAL_THRESHOLD', '643=50000'],
    ['PAYOUT_APPROVAL_THRESHOLD', '643:5e4'],
    ['PAYOUT_APPROVAL_THRESHOLD', '643:-1'],
    ['PAYOUT_APPROVAL_THRESHOLD', '643:0'],
    ['PAYOUT_APPROVAL_THRESHOLD', '643:1,643:2'],
    ['PAYOUT_APPROVAL_THRESHOLD', 'RUB:1000'],
    ['PAYOUT_APPROVAL_THRESHOLD', '643:1000,'],
    ['PAYOUT_APPROVAL_THRESHOLD', '643:1 000'],
    ['PAYOUT_APPROVAL_THRESHOLD', '0:1000'],
    ['PAYOUT_DUAL_APPROVAL_THRESHOLD', '643:NaN'],
    ['PAYOUT_DUAL_APPROVAL_THRESHOLD', '643:1000.123456789'],
  ])('refuses %s=%j with one line naming it', (name, value) => {
    const e = errorOf({ ...real, [name]: value });
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.variable).toBe(name);
    expect(e.message.split('\n')).toHaveLength(1);
  });

  it('refuses a dual threshold below the single one of the same currency', () => {
    const e = errorOf({
      ...real,
      PAYOUT_APPROVAL_THRESHOLD: '643:50000',
      PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:49999.99,840:10',
    });
    expect(e.variable).toBe('PAYOUT_DUAL_APPROVAL_THRESHOLD');
    expect(e.message).toContain('643');
    // Equal is allowed: at that amount two approvals.
    expect(
      loadConfig({
        ...real,
        PAYOUT_APPROVAL_THRESHOLD: '643:50000',
        PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:50000.00',
      })
        .payoutApproval.dual.get(643)
        ?.toString(),
    ).toBe('50000.00');
  });
});

describe('payout controls: PAYOUT_DAILY_CAP, PAYOUT_RECIPIENT_DAILY_CAP, BALANCE_CACHE_S', () => {
  it('defaults to no caps and a 30 s balance read', () => {
    const c = loadConfig(real).payoutControls;
    expect(c.dailyCap.size).toBe(0);
    expect(c.recipientDailyCap.size).toBe(0);
    expect(c.balanceCacheS).toBe(30);
  });

  it('parses caps per currency exactly (numeric or alphabetic code), 0 turns the balance check off', () => {
    const c = loadConfig({
      ...real,
      PAYOUT_DAILY_CAP: '643:50000.00, 840:1000.00',
      PAYOUT_RECIPIENT_DAILY_CAP: 'rub:0.10,JPY:5000',
      BALANCE_CACHE_S: '0',
    }).payoutControls;
    expect([...c.dailyCap].map(([k, v]) => [k, v.toString()])).toEqual([
      [643, '50000.00'],
      [840, '1000.00'],
    ]);
    expect([...c.recipientDailyCap].map(([k, v]) => [k, v.toString()])).toEqual([
      [643, '0.10'],
      [392, '5000'],
    ]);
    expect(c.balanceCacheS).toBe(0);
  });

  it.each([
    ['PAYOUT_DAILY_CAP', '643=100.00', /PAYOUT_DAILY_CAP entries must be currency:amount/],
    ['PAYOUT_DAILY_CAP', '999999:100.00', /PAYOUT_DAILY_CAP entries must be currency:amount/],
    ['PAYOUT_DAILY_CAP', 'ABC:100.00', /PAYOUT_DAILY_CAP entries must be currency:amount/],
    ['PAYOUT_DAILY_CAP', '643:1e5', /PAYOUT_DAILY_CAP amount of currency 643 must be a positive/],
    ['PAYOUT_DAILY_CAP', '643:-1', /must be a positive decimal/],
    ['PAYOUT_DAILY_CAP', '643:0', /must be a positive decimal/],
    ['PAYOUT_DAILY_CAP', '643:100.001', /fraction digits/],
    ['PAYOUT_RECIPIENT_DAILY_CAP', 'JPY:10.5', /PAYOUT_RECIPIENT_DAILY_CAP .*whole number/],
    ['PAYOUT_RECIPIENT_DAILY_CAP', '643:1,RUB:2', /names currency 643 twice/],
    ['BALANCE_CACHE_S', '-1', /BALANCE_CACHE_S must be a whole number/],
    ['BALANCE_CACHE_S', '1.5', /BALANCE_CACHE_S must be a whole number/],
  ])('%s=%s stops start-up with one line naming it', (name, value, message) => {
    const e = errorOf({ ...real, [name]: value });
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toMatch(message);
    expect(e.message).not.toContain('\n');
  });
});
