import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from '../support/app';
import type { RawResponse } from '../support/hostile';
import { PAYMENT, PAYOUT } from '../support/payways';
import { logFileText } from '../support/log-file';
import { eventually } from '../support/webhook-receiver';

/**
 * Request ids and the access log, against the running app: the caller's safe x-request-id is
 * kept, anything else replaced; every problem body names the request id; one access line per
 * request under /api/v1, /admin, /pay and /webhooks, with the route's pattern and never a key, a
 * card number, a path value or a query value. The logger picks its destination (LOG_FILE) when
 * first imported, so the app is imported only after LOG_FILE is set.
 */
const CARD_NUMBER = '5555555555554444';
const QUERY_SECRET = 'query-secret-value-77';
const keyId = (k: string): string => createHash('sha256').update(k).digest('hex').slice(0, 12);

interface AccessLine {
  component: string;
  msg: string;
  method: string;
  route: string;
  status: number;
  durationMs: number;
  keyId?: string;
  requestId: string;
  ip: string;
}

describe('request ids and the access log', () => {
  const logDir = mkdtempSync(join(tmpdir(), 'access-log-'));
  const logFile = join(logDir, 'service.log');
  let app: typeof import('../support/app');
  let ctx: TestContext;
  // Imported after LOG_FILE is set (it loads the service's logger).
  let rawRequest: (
    url: string,
    method: string,
    target: string,
    headers?: Record<string, string>,
  ) => Promise<RawResponse>;

  beforeAll(async () => {
    process.env.LOG_FILE = logFile;
    process.env.LOG_LEVEL = 'info';
    app = await import('../support/app');
    rawRequest = (await import('../support/hostile')).rawRequest;
    // One trusted proxy hop: the client address comes from X-Forwarded-For, which a caller writes.
    ctx = await app.startTestApp({ env: { TRUST_PROXY: '1' } });
  }, 120000);

  afterAll(async () => {
    await ctx?.close();
    delete process.env.LOG_FILE;
    delete process.env.LOG_LEVEL;
    rmSync(logDir, { recursive: true, force: true });
  });

  const logText = (): string => readFileSync(logFile, 'utf8');
  const accessLines = (): AccessLine[] =>
    logText()
      .split('\n')
      .filter((l) => l.includes('"component":"access"'))
      .map((l) => JSON.parse(l) as AccessLine);
  const linesOf = (requestId: string): AccessLine[] =>
    accessLines().filter((l) => l.requestId === requestId);

  it("keeps the caller's safe request id: in the header, the problem body and exactly one access line", async () => {
    const id = 'shop-req.2026_11_28-0001';
    const res = await ctx.http
      .post('/api/v1/invoices')
      .set(app.auth())
      .set('x-request-id', id)
      .send({ shopOrderId: 'rid-1', amount: 100, currency: 643, payway: PAYMENT.card });
    expect(res.status).toBe(400);
    expect(res.headers['x-request-id']).toBe(id);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.body.requestId).toBe(id);
    await eventually(() => expect(linesOf(id)).toHaveLength(1), 5000);
    const [line] = linesOf(id);
    expect(line).toMatchObject({
      msg: 'request',
      method: 'POST',
      route: '/api/v1/invoices',
      status: 400,
      keyId: keyId(app.SHOP_KEY),
      ip: '127.0.0.1',
    });
    expect(typeof line.durationMs).toBe('number');
    expect(line.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('a 64-character id is kept; 65 characters, other characters, CR/LF, unicode or two headers get a new one', async () => {
    const kept = 'a'.repeat(64);
    const ok = await rawRequest(ctx.url, 'GET', '/api/v1/invoices/none', {
      Authorization: `Bearer ${app.SHOP_KEY}`,
      'X-Request-Id': kept,
    });
    expect(ok.headers['x-request-id']).toBe(kept);
    expect((JSON.parse(ok.body) as { requestId: string }).requestId).toBe(kept);

    const hostile: Array<Record<string, string>> = [
      { 'X-Request-Id': 'a'.repeat(65) },
      { 'X-Request-Id': 'id with spaces' },
      { 'X-Request-Id': 'id/../../etc' },
      { 'X-Request-Id': 'id"},"admin":true,"x":"' },
      { 'X-Request-Id': 'id\u00e9\u202e' },
      { 'X-Request-Id': 'id%0d%0aSet-Cookie:x=1' },
      { 'X-Request-Id': 'first', 'x-request-id': 'second' },
      { 'X-Request-Id': '' },
    ];
    for (const headers of hostile) {
      const res = await rawRequest(ctx.url, 'GET', '/api/v1/invoices/none', {
        Authorization: `Bearer ${app.SHOP_KEY}`,
        ...headers,
      });
      expect(res.status).toBe(404);
      const given = res.headers['x-request-id'];
      expect(given).toMatch(/^[0-9a-f-]{36}$/);
      expect((JSON.parse(res.body) as { requestId: string }).requestId).toBe(given);
      await eventually(() => expect(linesOf(given)).toHaveLength(1), 5000);
    }
    // A header with a bare CR/LF in it never reaches a route: the parser's refusal still names a request id.
    const split = await rawRequest(ctx.url, 'GET', '/api/v1/invoices/none', {
      'X-Request-Id': 'a\rInjected: 1',
    });
    expect(split.status).toBe(400);
    expect(split.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(split.headers.injected).toBeUndefined();
    expect((JSON.parse(split.body) as { requestId: string }).requestId).toBe(
      split.headers['x-request-id'],
    );
    expect(logText()).not.toContain('Injected');
    expect(logText()).not.toContain('id with spaces');
    expect(logText()).not.toContain('"admin":true');
  });

  it('every problem body names its request: 401, 404, 415, malformed JSON, unknown route', async () => {
    const answers = await Promise.all([
      ctx.http.get('/api/v1/invoices'),
      ctx.http.get('/api/v1/invoices/missing').set(app.auth()),
      ctx.http.post('/api/v1/invoices').set(app.auth()).set('content-type', 'text/plain').send('x'),
      ctx.http
        .post('/api/v1/invoices')
        .set(app.auth())
        .set('content-type', 'application/json')
        .send('{"a":'),
      ctx.http.get('/api/v1/nowhere').set(app.auth()),
      ctx.http.get('/api/v1/admin/webhook-deliveries').set(app.auth()),
    ]);
    expect(answers.map((a) => a.status)).toEqual([401, 404, 415, 400, 404, 403]);
    for (const a of answers) {
      expect(a.body.requestId).toBe(a.headers['x-request-id']);
      expect(a.body.requestId).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('logs /admin, /pay and /webhooks requests by route pattern; never a key, card number, path value or query value', async () => {
    const created = await ctx.http
      .post('/api/v1/invoices')
      .set(app.auth())
      .set('x-request-id', 'card-create-1')
      .send({
        shopOrderId: `card-${Date.now()}`,
        amount: '10.00',
        currency: 643,
        payway: PAYMENT.card,
        description: 'x',
      });
    expect(created.status).toBe(201);
    const payout = await ctx.http
      .post('/api/v1/payouts')
      .set(app.auth())
      .set('x-request-id', 'payout-1')
      .send({
        shopPaymentId: `po-${Date.now()}`,
        amount: '10.00',
        amountType: 'ps_amount',
        shopCurrency: 643,
        payway: PAYOUT.card,
        account: CARD_NUMBER,
      });
    expect(payout.status).toBeLessThan(500);
    await ctx.http
      .get(`/api/v1/invoices?limit=5&metadata[secret]=${QUERY_SECRET}`)
      .set(app.auth())
      .set('x-request-id', 'query-1');
    await ctx.http
      .get(`/api/v1/admin/webhook-deliveries?state=failed&x=${QUERY_SECRET}`)
      .set(app.admin())
      .set('x-request-id', 'admin-api-1');
    await ctx.http.get('/admin').set('x-request-id', 'console-1');
    await ctx.http.get(`/pay/${QUERY_SECRET}-order?t=${QUERY_SECRET}`).set('x-request-id', 'pay-1');
    await ctx.http
      .post('/webhooks/gateway?type=invoice')
      .set('x-request-id', 'hook-1')
      .send({ shop_order_id: QUERY_SECRET, sign: 'x' });
    await ctx.http.get('/health').set('x-request-id', 'health-1');

    await eventually(() => expect(linesOf('hook-1')).toHaveLength(1), 5000);
    expect(linesOf('query-1')[0]).toMatchObject({
      route: '/api/v1/invoices',
      method: 'GET',
      status: 200,
    });
    expect(linesOf('admin-api-1')[0]).toMatchObject({
      route: '/api/v1/admin/webhook-deliveries',
      keyId: keyId(app.ADMIN_KEY),
    });
    expect(linesOf('console-1')[0]).toMatchObject({ route: '/admin', method: 'GET' });
    expect(linesOf('pay-1')[0]).toMatchObject({ route: '/pay/:shopOrderId', method: 'GET' });
    expect(linesOf('hook-1')[0]).toMatchObject({ route: '/webhooks/gateway', method: 'POST' });
    expect(linesOf('hook-1')[0].keyId).toBeUndefined();
    expect(linesOf('health-1')).toHaveLength(0);

    const access = logText()
      .split('\n')
      .filter((l) => l.includes('"component":"access"'))
      .join('\n');
    for (const secret of [app.SHOP_KEY, app.ADMIN_KEY, CARD_NUMBER, QUERY_SECRET, 'Bearer', '?'])
      expect(access).not.toContain(secret);
  });

  it('the client address is the one a trusted proxy names; text in X-Forwarded-For that is no address is not logged', async () => {
    await ctx.http
      .get('/api/v1/invoices/none')
      .set(app.auth())
      .set('x-request-id', 'xff-ok')
      .set('x-forwarded-for', '203.0.113.9');
    await ctx.http
      .get('/api/v1/invoices/none')
      .set(app.auth())
      .set('x-request-id', 'xff-card')
      .set('x-forwarded-for', CARD_NUMBER);
    await ctx.http
      .get('/api/v1/invoices/none')
      .set(app.auth())
      .set('x-request-id', 'xff-key')
      .set('x-forwarded-for', `Bearer ${app.SHOP_KEY}`);
    await eventually(() => expect(linesOf('xff-key')).toHaveLength(1), 5000);
    expect(linesOf('xff-ok')[0].ip).toBe('203.0.113.9');
    expect(linesOf('xff-card')[0].ip).toBe('[not an address]');
    expect(linesOf('xff-key')[0].ip).toBe('[not an address]');
    const access = logText()
      .split('\n')
      .filter((l) => l.includes('"component":"access"'))
      .join('\n');
    expect(access).not.toContain(CARD_NUMBER);
    expect(access).not.toContain(app.SHOP_KEY);
  });
  it("a verified notification's line masks a card-number-like order id, as every log line does", async () => {
    const { signNotificationFields } = await import('../../src/gateway');
    const fields: Record<string, string> = {
      shop_id: String(app.SHOP_ID),
      shop_order_id: '4111111111111111',
      shop_amount: '100.00',
      shop_currency: '643',
      payment_id: '987650',
      client_price: '104.00',
      ps_currency: '643',
      payway: PAYMENT.card,
      created: '2026-01-01T10:00:00+03:00',
      updated: '2026-01-01T10:05:00+03:00',
      status: 'success',
    };
    const res = await ctx.http
      .post('/webhooks/gateway?type=invoice')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ ...fields, sign: signNotificationFields(fields, app.SECRET) }));
    expect(res.status).toBeLessThan(500);
    const received = async (): Promise<Record<string, unknown>[]> =>
      (await logFileText(logFile))
        .split('\n')
        .filter((l) => l.includes('"msg":"notification received"'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    await eventually(async () => expect(await received()).toHaveLength(1), 5000);
    const [line] = await received();
    expect(line).toMatchObject({
      level: 'info',
      component: 'notifications',
      shopOrderId: '411111******1111',
    });
    expect(await logFileText(logFile)).not.toContain('4111111111111111');
  });
});
