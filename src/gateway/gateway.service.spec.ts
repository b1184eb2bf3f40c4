import { jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { LineLogger, logger } from '../common/logger';
import { gatewayCallDuration } from '../metrics/metrics';
import { GatewayService } from './gateway.service';
import {
  answer,
  FakeGateway,
  gatewayTestConfig,
  okEnvelope,
  TEST_SECRET,
  TEST_SHOP_ID,
} from './testing/fake-gateway';
import { PAYMENT, PAYOUT } from '../../test/support/payways';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** 17:23:41 at +03:00, the default `now` offset. */
const CLOCK = () => new Date('2026-11-21T14:23:41.789Z');
const NOW = '2026-11-21T17:23:41+03:00';

const card = {
  number: '4111111111111111',
  cardholder: 'IVAN PETROV',
  expiry_month: '09',
  expiry_year: '28',
  cvv: '123',
};
const invoice = {
  shop_order_id: 'order-1',
  amount: '100.10',
  currency: 643,
  payway: PAYMENT.card,
  description: 'Tea',
};
const payout = {
  shop_payment_id: 'p-1',
  amount: '250.00',
  amount_type: 'shop_amount' as const,
  shop_currency: 643,
  payway: PAYMENT.card,
  account: '4111111111111111',
  account_details: { first_name: 'Ivan' },
  description: 'Salary',
};

let fake: FakeGateway;
let gateway: GatewayService;

beforeEach(async () => {
  fake = await FakeGateway.start();
  gateway = new GatewayService(gatewayTestConfig(fake.baseUrl), CLOCK);
});

afterEach(async () => {
  gateway.onModuleDestroy();
  await fake.stop();
});

describe('every call is signed over the body it sends', () => {
  // The expected strings are written out from the spec's rule: signed fields sorted by key,
  // values as transmitted, joined with ':'.
  const cases: Array<[string, (g: GatewayService) => Promise<unknown>, string, string]> = [
    [
      'tryInvoice',
      (g) => g.tryInvoice(invoice),
      'invoice/try',
      `100.10:643:${PAYMENT.card}:2001:order-1`,
    ],
    [
      'createInvoice',
      (g) => g.createInvoice({ ...invoice, card, extras: { phone: '79001234567' } }),
      'invoice/create',
      `100.10:643:${PAYMENT.card}:2001:order-1`,
    ],
    [
      'holdInvoice',
      (g) => g.holdInvoice({ ...invoice, issue_payment_token: true }),
      'invoice/hold',
      `100.10:643:${PAYMENT.card}:2001:order-1`,
    ],
    ['checkInvoice', (g) => g.checkInvoice('order-1'), 'invoice/check', `${NOW}:2001:order-1`],
    ['chargeInvoice', (g) => g.chargeInvoice(555), 'invoice/charge', `555:${NOW}:2001`],
    ['unholdInvoice', (g) => g.unholdInvoice(555), 'invoice/unhold', `555:${NOW}:2001`],
    [
      'createRefund',
      (g) =>
        g.createRefund({
          invoice_id: 555,
          amount: '10.50',
          shop_refund_id: 'r-1',
          callback_url: 'https://shop.example/notify?type=refund',
        }),
      'invoice/create-refund',
      '10.50:555:2001:r-1',
    ],
    ['getRefunds', (g) => g.getRefunds(555), 'invoice/get-refunds', `555:${NOW}:2001`],
    ['shopInputConfig', (g) => g.shopInputConfig(), 'shop_input_config/shop', `${NOW}:2001`],
    ['shopOutputConfig', (g) => g.shopOutputConfig(), 'shop_output_config/shop', `${NOW}:2001`],
    ['shopBalance', (g) => g.shopBalance(), 'shop_balance', `${NOW}:2001`],
    [
      'tryWithdraw',
      (g) =>
        g.tryWithdraw({
          amount: '250.00',
          amount_type: 'ps_amount',
          payway: PAYMENT.card,
          shop_currency: 643,
        }),
      'withdraw/try',
      `250.00:ps_amount:${PAYMENT.card}:643:2001`,
    ],
    [
      'checkAccount',
      (g) => g.checkAccount({ account: '79001234567', amount: '250.00', payway: PAYOUT.wallet }),
      'check_account',
      `79001234567:250.00:${PAYOUT.wallet}:2001`,
    ],
    [
      'createWithdraw',
      (g) => g.createWithdraw(payout),
      'withdraw/create',
      `4111111111111111:250.00:shop_amount:${PAYMENT.card}:643:2001:p-1`,
    ],
    ['withdrawStatus', (g) => g.withdrawStatus(777), 'withdraw/status', `${NOW}:2001:777`],
    [
      'withdrawShopPaymentStatus',
      (g) => g.withdrawShopPaymentStatus('p-1'),
      'withdraw/shop_payment_status',
      `${NOW}:2001:p-1`,
    ],
  ];

  it.each(cases)('%s', async (_name, invoke, path, signString) => {
    await invoke(gateway);
    const sent = fake.last();
    expect(sent.path).toBe(path);
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.body.shop_id).toBe(TEST_SHOP_ID);
    expect(sent.body.sign).toBe(sha256(signString + TEST_SECRET));
    const signHeader = path === 'invoice/create' || path === 'invoice/hold';
    expect(sent.headers.sign).toBe(signHeader ? sent.body.sign : undefined);
  });

  describe('with an agent shop: each call carries its own shop and is signed with its secret', () => {
    const AGENT_ID = 2002;
    const AGENT_SECRET = 'agent-secret-key';
    const PAYOUT_PATHS = new Set([
      'shop_output_config/shop',
      'shop_balance',
      'withdraw/try',
      'check_account',
      'withdraw/create',
      'withdraw/status',
      'withdraw/shop_payment_status',
    ]);

    it.each(cases)('%s', async (_name, invoke, path, signString) => {
      const g = new GatewayService(
        gatewayTestConfig(fake.baseUrl, {
          GATEWAY_PAYOUT_SHOP_ID: String(AGENT_ID),
          GATEWAY_PAYOUT_SECRET_KEY: AGENT_SECRET,
        }),
        CLOCK,
      );
      try {
        await invoke(g);
      } finally {
        g.onModuleDestroy();
      }
      const sent = fake.last();
      const agent = PAYOUT_PATHS.has(path);
      expect(sent.body.shop_id).toBe(agent ? AGENT_ID : TEST_SHOP_ID);
      const text = agent ? signString.replace(`:${TEST_SHOP_ID}`, `:${AGENT_ID}`) : signString;
      expect(sent.body.sign).toBe(sha256(text + (agent ? AGENT_SECRET : TEST_SECRET)));
      expect(g.shopId(agent ? 'payout' : 'payment')).toBe(sent.body.shop_id);
    });

    it('scrubs either secret from an echoed gateway message', async () => {
      const g = new GatewayService(
        gatewayTestConfig(fake.baseUrl, {
          GATEWAY_PAYOUT_SHOP_ID: String(AGENT_ID),
          GATEWAY_PAYOUT_SECRET_KEY: AGENT_SECRET,
        }),
        CLOCK,
      );
      fake.respond = (_req, res) =>
        answer(
          res,
          400,
          JSON.stringify({
            result: false,
            error_code: 10,
            message: `bad sign, expected ...${AGENT_SECRET}... and ${TEST_SECRET}`,
            data: null,
          }),
        );
      try {
        const err = (await g.shopBalance().catch((e: unknown) => e)) as { gatewayMessage: string };
        expect(err.gatewayMessage).not.toContain(AGENT_SECRET);
        expect(err.gatewayMessage).not.toContain(TEST_SECRET);
      } finally {
        g.onModuleDestroy();
      }
    });
  });

  it('sends amounts as the decimal text given and extras as top-level fields', async () => {
    await gateway.createInvoice({ ...invoice, card, extras: { phone: '79001234567' } });
    const { rawBody, body } = fake.last();
    expect(rawBody).toContain('"amount":"100.10"');
    expect(body).toMatchObject({ phone: '79001234567', card, currency: 643 });
    expect(body).not.toHaveProperty('extras');
  });

  it('fills now with an explicit configured offset', async () => {
    const g = new GatewayService(
      gatewayTestConfig(fake.baseUrl, { GATEWAY_NOW_OFFSET: '-05:30' }),
      CLOCK,
    );
    await g.checkInvoice('order-1');
    g.onModuleDestroy();
    expect(fake.last().body.now).toBe('2026-11-21T08:53:41-05:30');
  });

  it('uses the configured path and signed fields of a call', async () => {
    const g = new GatewayService(
      gatewayTestConfig(fake.baseUrl, {
        GATEWAY_CALLS: JSON.stringify({
          'invoice/create-refund': { path: 'refund/create', signed: ['amount', 'invoice_id'] },
        }),
      }),
      CLOCK,
    );
    await g.createRefund({ invoice_id: 555, amount: '1.00', shop_refund_id: 'r-2' });
    g.onModuleDestroy();
    expect(fake.last().path).toBe('refund/create');
    expect(fake.last().body.sign).toBe(sha256('1.00:555' + TEST_SECRET));
  });

  it('refuses an amount that is not a decimal string, and extras that clash', async () => {
    await expect(gateway.tryInvoice({ ...invoice, amount: '1e3' })).rejects.toThrow(
      /decimal string/,
    );
    await expect(
      gateway.createInvoice({ ...invoice, extras: { shop_order_id: 'other' } }),
    ).rejects.toThrow(/clashes/);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('responses are parsed exactly', () => {
  it('keeps money as its JSON text, integers as numbers, and unknown fields', async () => {
    fake.respond = (_req, res) =>
      answer(
        res,
        200,
        okEnvelope(
          '{"shop_order_id":"order-1","status":4,"shop_amount":100.10,"client_price":0.0000001,' +
            '"shop_refund":0,"settlement_rate":null,"payment_id":9007199254740993,"new_field":{"x":1.5}}',
        ),
      );
    const record = await gateway.checkInvoice('order-1');
    expect(record).toEqual({
      shop_order_id: 'order-1',
      status: 4,
      shop_amount: '100.10',
      client_price: '0.0000001',
      shop_refund: '0',
      settlement_rate: null,
      payment_id: '9007199254740993',
      new_field: { x: '1.5' },
    });
  });

  it('amounts survive a response round trip to the digit', async () => {
    const decimal = fc
      .tuple(
        fc.bigInt({ min: 0n, max: 10n ** 15n }),
        fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 8 }),
      )
      .map(([whole, fraction]) => (fraction === '' ? `${whole}` : `${whole}.${fraction}`));
    await fc.assert(
      fc.asyncProperty(decimal, async (amount) => {
        fake.respond = (_req, res) =>
          answer(
            res,
            200,
            okEnvelope(
              `{"shop_id":2001,"balances":[{"currency":643,"available":${amount},"hold":${amount},"frozen":0}]}`,
            ),
          );
        const balance = await gateway.shopBalance();
        expect(balance.balances[0].available).toBe(amount);
        expect(balance.balances[0].hold).toBe(amount);
        expect(balance.balances[0].currency).toBe(643);
      }),
      { numRuns: 100 },
    );
  });
});

describe('observability', () => {
  it('logs one line per call without body, card, sign or secret, and observes the duration', async () => {
    const lines: unknown[] = [];
    // The call line goes to the line logger (values made here only), warnings to the main one.
    const sink = {
      info: (obj: unknown) => lines.push(obj),
      warn: (obj: unknown) => lines.push(obj),
    } as unknown as ReturnType<typeof logger.child>;
    const child = jest.spyOn(logger, 'child').mockReturnValue(sink);
    const callLine = jest
      .spyOn(LineLogger.prototype, 'info')
      .mockImplementation((obj: unknown) => void lines.push(obj));
    const g = new GatewayService(gatewayTestConfig(fake.baseUrl), CLOCK);
    child.mockRestore();
    await g.createInvoice({ ...invoice, card });
    callLine.mockRestore();
    g.onModuleDestroy();

    expect(lines).toHaveLength(1);
    const { durationMs, ...line } = lines[0] as Record<string, unknown>;
    expect(line).toEqual({
      path: 'invoice/create',
      shopId: TEST_SHOP_ID,
      result: 'ok',
      errorCode: undefined,
    });
    expect(typeof durationMs).toBe('number');
    const text = JSON.stringify(lines);
    for (const secretish of [TEST_SECRET, String(fake.last().body.sign), card.number, card.cvv]) {
      expect(text).not.toContain(secretish);
    }
    const metric = await gatewayCallDuration.get();
    const count = metric.values.find(
      (v) =>
        v.metricName === 'gateway_call_duration_seconds_count' &&
        v.labels.path === 'invoice/create' &&
        v.labels.outcome === 'ok',
    );
    expect(count?.value).toBeGreaterThanOrEqual(1);
  });
});
