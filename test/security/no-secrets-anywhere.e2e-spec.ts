import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { SandboxHandle } from '../../src/sandbox/sandbox.server';
import type { TestContext } from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';
import { logFileText } from '../support/log-file';

/**
 * The proof: a session of every money flow (card payment with 3-D Secure data, a saved and a
 * used recurrent token, a hold charged and a hold released, a refund, a payout to a card, the
 * balance), a forged notification and gateway errors; then the whole database (every text and
 * JSON value of every table), every log line of the service and every response body are
 * searched for the card number, the CVV, the raw tokens, the payout account in clear, the
 * gateway secret, any request signature and the API keys. None may be found.
 *
 * Request signatures are taken on the wire by a recording proxy in front of the sandbox; the
 * logger picks its destination (LOG_FILE) when first imported, so the app is imported only
 * after LOG_FILE is set.
 */
const CARD_NUMBER = '5555555555554444';
const CVV = '8462';
const PAYOUT_ACCOUNT = '4111111111111111';
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const FORGED_TOKEN = 'tok_forged_0123456789';
const FORGED_SIGN = 'f00d'.repeat(16);

type Json = Record<string, unknown>;

describe('no secret in any row, log line or response', () => {
  const logDir = mkdtempSync(join(tmpdir(), 'no-secrets-log-'));
  const logFile = join(logDir, 'service.log');
  const bodies: string[] = [];
  const wireSigns = new Set<string>();
  let app: typeof import('../support/app');
  let sandbox: SandboxHandle;
  let proxy: Server;
  let ctx: TestContext;
  let db: Client;

  beforeAll(async () => {
    process.env.LOG_FILE = logFile;
    process.env.LOG_LEVEL = 'debug';
    app = await import('../support/app');
    const { startSandbox } = await import('../../src/sandbox/sandbox.server');
    sandbox = await startSandbox({
      port: 0,
      shopId: app.SHOP_ID,
      secretKey: app.SECRET,
      payoutShopId: app.PAYOUT_SHOP_ID,
      payoutSecretKey: app.PAYOUT_SECRET,
      timeScale: 0.001,
    });
    proxy = await recordingProxy(sandbox, wireSigns);
    const proxyPort = (proxy.address() as AddressInfo).port;
    ctx = await app.startTestApp({
      sandbox,
      env: {
        GATEWAY_BASE_URL: `http://127.0.0.1:${proxyPort}/gateway/v1/`,
        METRICS_TOKEN,
        PAYOUT_POLL_INTERVAL_S: '0.2',
      },
    });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
    await new Promise((r) => proxy?.close(r));
    await sandbox?.close();
    delete process.env.LOG_FILE;
    delete process.env.LOG_LEVEL;
    rmSync(logDir, { recursive: true, force: true });
  });

  /** Every call goes through here, so every response body is kept for the search. */
  async function call(
    method: 'get' | 'post',
    path: string,
    opts: { body?: unknown; as?: 'shop' | 'admin' | 'none'; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: Json; text: string }> {
    let req = ctx.http[method](path);
    if (opts.as !== 'none') req = req.set(opts.as === 'admin' ? app.admin() : app.auth());
    for (const [k, v] of Object.entries(opts.headers ?? {})) req = req.set(k, v);
    const res = opts.body !== undefined ? await req.send(opts.body as object) : await req;
    bodies.push(res.text ?? '');
    return { status: res.status, body: (res.body ?? {}) as Json, text: res.text ?? '' };
  }

  async function until(shopOrderId: string, status: string): Promise<Json> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await call('get', `/api/v1/invoices/${shopOrderId}`);
      if (res.body.status === status || Date.now() > deadline) return res.body;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function pay(invoiceId: unknown): Promise<void> {
    await fetch(`${sandbox.origin}/sandbox/invoices/${String(invoiceId)}/pay`, { method: 'POST' });
  }

  async function dumpDatabase(): Promise<string> {
    const cols = await db.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type IN ('text', 'character varying', 'character', 'json', 'jsonb')`,
    );
    const parts: string[] = [];
    for (const c of cols.rows) {
      const r = await db.query<{ v: string | null }>(
        `SELECT "${c.column_name}"::text AS v FROM "${c.table_name}"`,
      );
      for (const row of r.rows) if (row.v !== null) parts.push(row.v);
    }
    return parts.join('\n');
  }

  it('after a session of every money flow', async () => {
    const run = Date.now();
    const card = {
      number: CARD_NUMBER,
      cardholder: 'CARD HOLDER',
      expiryMonth: '12',
      expiryYear: '30',
      cvv: CVV,
    };
    expect((await call('get', '/api/v1/payways?direction=payment')).status).toBe(200);
    expect((await call('get', '/api/v1/payways?direction=payout')).status).toBe(200);
    const quoted = await call('post', '/api/v1/invoices/quote', {
      body: { shopOrderId: `q-${run}`, amount: '150.00', currency: 643, payway: PAYMENT.card },
    });
    expect(quoted.status).toBe(200);

    // A card payment with 3-D Secure data that saves a recurrent token.
    const first = `card-${run}`;
    const created = await call('post', '/api/v1/invoices', {
      body: {
        shopOrderId: first,
        amount: '150.00',
        currency: 643,
        // A POST redirect: the payer link renders the form page (a GET one would only redirect).
        payway: PAYMENT.sandboxCard('post_redirect'),
        card,
        clientInfo: {
          browserLanguage: 'en',
          browserJavascriptEnabled: true,
          challengeWindowSize: '05',
        },
        savePaymentToken: true,
      },
    });
    expect(created.status).toBe(201);
    // The payer page (its link carries the pay token `t`).
    const payUrl = new URL(String(created.body.payUrl));
    expect((await call('get', `${payUrl.pathname}${payUrl.search}`, { as: 'none' })).status).toBe(
      200,
    );
    await pay(created.body.invoiceId);
    expect((await until(first, 'succeeded')).status).toBe('succeeded');
    await call('get', `/api/v1/invoices/${first}?refresh=true`);

    // The raw token is what the gateway notified; the shop's order system would hold it.
    const deliveries = sandbox.state.deliveries as Array<{ body: Record<string, unknown> }>;
    const rawToken = deliveries
      .map((d) => (typeof d.body.ps_data === 'string' ? (JSON.parse(d.body.ps_data) as Json) : {}))
      .map((p) => p.payment_token)
      .find((t): t is string => typeof t === 'string');
    expect(rawToken).toMatch(/^tok_/);
    const notificationSigns = deliveries
      .map((d) => d.body.sign)
      .filter((s): s is string => typeof s === 'string');
    expect(notificationSigns.length).toBeGreaterThan(0);

    // A recurrent charge with that token.
    const recurrent = `rec-${run}`;
    const charged = await call('post', '/api/v1/invoices', {
      body: {
        shopOrderId: recurrent,
        amount: '99.90',
        currency: 643,
        payway: PAYMENT.card,
        paymentToken: rawToken,
      },
    });
    expect(charged.status).toBe(201);
    expect((await until(recurrent, 'succeeded')).status).toBe('succeeded');

    // A hold charged, a hold released.
    for (const [id, action] of [
      [`hold-c-${run}`, 'charge'],
      [`hold-u-${run}`, 'unhold'],
    ] as const) {
      const held = await call('post', '/api/v1/invoices', {
        body: {
          shopOrderId: id,
          amount: '50.00',
          currency: 643,
          payway: PAYMENT.card,
          twoStep: true,
          card,
        },
      });
      expect(held.status).toBe(201);
      await pay(held.body.invoiceId);
      expect((await until(id, 'held')).status).toBe('held');
      expect((await call('post', `/api/v1/invoices/${id}/${action}`)).status).toBe(200);
    }

    // A refund of the card payment.
    const refund = await call('post', `/api/v1/invoices/${first}/refunds`, {
      body: { shopRefundId: `rf-${run}`, amount: '10.00' },
    });
    expect(refund.status).toBeLessThan(300);
    await call('get', `/api/v1/invoices/${first}/refunds`);

    // A payout to a card, polled to its end.
    const payoutBody = {
      amount: '100.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account: PAYOUT_ACCOUNT,
    };
    await call('post', '/api/v1/payouts/quote', {
      body: { amount: '100.00', amountType: 'ps_amount', shopCurrency: 643, payway: PAYOUT.card },
    });
    await call('post', '/api/v1/payouts/check-account', {
      body: { account: PAYOUT_ACCOUNT, amount: '100.00', payway: PAYOUT.card },
    });
    const payout = await call('post', '/api/v1/payouts', {
      body: { shopPaymentId: `po-${run}`, ...payoutBody },
    });
    expect(payout.status).toBe(202);
    const { PayoutPoller } = await import('../../src/payouts/payout-poller');
    for (let i = 0; i < 40; i += 1) {
      await ctx.service.app.get(PayoutPoller).runOnce();
      if ((await call('get', `/api/v1/payouts/po-${run}`)).body.status === 'succeeded') break;
      await new Promise((r) => setTimeout(r, 150));
    }
    expect((await call('get', `/api/v1/payouts/po-${run}`)).body.status).toBe('succeeded');
    await call('get', '/api/v1/payouts');
    await call('get', '/api/v1/balance');

    // Gateway errors: a fatal refusal, a server error.
    const fatal = await call('post', '/api/v1/invoices', {
      body: {
        shopOrderId: `fatal-${run}`,
        amount: '10.00',
        currency: 643,
        payway: PAYMENT.sandboxCard('fatal'),
        card,
      },
    });
    expect(fatal.status).toBe(502);
    const failedPayout = await call('post', '/api/v1/payouts', {
      body: {
        shopPaymentId: `po-err-${run}`,
        ...payoutBody,
        payway: PAYOUT.walletServerError,
        account: '+79001234567',
      },
    });
    expect(failedPayout.status).toBeGreaterThanOrEqual(200);

    // A forged notification carrying a token.
    const forged = await call('post', '/webhooks/gateway?type=invoice', {
      as: 'none',
      body: {
        shop_id: String(app.SHOP_ID),
        shop_order_id: first,
        status: 'success',
        ps_data: JSON.stringify({ payment_token: FORGED_TOKEN }),
        sign: FORGED_SIGN,
      },
    });
    expect(forged.status).toBe(401);

    // Operators' views, the stored notification replayed, metrics.
    const list = await call('get', '/api/v1/admin/notifications', { as: 'admin' });
    expect(list.status).toBe(200);
    const items = list.body.items as Array<{ id: string; verified: boolean }>;
    const verified = items.find((n) => n.verified);
    expect(verified).toBeDefined();
    expect(
      (await call('post', `/api/v1/admin/notifications/${verified!.id}/replay`, { as: 'admin' }))
        .status,
    ).toBe(200);
    await call('get', '/api/v1/admin/events', { as: 'admin' });
    await call('get', '/api/v1/admin/payouts', { as: 'admin' });
    await call('get', '/api/v1/admin/refunds', { as: 'admin' });
    await call('get', '/api/v1/invoices');
    for (const attempt of [
      undefined,
      `Bearer ${METRICS_TOKEN.slice(0, -1)}`,
      `Bearer ${METRICS_TOKEN}x`,
      `bearer ${METRICS_TOKEN}`,
      METRICS_TOKEN,
      `Bearer ${app.ADMIN_KEY}`,
    ]) {
      const headers: Record<string, string> =
        attempt === undefined ? {} : { Authorization: attempt };
      expect((await call('get', '/metrics', { as: 'none', headers })).status).toBe(401);
    }
    expect(
      (
        await call('get', '/metrics', {
          as: 'none',
          headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
        })
      ).status,
    ).toBe(200);

    // Not sandbox mode: no API description unless DOCS_ENABLED says so.
    expect((await call('get', '/docs', { as: 'none' })).status).toBe(404);
    expect((await call('get', '/docs-json', { as: 'none' })).status).toBe(404);

    const dump = await dumpDatabase();
    const log = await logFileText(logFile);
    const responses = bodies.join('\n');
    // The captures cover what they should.
    expect(dump).toContain(recurrent);
    expect(dump).toContain('k1.test1.');
    expect(log).toContain('gateway call');
    expect(log).toContain('signature does not verify');
    // http:// outside sandbox mode is allowed here only by ALLOW_INSECURE_HTTP, and said so.
    expect(log).toContain('GATEWAY_BASE_URL is http:// (ALLOW_INSECURE_HTTP=true)');
    expect(responses).toContain(first);
    expect(wireSigns.size).toBeGreaterThan(10);

    const secrets: Array<[string, string]> = [
      ['card number', CARD_NUMBER],
      ['payout account', PAYOUT_ACCOUNT],
      ['raw token', rawToken!],
      ['forged token', FORGED_TOKEN],
      ['gateway secret', app.SECRET],
      ['agent shop secret', app.PAYOUT_SECRET],
      ['shop API key', app.SHOP_KEY],
      ['admin API key', app.ADMIN_KEY],
      ['metrics token', METRICS_TOKEN],
      ['forged signature', FORGED_SIGN],
      ...[...wireSigns].map((s): [string, string] => ['request signature', s]),
      ...notificationSigns.map((s): [string, string] => ['notification signature', s]),
    ];
    const found = (text: string): string[] =>
      secrets.filter(([, s]) => text.includes(s)).map(([name]) => name);
    expect({ database: found(dump), log: found(log), responses: found(responses) }).toEqual({
      database: [],
      log: [],
      responses: [],
    });
    // The CVV is short: look for it as a value of its own, not inside a longer number or hex.
    const cvv = new RegExp(`(^|[^0-9a-f])${CVV}([^0-9a-f]|$)`, 'm');
    expect([cvv.test(dump), cvv.test(log), cvv.test(responses)]).toEqual([false, false, false]);
  }, 180_000);
});

/** Forwards everything to the sandbox and keeps each request's signature (header or body). */
async function recordingProxy(sandbox: SandboxHandle, signs: Set<string>): Promise<Server> {
  const target = new URL(sandbox.origin);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const header = req.headers.sign;
      if (typeof header === 'string' && header !== '') signs.add(header);
      try {
        const body = JSON.parse(raw.toString('utf8')) as { sign?: unknown };
        if (typeof body.sign === 'string' && body.sign !== '') signs.add(body.sign);
      } catch {
        // not JSON: no body signature
      }
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      // The sandbox's connection faults reach the service as the same fault.
      upstream.on('error', () => res.destroy());
      upstream.end(raw);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}
