// Over 500 lines on purpose: one app and database, started once in its beforeAll, serve all its
// tests; a split would start another.
import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { signNotificationFields } from '../../src/gateway';
import { admin, auth, SECRET, SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';
import { rawRequest, sandboxRequests } from '../support/hostile';
import { eventually } from '../support/webhook-receiver';

/**
 * Errors that teach, replays that say so, metadata, and idempotency conflicts (capped, and no
 * oracle): what a new integrator meets on the create routes.
 */
const PROBLEM = 'https://problems.piastrix-orchestrator.dev/';
const CARD = '4111111111111111';
const REPLAYED = 'idempotent-replayed';

let ctx: TestContext;
let db: Client;

beforeAll(async () => {
  ctx = await startTestApp();
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

afterEach(async () => {
  await control('POST', '/sandbox/settings', { suppressNotifications: false });
});

// ------------------------------------------------------------ helpers

async function control(method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<void> {
  await fetch(ctx.sandbox.origin + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

// A UUID's groups joined by 'x', not '-': dashes let its all-digit groups read as one digit run,
// which passed the Luhn check often enough to be refused as a card number in metadata (seen once
// in a full run). No group of a UUID has 13 digits alone.
const id = (prefix: string): string => `${prefix}-${randomUUID().replace(/-/g, 'x')}`;

function invoiceBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    shopOrderId: id('ord'),
    amount: '100.00',
    currency: 643,
    payway: PAYMENT.card,
    ...overrides,
  };
}

function payoutBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    shopPaymentId: id('po'),
    amount: '1000.00',
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway: PAYOUT.card,
    account: CARD,
    ...overrides,
  };
}

const createInvoice = (body: unknown) =>
  ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send(body as object);
const createPayout = (body: unknown) =>
  ctx.http
    .post('/api/v1/payouts')
    .set(auth())
    .send(body as object);
const createRefund = (shopOrderId: string, body: unknown) =>
  ctx.http
    .post(`/api/v1/invoices/${shopOrderId}/refunds`)
    .set(auth())
    .send(body as object);


/** An invoice paid at once (the sandbox completes it without a payer). */
async function paidInvoice(): Promise<{ shopOrderId: string; invoiceId: string }> {
  const shopOrderId = id('paid');
  const res = await createInvoice({
    shopOrderId,
    amount: '100.00',
    currency: 643,
    payway: PAYMENT.cardSuccess,
  });
  expect(res.status).toBe(201);
  await eventually(async () => {
    const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
    expect(got.body.status).toBe('succeeded');
  });
  return { shopOrderId, invoiceId: String(res.body.invoiceId) };
}

async function metric(name: string, labels: string): Promise<number> {
  const res = await ctx.http.get('/metrics').set(admin());
  const line = String(res.text)
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && labels.split(',').every((p) => l.includes(p)));
  return line ? Number(line.split(' ').pop()) : 0;
}

// ------------------------------------------------------------ 415

describe('a body that is not JSON on a JSON route is 415 naming Content-Type: application/json', () => {
  const routes = (): Array<[string, string]> => [
    ['invoice create', '/api/v1/invoices'],
    ['invoice quote', '/api/v1/invoices/quote'],
    ['refund create', `/api/v1/invoices/${id('x')}/refunds`],
    ['admin refund create', `/api/v1/admin/invoices/${id('x')}/refunds`],
    ['payout create', '/api/v1/payouts'],
  ];

  it.each([
    ['form (curl -d)', 'application/x-www-form-urlencoded'],
    ['text/plain', 'text/plain'],
    ['a JSON look-alike type', 'application/jsonx'],
    ['JSON patch type', 'application/merge-patch+json'],
  ])('%s', async (_name, type) => {
    for (const [, path] of routes()) {
      const as = path.includes('/admin/') ? admin() : auth();
      const res = await ctx.http
        .post(path)
        .set(as)
        .set('content-type', type)
        .send('shopOrderId=o-1&amount=100&currency=643');
      expect(res.status).toBe(415);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.body.type).toBe(PROBLEM + 'unsupported-media-type');
      expect(res.body.detail).toContain('Content-Type: application/json');
      expect(res.body.errors).toEqual([
        { field: 'Content-Type', message: 'must be application/json' },
      ]);
    }
  });

  it('no Content-Type at all, the absolute request form and a chunked body are refused the same way', async () => {
    const { port } = new URL(ctx.url);
    const body = 'shopOrderId=o-1&amount=100';
    const plain = await rawRequest(ctx.url, 'POST', '/api/v1/invoices', auth(), body);
    expect(plain.status).toBe(415);
    const absolute = await rawRequest(
      ctx.url,
      'POST',
      `http://127.0.0.1:${port}/api/v1/payouts`,
      auth(),
      body,
    );
    expect(absolute.status).toBe(415);
    expect(JSON.parse(absolute.body).type).toBe(PROBLEM + 'unsupported-media-type');
  });

  it('JSON with a charset parameter or in upper case is taken; a body-less charge is unaffected', async () => {
    const ok = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .set('content-type', 'Application/JSON; charset=utf-8')
      .send(JSON.stringify(invoiceBody()));
    expect(ok.status).toBe(201);
    const charge = await ctx.http.post(`/api/v1/invoices/${id('none')}/charge`).set(auth());
    expect(charge.status).toBe(404);
  });

  it('the gateway webhook still takes form notifications', async () => {
    await control('POST', '/sandbox/settings', { suppressNotifications: true });
    const { shopOrderId, invoiceId } = await paidInvoice();
    const shopRefundId = id('rf');
    const created = await createRefund(shopOrderId, { shopRefundId, amount: '50.00' });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('WAITING');
    const fields: Record<string, string> = {
      shop_id: String(SHOP_ID),
      shop_refund_id: shopRefundId,
      invoice_id: invoiceId,
      shop_order_id: shopOrderId,
      status: 'SUCCESS',
      amount: '50.00',
      currency: 'RUB',
      error_code: '0',
      created_at: '2026-01-01T10:00:00',
      processed_at: '2026-01-01T10:05:00',
    };
    const res = await ctx.http
      .post('/webhooks/gateway?type=refund')
      .set('content-type', 'application/x-www-form-urlencoded')
      .send(
        new URLSearchParams({ ...fields, sign: signNotificationFields(fields, SECRET) }).toString(),
      );
    expect(res.status).toBe(200);
    const list = await ctx.http.get(`/api/v1/invoices/${shopOrderId}/refunds`).set(auth());
    expect(list.body.items[0]).toMatchObject({ shopRefundId, status: 'SUCCESS' });

    // Replays say so, and a repeated refund create answers the refund as it is now.
    const again = await createRefund(shopOrderId, { shopRefundId, amount: '50.0' });
    expect(again.status).toBe(201);
    expect(again.headers[REPLAYED]).toBe('true');
    expect(again.body).toMatchObject({ shopRefundId, status: 'SUCCESS', amount: '50.00' });
    expect(created.headers[REPLAYED]).toBeUndefined();
  });
});

// ------------------------------------------------------------ currencies and payways

describe('currencies: ISO 4217 numeric or alphabetic in, both out', () => {
  it.each([[643], ['643'], ['RUB'], ['rub'], ['Rub']])(
    'invoice currency %p → currency 643, currencyCode RUB',
    async (currency) => {
      const res = await createInvoice(invoiceBody({ currency }));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ currency: 643, currencyCode: 'RUB' });
      const got = await ctx.http.get(`/api/v1/invoices/${res.body.shopOrderId}`).set(auth());
      expect(got.body).toMatchObject({ currency: 643, currencyCode: 'RUB' });
    },
  );

  it('a payout takes shopCurrency "rub" and answers shopCurrency 643 with shopCurrencyCode RUB; the gateway gets 643', async () => {
    const body = payoutBody({ shopCurrency: 'rub' });
    const res = await createPayout(body);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ shopCurrency: 643, shopCurrencyCode: 'RUB' });
    const sent = (await sandboxRequests(ctx)).filter(
      (r) => r.path === 'withdraw/create' && r.body.shop_payment_id === body.shopPaymentId,
    );
    expect(sent).toHaveLength(1);
    expect(Number(sent[0].body.shop_currency)).toBe(643);
  });

  it('a quote takes "RUB" too', async () => {
    const res = await ctx.http
      .post('/api/v1/invoices/quote')
      .set(auth())
      .send(invoiceBody({ currency: 'RUB' }));
    expect(res.status).toBe(200);
  });

  it.each([['RUR'], ['XYZ'], ['rouble'], [64.3], [0], [1000], [true], [['RUB']], ['']])(
    'currency %p is a 400 that names ISO 4217 and shows 643 for RUB, as one message',
    async (currency) => {
      for (const res of [
        await createInvoice(invoiceBody({ currency })),
        await createPayout(payoutBody({ shopCurrency: currency })),
        await createRefund(id('x'), { shopRefundId: id('rf'), amount: '1.00', currency }),
      ]) {
        expect(res.status).toBe(400);
        const errs = (res.body.errors as Array<{ field: string; message: string }>).filter((e) =>
          ['currency', 'shopCurrency'].includes(e.field),
        );
        expect(errs).toHaveLength(1);
        expect(errs[0].message).toContain('ISO 4217');
        expect(errs[0].message).toContain('643');
        expect(errs[0].message).toContain('"RUB"');
      }
    },
  );

  it('a refund currency check takes "RUB" for a RUB invoice and answers with both codes', async () => {
    const { shopOrderId } = await paidInvoice();
    const res = await createRefund(shopOrderId, {
      shopRefundId: id('rf'),
      amount: '10.00',
      currency: 'RUB',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ currency: 643, currencyCode: 'RUB' });
    const usd = await createRefund(shopOrderId, {
      shopRefundId: id('rf'),
      amount: '10.00',
      currency: 'USD',
    });
    expect(usd.status).toBe(400);
    expect(usd.body.errors[0].field).toBe('currency');
  });

  it('an unknown payway points to GET /api/v1/payways (payments and payouts)', async () => {
    const inv = await createInvoice(invoiceBody({ payway: 'nope_rub' }));
    expect(inv.status).toBe(400);
    expect(inv.body.errors).toContainEqual({
      field: 'payway',
      message: expect.stringContaining('GET /api/v1/payways?direction=payment'),
    });
    const po = await createPayout(payoutBody({ payway: 'nope_rub' }));
    expect(po.status).toBe(400);
    expect(po.body.errors).toContainEqual({
      field: 'payway',
      message: expect.stringContaining('GET /api/v1/payways?direction=payout'),
    });
  });
});

// ------------------------------------------------------------ conflicts and replays

describe('idempotency: replays say so, conflicts name the fields', () => {
  it('invoice: a replay carries Idempotent-Replayed (a first answer never); "100.0" = "100.00"; another amount is named', async () => {
    const body = invoiceBody({ amount: '100.00', metadata: { cart: 'c-1' } });
    const first = await createInvoice(body);
    expect(first.status).toBe(201);
    expect(first.headers[REPLAYED]).toBeUndefined();
    const again = await createInvoice({ ...body, amount: '100.0', currency: 'RUB' });
    expect(again.status).toBe(201);
    expect(again.headers[REPLAYED]).toBe('true');
    expect(again.body).toEqual(first.body);

    const other = await createInvoice({ ...body, amount: '100.01', description: 'other' });
    expect(other.status).toBe(409);
    expect(other.headers[REPLAYED]).toBeUndefined();
    expect(other.body.type).toBe(PROBLEM + 'idempotency-conflict');
    const named = (other.body.errors as Array<{ field: string; message: string }>).filter(
      (e) => e.message === 'differs from the first request',
    );
    expect(named.map((e) => e.field)).toEqual(['amount', 'description']);

    const meta = await createInvoice({ ...body, metadata: { cart: 'c-2' } });
    expect(meta.status).toBe(409);
    expect(meta.body.errors).toContainEqual({
      field: 'metadata',
      message: 'differs from the first request',
    });
  });

  it('invoice: a replayed problem answer (rejected at create) carries the header too', async () => {
    const body = invoiceBody({ payway: PAYMENT.cardCreateDeclined });
    const first = await createInvoice(body);
    expect(first.status).toBeGreaterThanOrEqual(400);
    expect(first.headers[REPLAYED]).toBeUndefined();
    const again = await createInvoice(body);
    expect(again.status).toBe(first.status);
    expect(again.headers['content-type']).toContain('application/problem+json');
    expect(again.headers[REPLAYED]).toBe('true');
  });

  it("invoice: a problem answer, first or replayed, carries THIS request's requestId, never the stored one", async () => {
    const body = invoiceBody({ payway: PAYMENT.cardCreateDeclined });
    const first = await createInvoice(body).set('x-request-id', 'first-req.1');
    expect(first.status).toBeGreaterThanOrEqual(400);
    expect(first.body.requestId).toBe('first-req.1');
    const again = await createInvoice(body).set('x-request-id', 'second-req_2');
    expect(again.status).toBe(first.status);
    expect(again.headers[REPLAYED]).toBe('true');
    expect(again.headers['x-request-id']).toBe('second-req_2');
    expect(again.body.requestId).toBe('second-req_2');
    // Without an id of its own (or with one refused) the repeat is given a new one, never the first's.
    const third = await createInvoice(body).set('x-request-id', 'bad id with spaces');
    expect(third.headers[REPLAYED]).toBe('true');
    expect(third.body.requestId).toBe(third.headers['x-request-id']);
    expect(third.body.requestId).not.toBe('first-req.1');
    const fourth = await createInvoice(body);
    expect(fourth.body.requestId).toBe(fourth.headers['x-request-id']);
    expect(fourth.body.requestId).not.toBe('second-req_2');
    // The same problem otherwise: only the request id differs.
    const rest = (b: Record<string, unknown>) => ({ ...b, requestId: undefined });
    expect(rest(again.body)).toEqual(rest(first.body));
    // The stored answer keeps no request id: it belongs to no later request.
    const stored = await db.query(`SELECT response_body FROM invoices WHERE shop_order_id = $1`, [
      body.shopOrderId,
    ]);
    expect(stored.rows[0].response_body.requestId).toBeUndefined();
  });

  it('refund: a replay carries the header; another amount by value is named, a respelled one is not', async () => {
    const { shopOrderId } = await paidInvoice();
    const shopRefundId = id('rf');
    const first = await createRefund(shopOrderId, { shopRefundId, amount: '20.00' });
    expect(first.status).toBe(201);
    expect(first.headers[REPLAYED]).toBeUndefined();
    const again = await createRefund(shopOrderId, { shopRefundId, amount: '20' });
    expect(again.status).toBe(201);
    expect(again.headers[REPLAYED]).toBe('true');
    const other = await createRefund(shopOrderId, { shopRefundId, amount: '20.01' });
    expect(other.status).toBe(409);
    expect(other.body.errors).toEqual([
      { field: 'amount', message: 'differs from the first request' },
    ]);
  });

  it('refund: a replayed problem answer carries the header', async () => {
    const { shopOrderId } = await paidInvoice();
    await control('POST', '/sandbox/faults', { path: 'invoice/create-refund', fault: 'fatal' });
    const body = { shopRefundId: id('rf'), amount: '5.00' };
    const first = await createRefund(shopOrderId, body);
    await control('DELETE', '/sandbox/faults');
    expect(first.status).toBe(422);
    expect(first.headers[REPLAYED]).toBeUndefined();
    const again = await createRefund(shopOrderId, body).set('x-request-id', 'refund-repeat-1');
    expect(again.status).toBe(first.status);
    expect(again.headers[REPLAYED]).toBe('true');
    expect(again.body.requestId).toBe('refund-repeat-1');
  });

  it('payout: a 202 replay carries the header; "1000" = "1000.00"', async () => {
    const body = payoutBody();
    const first = await createPayout(body);
    expect(first.status).toBe(202);
    expect(first.headers[REPLAYED]).toBeUndefined();
    const again = await createPayout({ ...body, amount: '1000' });
    expect(again.status).toBe(202);
    expect(again.headers[REPLAYED]).toBe('true');
  });
});

describe('idempotency conflicts are capped and reveal nothing useful', () => {
  it('payout: a conflict names only the secret fields this repeat sent', async () => {
    const body = payoutBody();
    expect((await createPayout(body)).status).toBe(202);
    const accountOnly = await createPayout({ ...body, amount: '999.00' });
    expect(accountOnly.status).toBe(409);
    expect(accountOnly.body.errors).toEqual([
      { field: 'amount', message: 'differs from the first request' },
      { field: 'account', message: expect.stringContaining('secret') },
    ]);
    const withDetails = await createPayout({ ...body, accountDetails: { bik: '044525225' } });
    expect(withDetails.status).toBe(409);
    expect(withDetails.body.errors).toEqual([
      { field: 'account, accountDetails', message: expect.stringContaining('secret') },
    ]);
    // Details sent as null are not sent.
    const nullDetails = await createPayout({ ...body, amount: '998.00', accountDetails: null });
    expect(nullDetails.status).toBe(409);
    expect(nullDetails.body.errors).toEqual([
      { field: 'amount', message: 'differs from the first request' },
      { field: 'account', message: expect.stringContaining('secret') },
    ]);
  });

  it('payout account oracle: a right guess with a wrong amount answers exactly like a wrong guess; after 3 conflicts even the original is locked', async () => {
    const body = payoutBody({ amount: '1000.00' });
    expect((await createPayout(body)).status).toBe(202);
    const before = await metric('idempotency_conflicts_total', 'object="payout",result="conflict"');

    const strip = (b: Record<string, unknown>) => ({
      status: 202,
      type: b.type,
      title: b.title,
      errors: b.errors,
      detail: b.detail,
    });
    const rightAccountWrongAmount = await createPayout({ ...body, amount: '999.00' });
    const wrongAccountWrongAmount = await createPayout({
      ...body,
      amount: '999.00',
      account: '4111111111111129',
    });
    expect(rightAccountWrongAmount.status).toBe(409);
    expect(wrongAccountWrongAmount.status).toBe(409);
    expect(strip(rightAccountWrongAmount.body)).toEqual(strip(wrongAccountWrongAmount.body));
    expect(rightAccountWrongAmount.body.errors).toEqual([
      { field: 'amount', message: 'differs from the first request' },
      { field: 'account', message: expect.stringContaining('secret') },
    ]);
    // A guess that fails the payway's regex is a conflict like any other, never a 400 telling it apart.
    const badGuess = await createPayout({ ...body, account: 'not-a-card' });
    expect(badGuess.status).toBe(409);
    expect(badGuess.body.errors).toEqual([
      { field: 'account', message: expect.stringContaining('secret') },
    ]);
    expect(JSON.stringify(badGuess.body)).not.toContain(CARD);

    // Three conflicts: every later repeat is locked, the exact original included.
    const original = await createPayout(body);
    expect(original.status).toBe(409);
    expect(original.body.type).toBe(PROBLEM + 'idempotency-locked');
    expect(original.headers[REPLAYED]).toBeUndefined();
    const guess = await createPayout({ ...body, account: '4111111111111137' });
    expect(guess.body.type).toBe(PROBLEM + 'idempotency-locked');

    const row = await db.query(
      `SELECT idempotency_conflicts, needs_attention, attention_reason FROM payouts WHERE shop_payment_id = $1`,
      [body.shopPaymentId],
    );
    expect(row.rows[0]).toMatchObject({ idempotency_conflicts: 3, needs_attention: true });
    expect(String(row.rows[0].attention_reason)).toMatch(/^idempotency-conflicts: /);
    const attention = await ctx.http.get('/api/v1/admin/attention').set(admin());
    expect(JSON.stringify(attention.body)).toContain(String(body.shopPaymentId));
    const audited = await db.query(
      `SELECT key_id, details FROM events WHERE entity_type = 'payout' AND entity_id = $1 AND details->>'idempotency' = 'conflict'`,
      [body.shopPaymentId],
    );
    expect(audited.rows).toHaveLength(3);
    for (const r of audited.rows) expect(r.key_id).toMatch(/^[0-9a-f]{12}$/);
    expect(await metric('idempotency_conflicts_total', 'object="payout",result="conflict"')).toBe(
      before + 3,
    );
    expect(
      await metric('idempotency_conflicts_total', 'object="payout",result="locked"'),
    ).toBeGreaterThanOrEqual(2);
  });

  it('concurrent conflicting repeats never pass the limit: exactly 3 conflicts, the rest locked', async () => {
    const body = payoutBody();
    expect((await createPayout(body)).status).toBe(202);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => createPayout({ ...body, amount: `${900 + i}.00` })),
    );
    const types = answers.map((a) => a.body.type as string);
    expect(types.filter((t) => t === PROBLEM + 'idempotency-conflict')).toHaveLength(3);
    expect(types.filter((t) => t === PROBLEM + 'idempotency-locked')).toHaveLength(5);
    const row = await db.query(
      `SELECT idempotency_conflicts FROM payouts WHERE shop_payment_id = $1`,
      [body.shopPaymentId],
    );
    expect(row.rows[0].idempotency_conflicts).toBe(3);
  });

  it('invoices and refunds lock the same way, and an identical repeat is locked too; a final status does not clear the flag', async () => {
    const inv = invoiceBody({ payway: PAYMENT.cardSuccess });
    expect((await createInvoice(inv)).status).toBe(201);
    for (const amount of ['1.00', '2.00', '3.00']) {
      const r = await createInvoice({ ...inv, amount });
      expect(r.body.type).toBe(PROBLEM + 'idempotency-conflict');
      // No secret field was sent: none is named.
      expect(r.body.errors).toEqual([
        { field: 'amount', message: 'differs from the first request' },
      ]);
    }
    expect((await createInvoice(inv)).body.type).toBe(PROBLEM + 'idempotency-locked');
    await eventually(async () => {
      const got = await ctx.http
        .get(`/api/v1/invoices/${inv.shopOrderId}?refresh=true`)
        .set(auth());
      expect(got.body.status).toBe('succeeded');
      expect(got.body).toMatchObject({
        needsAttention: true,
        attentionReason: expect.stringMatching(/^idempotency-conflicts/),
      });
    });

    const { shopOrderId } = await paidInvoice();
    const rf = { shopRefundId: id('rf'), amount: '10.00' };
    expect((await createRefund(shopOrderId, rf)).status).toBe(201);
    for (const amount of ['11.00', '12.00', '13.00'])
      expect((await createRefund(shopOrderId, { ...rf, amount })).body.type).toBe(
        PROBLEM + 'idempotency-conflict',
      );
    expect((await createRefund(shopOrderId, rf)).body.type).toBe(PROBLEM + 'idempotency-locked');
  });
});

// ------------------------------------------------------------ metadata

describe('metadata on invoices, refunds and payouts', () => {
  const META = { orderRef: 'A-1', customer: 'c-42' };

  it('round trip: stored, returned on create, GET and lists, carried in events, never sent to the gateway', async () => {
    const inv = invoiceBody({ payway: PAYMENT.cardSuccess, metadata: META });
    const created = await createInvoice(inv);
    expect(created.status).toBe(201);
    expect(created.body.metadata).toEqual(META);
    const got = await ctx.http.get(`/api/v1/invoices/${inv.shopOrderId}`).set(auth());
    expect(got.body.metadata).toEqual(META);
    const plain = await createInvoice(invoiceBody());
    expect(plain.body.metadata).toEqual({});

    await eventually(async () => {
      const r = await ctx.http.get(`/api/v1/invoices/${inv.shopOrderId}?refresh=true`).set(auth());
      expect(r.body.status).toBe('succeeded');
    });
    const rf = await createRefund(String(inv.shopOrderId), {
      shopRefundId: id('rf'),
      amount: '1.00',
      metadata: { ticket: 'T-9' },
    });
    expect(rf.status).toBe(201);
    expect(rf.body.metadata).toEqual({ ticket: 'T-9' });
    const po = await createPayout(payoutBody({ metadata: { seller: 's-1' } }));
    expect(po.status).toBe(202);
    expect(po.body.metadata).toEqual({ seller: 's-1' });

    const events = await db.query(
      `SELECT entity_type, data FROM events WHERE type IS NOT NULL AND entity_id IN ($1, $2, $3)`,
      [inv.shopOrderId, rf.body.shopRefundId, po.body.shopPaymentId],
    );
    expect(new Set(events.rows.map((e) => e.entity_type))).toEqual(
      new Set(['invoice', 'refund', 'payout']),
    );
    for (const e of events.rows) expect(Object.keys(e.data.metadata).length).toBeGreaterThan(0);

    // No request to the gateway carries a metadata key or any of its values (compared as whole
    // values: a short value may well appear inside some UUID of the log).
    const values = new Set(['A-1', 'c-42', 'T-9', 's-1']);
    for (const r of await sandboxRequests(ctx)) {
      const body = r.body as Record<string, unknown>;
      expect(Object.keys(body)).not.toContain('metadata');
      expect(Object.keys(body).filter((k) => k === 'orderRef' || k === 'customer')).toEqual([]);
      for (const v of Object.values(body)) expect(values.has(String(v))).toBe(false);
    }
  });

  it("lists filter by ?metadata[key]=value (invoices, an invoice's refunds, admin refunds, payouts)", async () => {
    const ref = id('ref');
    const inv = invoiceBody({
      payway: PAYMENT.cardSuccess,
      metadata: { orderRef: ref, kind: 'x' },
    });
    // Both created (a failure shows its answer: the list below says nothing of why a row is missing).
    for (const body of [inv, invoiceBody({ metadata: { orderRef: `${ref}-other` } })]) {
      const created = await createInvoice(body);
      expect({ status: created.status, body: created.status === 201 ? 'created' : created.body }).toEqual({
        status: 201,
        body: 'created',
      });
    }
    const list = await ctx.http.get(`/api/v1/invoices?metadata[orderRef]=${ref}`).set(auth());
    expect(list.status).toBe(200);
    expect(list.body.items.map((i: { shopOrderId: string }) => i.shopOrderId)).toEqual([
      inv.shopOrderId,
    ]);
    const both = await ctx.http
      .get(`/api/v1/invoices?metadata[orderRef]=${ref}&metadata[kind]=y`)
      .set(auth());
    expect(both.body.items).toEqual([]);

    await eventually(async () => {
      const r = await ctx.http.get(`/api/v1/invoices/${inv.shopOrderId}?refresh=true`).set(auth());
      expect(r.body.status).toBe('succeeded');
    });
    const rf = await createRefund(String(inv.shopOrderId), {
      shopRefundId: id('rf'),
      amount: '1.00',
      metadata: { orderRef: ref },
    });
    await createRefund(String(inv.shopOrderId), { shopRefundId: id('rf'), amount: '1.00' });
    const refunds = await ctx.http
      .get(`/api/v1/invoices/${inv.shopOrderId}/refunds?metadata[orderRef]=${ref}`)
      .set(auth());
    expect(refunds.body.items.map((r: { shopRefundId: string }) => r.shopRefundId)).toEqual([
      rf.body.shopRefundId,
    ]);
    const adminRefunds = await ctx.http
      .get(`/api/v1/admin/refunds?metadata[orderRef]=${ref}`)
      .set(admin());
    expect(adminRefunds.body.items.map((r: { shopRefundId: string }) => r.shopRefundId)).toEqual([
      rf.body.shopRefundId,
    ]);

    const po = await createPayout(payoutBody({ metadata: { orderRef: ref } }));
    await createPayout(payoutBody());
    const payouts = await ctx.http.get(`/api/v1/payouts?metadata%5BorderRef%5D=${ref}`).set(auth());
    expect(payouts.body.items.map((p: { shopPaymentId: string }) => p.shopPaymentId)).toEqual([
      po.body.shopPaymentId,
    ]);
  });

  it.each([
    ['nested brackets name a key that no object has', 'metadata[a][b]=x', 200],
    ['a repeated parameter', 'metadata[a]=1&metadata[a]=2', 400],
    ['a plain metadata parameter', 'metadata=x', 400],
    ['an empty key', 'metadata[]=x', 400],
    ['a key over 40 characters', `metadata[${'k'.repeat(41)}]=x`, 400],
    ['a __proto__ key', 'metadata[__proto__]=x', 400],
    ['a constructor key', 'metadata[constructor]=x', 400],
    ['a prototype key', 'metadata[prototype]=x', 400],
    ['a value over 500 characters', `metadata[a]=${'v'.repeat(501)}`, 400],
  ])(
    'list filter spelling: %s (%s) → %p, never a 500 nor a widened list',
    async (_name, query, status) => {
      for (const [path, as] of [
        ['/api/v1/invoices', auth()],
        ['/api/v1/payouts', auth()],
        ['/api/v1/admin/refunds', admin()],
      ] as const) {
        const res = await ctx.http.get(`${path}?${query}`).set(as);
        expect(res.status).toBe(status);
        if (status === 200) expect(res.body.items).toEqual([]);
        else expect(res.body.errors[0].field).toMatch(/^metadata/);
      }
    },
  );

  it.each([
    ['a number value', { a: 1 }, 'metadata.a'],
    ['a null value', { a: null }, 'metadata.a'],
    ['an object value', { a: { b: 'c' } }, 'metadata.a'],
    ['a value over 500 characters', { a: 'v'.repeat(501) }, 'metadata.a'],
    ['a key over 40 characters', { ['k'.repeat(41)]: 'v' }, `metadata.${'k'.repeat(40)}…`],
    ['an empty key', { '': 'v' }, 'metadata.'],
    [
      '21 keys',
      Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])),
      'metadata',
    ],
    ['an array', ['a'], 'metadata'],
    ['a string', 'a=b', 'metadata'],
    ['a constructor key', { constructor: 'c' }, 'metadata.constructor'],
    ['a __proto__ key', JSON.parse('{"__proto__": "p"}') as unknown, 'metadata.__proto__'],
    ['a prototype key', { prototype: 'p' }, 'metadata.prototype'],
  ])('%s is a 400 naming the key on every create', async (_name, metadata, field) => {
    for (const res of [
      await createInvoice(invoiceBody({ metadata })),
      await createPayout(payoutBody({ metadata })),
      await createRefund(id('x'), { shopRefundId: id('rf'), amount: '1.00', metadata }),
    ]) {
      expect(res.status).toBe(400);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field }));
    }
  });

  it('limits are inclusive: 20 keys, 40-character keys and 500-character values; prototype-like keys that are not reserved are kept', async () => {
    const metadata: Record<string, string> = Object.fromEntries(
      Array.from({ length: 18 }, (_, i) => [
        `${'k'.repeat(38)}${String(i).padStart(2, '0')}`,
        'v'.repeat(500),
      ]),
    );
    Object.assign(metadata, { toString: 'c', hasOwnProperty: 'h' });
    const res = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .set('content-type', 'application/json')
      .send(JSON.stringify(invoiceBody({ metadata })));
    expect(res.status).toBe(201);
    expect(Object.keys(res.body.metadata)).toHaveLength(20);
    expect(res.body.metadata.toString).toBe('c');
    const filtered = await ctx.http.get(`/api/v1/invoices?metadata[toString]=c`).set(auth());
    expect(filtered.body.items.map((i: { shopOrderId: string }) => i.shopOrderId)).toContain(
      res.body.shopOrderId,
    );
  });
});

// ------------------------------------------------------------ errors that teach

type FieldErr = { field: string; message: string };

/** Nothing of this create reached the gateway, and no row was written for it. */
async function untouched(
  key: 'shop_order_id' | 'shop_payment_id' | 'shop_refund_id',
  id: string,
): Promise<void> {
  const calls = (await sandboxRequests(ctx)).filter((r) => r.body[key] === id);
  expect(calls).toEqual([]);
  const table = {
    shop_order_id: 'invoices',
    shop_payment_id: 'payouts',
    shop_refund_id: 'refunds',
  }[key];
  const rows = await db.query(`SELECT 1 FROM ${table} WHERE ${key} = $1`, [id]);
  expect(rows.rows).toEqual([]);
}

describe('errors that teach: the currency', () => {
  it.each([[123], ['123'], [999], ['XXX'], ['xts'], [959]])(
    'currency %p on an invoice, a quote, a payout and a refund is a 400 naming only currency, with no row and no gateway call',
    async (currency) => {
      const inv = invoiceBody({ currency });
      const created = await createInvoice(inv);
      expect(created.status).toBe(400);
      expect((created.body.errors as FieldErr[]).map((e) => e.field)).toEqual(['currency']);
      expect(created.body.errors[0].message).toContain('ISO 4217');
      await untouched('shop_order_id', String(inv.shopOrderId));

      const quote = await ctx.http.post('/api/v1/invoices/quote').set(auth()).send(inv);
      expect(quote.status).toBe(400);
      expect((quote.body.errors as FieldErr[]).map((e) => e.field)).toEqual(['currency']);

      const po = payoutBody({ shopCurrency: currency });
      const payout = await createPayout(po);
      expect(payout.status).toBe(400);
      expect((payout.body.errors as FieldErr[]).map((e) => e.field)).toEqual(['shopCurrency']);
      await untouched('shop_payment_id', String(po.shopPaymentId));

      const rf = { shopRefundId: id('rf'), amount: '1.00', currency };
      const refund = await createRefund(id('x'), rf);
      expect(refund.status).toBe(400);
      expect((refund.body.errors as FieldErr[]).map((e) => e.field)).toEqual(['currency']);
    },
  );

  it('999 with a fraction blames the currency, never the amount', async () => {
    const res = await createInvoice(invoiceBody({ currency: 999, amount: '100.50' }));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'currency', message: expect.stringContaining('XXX (999) names no currency') },
    ]);
  });

  it('an order the gateway cannot price in its payway’s currency is a 400 naming currency (no rate), never a 502; nothing written', async () => {
    const inv = invoiceBody({ currency: 'EUR', payway: PAYMENT.cardUsd });
    const res = await createInvoice(inv);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      {
        field: 'currency',
        message: expect.stringContaining('EUR (978): the gateway would not price this order'),
      },
    ]);
    expect(res.body.errors[0].message).toContain('USD (840)');
    const rows = await db.query(`SELECT 1 FROM invoices WHERE shop_order_id = $1`, [
      inv.shopOrderId,
    ]);
    expect(rows.rows).toEqual([]);
    const quote = await ctx.http.post('/api/v1/invoices/quote').set(auth()).send(inv);
    expect(quote.status).toBe(400);
    expect(quote.body.errors[0].field).toBe('currency');
    // The same order in a currency the gateway prices is taken.
    const ok = await createInvoice(invoiceBody({ currency: 'RUB', payway: PAYMENT.cardUsd }));
    expect(ok.status).toBe(201);
  });

  it('currencies are named both ways: JPY (392) for a fraction, RUB (643) for a refund in another currency', async () => {
    const jpy = await createInvoice(invoiceBody({ currency: 'JPY', amount: '100.50' }));
    expect(jpy.status).toBe(400);
    expect(jpy.body.errors).toEqual([
      { field: 'amount', message: 'must be a whole number in JPY (392)' },
    ]);
    const { shopOrderId } = await paidInvoice();
    const usd = await createRefund(shopOrderId, {
      shopRefundId: id('rf'),
      amount: '1.00',
      currency: 'usd',
    });
    expect(usd.status).toBe(400);
    expect(usd.body.errors).toEqual([
      { field: 'currency', message: 'must be the invoice currency RUB (643)' },
    ]);
  });
});

describe('errors that teach: payways, field names, amounts, conflicts', () => {
  const BASE = PAYMENT.card.slice(0, PAYMENT.card.indexOf('['));

  it('a payway without its scenario lists up to 5 of its scenario forms; nothing is written or sent', async () => {
    const inv = invoiceBody({ payway: BASE });
    const res = await createInvoice(inv);
    expect(res.status).toBe(400);
    const message = (res.body.errors as FieldErr[]).find((e) => e.field === 'payway')!.message;
    const listed = /did you mean (.*)\?\)/.exec(message)![1].split(', ');
    expect(listed.length).toBeGreaterThan(1);
    expect(listed.length).toBeLessThanOrEqual(5);
    for (const alias of listed) expect(alias.startsWith(`${BASE}[`)).toBe(true);
    expect(message).toContain('GET /api/v1/payways?direction=payment');
    await untouched('shop_order_id', String(inv.shopOrderId));
  });

  it.each([
    ['a scenario cut short', `${BASE}[mock_server,rejected]`, PAYMENT.cardRejected],
    ['a misspelt payway', 'card_core_payin_rbu[mock_server,success]', PAYMENT.cardSuccess],
    ['another case', PAYMENT.cardSuccess.toUpperCase(), PAYMENT.cardSuccess],
  ])('%s: the closest alias first', async (_name, payway, first) => {
    const res = await createInvoice(invoiceBody({ payway }));
    expect(res.status).toBe(400);
    const message = (res.body.errors as FieldErr[]).find((e) => e.field === 'payway')!.message;
    expect(message).toContain(`(did you mean ${first}`);
    expect(message).toContain('GET /api/v1/payways?direction=payment');
  });

  it('a payway written with spaces is shown without them; that spelling then gets its suggestion', async () => {
    const spaced = await createInvoice(invoiceBody({ payway: `${BASE}[mock_server, rejected]` }));
    expect(spaced.status).toBe(400);
    expect(spaced.body.errors).toEqual([
      {
        field: 'payway',
        message: `may hold only letters, underscore, comma and square brackets (no spaces: ${BASE}[mock_server,rejected])`,
      },
    ]);
    const joined = await createInvoice(invoiceBody({ payway: `${BASE}[mock_server,rejected]` }));
    expect(joined.body.errors[0].message).toContain(`did you mean ${PAYMENT.cardRejected}`);
  });

  it('a payout payway without its scenario suggests its forms too', async () => {
    const base = PAYOUT.card.slice(0, PAYOUT.card.indexOf('['));
    const po = payoutBody({ payway: base });
    const res = await createPayout(po);
    expect(res.status).toBe(400);
    const message = (res.body.errors as FieldErr[]).find((e) => e.field === 'payway')!.message;
    expect(message).toContain(`did you mean ${base}[`);
    expect(message).toContain('GET /api/v1/payways?direction=payout');
    await untouched('shop_payment_id', String(po.shopPaymentId));
  });

  it.each([
    ['shop_order_id', 'shopOrderId'],
    ['ShopOrderID', 'shopOrderId'],
    ['order_id', 'shopOrderId'],
    ['pay_way', 'payway'],
    ['ammount', 'amount'],
  ])('an invoice field %p names %p; nothing is written or sent', async (wrong, right) => {
    const inv = invoiceBody();
    const body: Record<string, unknown> = { ...inv, [wrong]: inv[right] };
    delete body[right];
    const res = await createInvoice(body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({
      field: wrong,
      message: `should not exist; did you mean ${right}?`,
    });
    await untouched('shop_order_id', String(inv.shopOrderId));
  });

  it('nested, payout and refund fields are named the same way; a name like none is just refused', async () => {
    const card = { number: CARD, expiryMonth: '12', expiry_year: '29', cvv: '123' };
    const nested = await createInvoice(invoiceBody({ card }));
    expect(nested.body.errors).toContainEqual({
      field: 'card.expiry_year',
      message: 'should not exist; did you mean expiryYear?',
    });
    expect(JSON.stringify(nested.body)).not.toContain(CARD);
    const payout = await createPayout({ ...payoutBody(), shop_payment_id: 'p-1' });
    expect(payout.body.errors).toContainEqual({
      field: 'shop_payment_id',
      message: 'should not exist; did you mean shopPaymentId?',
    });
    const refund = await createRefund(id('x'), { shop_refund_id: 'r-1', amount: '1.00' });
    expect(refund.body.errors).toContainEqual({
      field: 'shop_refund_id',
      message: 'should not exist; did you mean shopRefundId?',
    });
    const none = await createInvoice(invoiceBody({ zzzz: 1 }));
    expect(none.body.errors).toEqual([{ field: 'zzzz', message: 'should not exist' }]);
  });

  it('a JSON number as an amount says amounts are decimal strings in major units, on every create; nothing written or sent', async () => {
    const inv = invoiceBody({ amount: 10000 });
    const res = await createInvoice(inv);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      {
        field: 'amount',
        message:
          'must be a decimal string in major units, never a JSON number: "10000" would be 10000.00; "100.00" is one hundred',
      },
    ]);
    await untouched('shop_order_id', String(inv.shopOrderId));
    const po = payoutBody({ amount: 10000 });
    const payout = await createPayout(po);
    expect(payout.body.errors).toContainEqual({
      field: 'amount',
      message: expect.stringContaining('"10000" would be 10000.00'),
    });
    await untouched('shop_payment_id', String(po.shopPaymentId));
    const refund = await createRefund(id('x'), { shopRefundId: id('rf'), amount: 10000 });
    expect(refund.body.errors[0].message).toContain('major units');
    // A fraction or a card-length number is not echoed back.
    for (const amount of [100.5, 4111111111111111]) {
      const r = await createInvoice(invoiceBody({ amount }));
      expect(r.body.errors).toEqual([
        { field: 'amount', message: expect.stringContaining('major units') },
      ]);
      expect(JSON.stringify(r.body)).not.toContain(String(amount));
    }
    // A string is still told the plain rule.
    const text = await createInvoice(invoiceBody({ amount: '100,00' }));
    expect(text.body.errors).toEqual([
      { field: 'amount', message: 'must be a positive decimal string such as "100.10"' },
    ]);
  });

  it('a conflict names only the secret fields the repeat sent', async () => {
    const inv = invoiceBody({ payway: PAYMENT.cardSuccess });
    expect((await createInvoice(inv)).status).toBe(201);
    const plain = await createInvoice({ ...inv, amount: '7.00' });
    expect(plain.status).toBe(409);
    expect(plain.body.errors).toEqual([
      { field: 'amount', message: 'differs from the first request' },
    ]);
    const card = { number: CARD, expiryMonth: '12', expiryYear: '29', cvv: '123' };
    const withCard = await createInvoice({ ...inv, amount: '9.00', card });
    expect(withCard.status).toBe(409);
    expect(withCard.body.errors).toEqual([
      { field: 'amount', message: 'differs from the first request' },
      { field: 'card', message: expect.stringContaining('secret') },
    ]);
    expect(JSON.stringify(withCard.body)).not.toContain(CARD);
    const withToken = await createInvoice({ ...inv, amount: '8.00', paymentToken: 'tok_x' });
    expect(withToken.body.errors).toEqual([
      { field: 'amount', message: 'differs from the first request' },
      { field: 'paymentToken', message: expect.stringContaining('secret') },
    ]);
  });
});
