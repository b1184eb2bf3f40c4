import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { keyIdOf } from '../../src/common/auth.guard';
import { admin, ADMIN_KEY, auth, SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';

/**
 * Operators act, they do not overwrite. `accept` asks the gateway first and
 * is refused (409 naming its answer) when that answer contradicts the chosen status, on objects
 * that are not flagged, and while a gateway call is in flight; allowed with the note when the
 * gateway has no record or cannot be reached. A held invoice gets `charge` and `unhold`, the
 * real gateway calls.
 */
let ctx: TestContext;
let db: Client;
let seq = 0;
const id = (p: string): string => `${p}-${Date.now()}-${++seq}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
type Row = Record<string, unknown>;

beforeAll(async () => {
  ctx = await startTestApp({ env: { PAYOUT_POLL_INTERVAL_S: '0.2' } });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
}, 120000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

afterEach(async () => {
  ctx.sandbox.state.faults.clear();
  ctx.sandbox.state.settings.suppressNotifications = false;
});

async function sandbox(path: string): Promise<void> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/${path}`, { method: 'POST' });
  expect(res.status).toBe(200);
}

async function row(table: string, key: string, value: string): Promise<Row> {
  // table and key are literals of this file, never input.
  const r = await db.query(`SELECT * FROM ${table} WHERE ${key} = $1`, [value]);
  return r.rows[0] as Row;
}

async function flag(table: string, key: string, value: string): Promise<void> {
  await db.query(
    `UPDATE ${table} SET needs_attention = true, attention_reason = 'deadline: test', attention_at = now() WHERE ${key} = $1`,
    [value],
  );
}

async function waitFor(
  shopOrderId: string,
  status: string,
  ms = 10000,
): Promise<Record<string, unknown>> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await row('invoices', 'shop_order_id', shopOrderId);
    if (r.status === status || Date.now() > until) return r;
    await sleep(50);
  }
}

function resolve(kind: string, objectId: string, body: Record<string, unknown>) {
  return ctx.http.post(`/api/v1/admin/${kind}/${objectId}/resolve`).set(admin()).send(body);
}

function calls(path: string, match: (b: Record<string, unknown>) => boolean): number {
  return ctx.sandbox.state.requests.filter(
    (r) => r.path === path && match(r.body as Record<string, unknown>),
  ).length;
}

/** A two-step invoice the payer paid: `held` here and at the gateway (8), flagged. */
async function heldFlagged(): Promise<{ shopOrderId: string; invoiceId: number }> {
  const shopOrderId = id('held');
  const res = await ctx.http.post('/api/v1/invoices').set(auth()).send({
    shopOrderId,
    amount: '100.00',
    currency: 643,
    payway: PAYMENT.card,
    twoStep: true,
  });
  expect(res.status).toBe(201);
  const invoiceId = Number(res.body.invoiceId);
  await sandbox(`invoices/${invoiceId}/pay`);
  expect((await waitFor(shopOrderId, 'held')).status).toBe('held');
  await flag('invoices', 'shop_order_id', shopOrderId);
  return { shopOrderId, invoiceId };
}

/** An invoice the gateway says is paid (4) while its notification never came: flagged here. */
async function paidAtGatewayOnly(): Promise<string> {
  const shopOrderId = id('paid');
  const res = await ctx.http.post('/api/v1/invoices').set(auth()).send({
    shopOrderId,
    amount: '100.00',
    currency: 643,
    payway: PAYMENT.card,
  });
  expect(res.status).toBe(201);
  ctx.sandbox.state.settings.suppressNotifications = true;
  await sandbox(`invoices/${String(res.body.invoiceId)}/pay`);
  await sleep(100);
  expect((await row('invoices', 'shop_order_id', shopOrderId)).status).not.toBe('succeeded');
  await flag('invoices', 'shop_order_id', shopOrderId);
  return shopOrderId;
}

async function auditOf(shopId: string): Promise<Row[]> {
  const r = await db.query(
    `SELECT from_status, to_status, cause, details, key_id, type FROM events WHERE entity_id = $1 ORDER BY id`,
    [shopId],
  );
  return r.rows as Row[];
}

describe('accept is refused when the gateway contradicts it', () => {
  it('held → succeeded while the gateway says held is 409 naming held (8); accept unheld likewise; nothing changes', async () => {
    const { shopOrderId } = await heldFlagged();
    for (const status of ['succeeded', 'unheld']) {
      const res = await resolve('invoices', shopOrderId, {
        action: 'accept',
        status,
        note: 'the payer says it is fine',
      });
      expect(res.status).toBe(409);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.type).toMatch(/gateway-evidence-required$/);
      expect(res.body.detail).toContain('it says held (8)');
      expect(res.body.gatewayAnswer).toBe('held (8)');
    }
    expect(await row('invoices', 'shop_order_id', shopOrderId)).toMatchObject({
      status: 'held',
      needs_attention: true,
    });
    // No charge or unhold was sent on the operator's word.
    expect(calls('invoice/charge', () => true) + calls('invoice/unhold', () => true)).toBe(0);
  });

  it('accept rejected while the gateway says succeeded (4) is 409; accept succeeded then applies, audited, the flag cleared', async () => {
    const shopOrderId = await paidAtGatewayOnly();
    const wrong = await resolve('invoices', shopOrderId, {
      action: 'accept',
      status: 'rejected',
      note: 'looks abandoned',
    });
    expect(wrong.status).toBe(409);
    expect(wrong.body.detail).toContain('it says succeeded (4)');
    const ok = await resolve('invoices', shopOrderId, {
      action: 'accept',
      status: 'succeeded',
      note: 'paid per back office',
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'succeeded', needsAttention: false });
    expect(await row('invoices', 'shop_order_id', shopOrderId)).toMatchObject({
      status: 'succeeded',
      needs_attention: false,
      attention_reason: null,
    });
    const audit = await auditOf(shopOrderId);
    const moved = audit.find((e) => e.to_status === 'succeeded' && e.from_status !== 'succeeded');
    expect(moved).toMatchObject({ cause: 'admin', key_id: keyIdOf(ADMIN_KEY) });
    expect(moved?.details).toMatchObject({ note: 'paid per back office', gatewayAnswer: 'agrees' });
    expect(audit.some((e) => e.type === 'invoice.attention_resolved')).toBe(true);
  });

  it('refund FAILED while the gateway lists it WAITING is 409 naming WAITING; SUCCESS once it says so', async () => {
    const shopOrderId = id('rf-inv');
    const inv = await ctx.http.post('/api/v1/invoices').set(auth()).send({
      shopOrderId,
      amount: '100.00',
      currency: 643,
      payway: PAYMENT.cardSuccess,
    });
    expect(inv.status).toBe(201);
    await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
    expect((await waitFor(shopOrderId, 'succeeded')).status).toBe('succeeded');
    ctx.sandbox.state.settings.suppressNotifications = true;
    const shopRefundId = id('rf');
    const created = await ctx.http
      .post(`/api/v1/invoices/${shopOrderId}/refunds`)
      .set(auth())
      .send({ shopRefundId, amount: '40.00' });
    expect(created.status).toBe(201);
    // The gateway still works on it (after its own quick settling has run).
    await sleep(50);
    const atGateway = ctx.sandbox.state.refunds.get(shopRefundId)!;
    atGateway.status = 'WAITING';
    await flag('refunds', 'shop_refund_id', shopRefundId);

    const refused = await resolve('refunds', shopRefundId, {
      action: 'accept',
      status: 'FAILED',
      note: 'bank says no',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('it says WAITING');
    expect(await row('refunds', 'shop_refund_id', shopRefundId)).toMatchObject({
      status: 'WAITING',
      needs_attention: true,
    });

    await sleep(50);
    atGateway.status = 'SUCCESS';
    const ok = await resolve('refunds', shopRefundId, {
      action: 'accept',
      status: 'SUCCESS',
      note: 'settled per back office',
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'SUCCESS', needsAttention: false });
  });

  it('payout failed while the gateway says 3 (processing) is 409; the payout is unchanged', async () => {
    const shopPaymentId = id('po');
    const res = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({
        shopPaymentId,
        amount: '100.00',
        amountType: 'ps_amount',
        shopCurrency: 643,
        payway: PAYOUT.sandboxCard('never_final'),
        account: '4111111111111111',
      });
    expect(res.status).toBe(202);
    await db.query(
      `UPDATE payouts SET status = 'needs_attention', needs_attention = true, attention_reason = 'deadline: test', attention_at = now() WHERE shop_payment_id = $1`,
      [shopPaymentId],
    );
    const refused = await resolve('payouts', shopPaymentId, {
      action: 'accept',
      status: 'failed',
      note: 'the payee never got it',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('it says processing (3)');
    expect(await row('payouts', 'shop_payment_id', shopPaymentId)).toMatchObject({
      status: 'needs_attention',
      needs_attention: true,
      finished_at: null,
    });
  });
});

describe('accept is refused on unflagged objects and while a call is in flight', () => {
  it('an object that is not flagged is 409 not-flagged, with no gateway call', async () => {
    const shopOrderId = id('unflagged');
    const res = await ctx.http.post('/api/v1/invoices').set(auth()).send({
      shopOrderId,
      amount: '10.00',
      currency: 643,
      payway: PAYMENT.card,
    });
    expect(res.status).toBe(201);
    const checks = calls('invoice/check', (b) => b.shop_order_id === shopOrderId);
    const refused = await resolve('invoices', shopOrderId, {
      action: 'accept',
      status: 'rejected',
      note: 'x',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.type).toMatch(/not-flagged$/);
    expect(calls('invoice/check', (b) => b.shop_order_id === shopOrderId)).toBe(checks);
    expect((await row('invoices', 'shop_order_id', shopOrderId)).status).toBe('awaiting_payer');
  });

  it('a flagged invoice with a gateway call in flight is 409 request-in-progress with Retry-After', async () => {
    const { shopOrderId } = await heldFlagged();
    await db.query(
      `UPDATE invoices SET call_owner = 'other-instance', call_started_at = now(),
              call_lease_until = now() + interval '1 hour' WHERE shop_order_id = $1`,
      [shopOrderId],
    );
    const checks = calls('invoice/check', (b) => b.shop_order_id === shopOrderId);
    const refused = await resolve('invoices', shopOrderId, {
      action: 'accept',
      status: 'unheld',
      note: 'x',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.type).toMatch(/request-in-progress$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(calls('invoice/check', (b) => b.shop_order_id === shopOrderId)).toBe(checks);
    expect((await row('invoices', 'shop_order_id', shopOrderId)).status).toBe('held');
  });
});

describe("accept needs the gateway's word: without it nothing changes", () => {
  it('the gateway has no record of an invoice it may have: 409 gateway-evidence-required, unchanged', async () => {
    const shopOrderId = id('absent');
    await db.query(
      `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token, needs_attention, attention_reason)
       VALUES ($1, $2, $3, 'unknown', '100.00', 643, 'card_rub', $4, true, 'absent: test')`,
      [SHOP_ID, shopOrderId, 'f'.repeat(64), randomBytes(16).toString('hex')],
    );
    const res = await resolve('invoices', shopOrderId, {
      action: 'accept',
      status: 'rejected',
      note: 'never reached the gateway',
    });
    expect(res.status).toBe(409);
    expect(res.body.type).toMatch(/gateway-evidence-required$/);
    expect(res.body.missing).toContain('no record');
    expect(await row('invoices', 'shop_order_id', shopOrderId)).toMatchObject({
      status: 'unknown',
      needs_attention: true,
    });
    expect((await auditOf(shopOrderId)).filter((e) => e.to_status === 'rejected')).toEqual([]);
  });

  it('the gateway cannot be reached: 409 naming what is missing, unchanged and still flagged', async () => {
    const shopOrderId = id('unreach');
    const res = await ctx.http.post('/api/v1/invoices').set(auth()).send({
      shopOrderId,
      amount: '10.00',
      currency: 643,
      payway: PAYMENT.card,
    });
    expect(res.status).toBe(201);
    await flag('invoices', 'shop_order_id', shopOrderId);
    const before = await row('invoices', 'shop_order_id', shopOrderId);
    ctx.sandbox.state.faults.add({ path: 'invoice/check', fault: 'http500', remaining: 1 });
    const refused = await resolve('invoices', shopOrderId, {
      action: 'accept',
      status: 'rejected',
      note: 'gateway down; payer cancelled by phone',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.type).toMatch(/gateway-evidence-required$/);
    expect(refused.body.missing).toMatch(/could not be asked/);
    expect(await row('invoices', 'shop_order_id', shopOrderId)).toMatchObject({
      status: before.status,
      needs_attention: true,
    });
  });
});

describe('charge and unhold for a held invoice', () => {
  it('charge: the real invoice/charge, ends succeeded, flag cleared, audited with the admin key', async () => {
    const { shopOrderId, invoiceId } = await heldFlagged();
    // The charge's notification (4) could reach the service before the charge's own answer
    // and make the transition itself, unaudited by the key: this test judges the answer's.
    ctx.sandbox.state.settings.suppressNotifications = true;
    const res = await resolve('invoices', shopOrderId, { action: 'charge' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'succeeded', needsAttention: false });
    expect(calls('invoice/charge', (b) => String(b.invoice_id) === String(invoiceId))).toBe(1);
    expect(ctx.sandbox.state.invoices.get(invoiceId)?.status).toBe(4);
    const audit = await auditOf(shopOrderId);
    expect(
      audit.find((e) => e.from_status === 'held' && e.to_status === 'succeeded'),
    ).toMatchObject({ key_id: keyIdOf(ADMIN_KEY) });
    // The charge's own answer (a final gateway record) settled the deadline flag (cleared
    // by the gateway, not by the operator's say-so), in the operator's request.
    expect(audit.find((e) => e.type === 'invoice.attention_resolved')).toMatchObject({
      cause: 'gateway',
      key_id: keyIdOf(ADMIN_KEY),
      details: expect.objectContaining({ action: 'settled', reason: 'deadline' }),
    });
  });

  it('unhold: the real invoice/unhold, ends unheld, flag cleared', async () => {
    const { shopOrderId, invoiceId } = await heldFlagged();
    // The released hold's notification (6) is item 4's to judge, not this test's.
    ctx.sandbox.state.settings.suppressNotifications = true;
    const res = await resolve('invoices', shopOrderId, { action: 'unhold' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'unheld', needsAttention: false });
    expect(calls('invoice/unhold', (b) => String(b.invoice_id) === String(invoiceId))).toBe(1);
    expect(ctx.sandbox.state.invoices.get(invoiceId)?.status).toBe(6);
  });

  it('charge or unhold of a refund or payout is 400 naming action; a shop key cannot resolve (403)', async () => {
    for (const kind of ['refunds', 'payouts']) {
      const res = await resolve(kind, 'whatever', { action: 'charge' });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain('action');
    }
    const { shopOrderId } = await heldFlagged();
    for (const body of [
      { action: 'charge' },
      { action: 'unhold' },
      { action: 'accept', status: 'succeeded', note: 'x' },
    ]) {
      const res = await ctx.http
        .post(`/api/v1/admin/invoices/${shopOrderId}/resolve`)
        .set(auth())
        .send(body);
      expect(res.status).toBe(403);
    }
    expect((await row('invoices', 'shop_order_id', shopOrderId)).status).toBe('held');
  });
});
