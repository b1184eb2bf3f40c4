import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { GatewayService, signNotificationFields } from '../../src/gateway';
import { HoldExpiryJob } from '../../src/invoices/hold-expiry';
import { PARTIAL_CAPTURE_MESSAGE } from '../../src/invoices/hold-action-body';
import { auth, SECRET, SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';

/**
 * The invoice id, unholds, charges and unholds without a body and "holds expire visibly", end to end against
 * the sandbox: the
 * gateway's invoice id learnt from every record that carries it, an unhold judged by its record,
 * charge and unhold without body fields, and the hold's expiry shown and warned of.
 */
type Json = Record<string, unknown>;

let ctx: TestContext;
let db: Client;

beforeAll(async () => {
  ctx = await startTestApp();
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  await ctx.http.get('/api/v1/payways?direction=payment').set(auth()).expect(200);
}, 120000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

const order = (p: string): string => `${p}-${randomUUID()}`;

async function control(path: string, body: unknown = {}): Promise<void> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

/** The gateway calls the sandbox has logged about one invoice (by order or gateway id). */
function callsFor(shopOrderId: string, gatewayId?: string): string[] {
  return ctx.sandbox.state.requests
    .filter((r) => {
      const b = r.body as Record<string, unknown>;
      return (
        b.shop_order_id === shopOrderId ||
        (gatewayId !== undefined && String(b.invoice_id) === gatewayId)
      );
    })
    .map((r) => r.path);
}

async function row(shopOrderId: string): Promise<Json> {
  const r = await db.query(`SELECT * FROM invoices WHERE shop_order_id = $1`, [shopOrderId]);
  return r.rows[0] as Json;
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 10000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const get = (id: string, refresh = false) =>
  ctx.http.get(`/api/v1/invoices/${id}${refresh ? '?refresh=true' : ''}`).set(auth());

/** A hold the payer has paid, through the service: held, its gateway id known. */
async function heldInvoice(): Promise<Json> {
  const shopOrderId = order('held');
  const created = await ctx.http.post('/api/v1/invoices').set(auth()).send({
    shopOrderId,
    amount: '100.00',
    currency: 643,
    payway: PAYMENT.card,
    twoStep: true,
  });
  expect(created.status).toBe(201);
  await control(`invoices/${String(created.body.invoiceId)}/pay`);
  const held = await until(
    async () => (await get(shopOrderId)).body as Json,
    (b) => b.status === 'held',
  );
  expect(held.status).toBe('held');
  return held;
}

/**
 * An invoice the gateway holds whose id we never learnt: the row as a lost create answer leaves
 * it (`status`, invoice_id null), the gateway's invoice made directly and paid by the payer.
 */
async function invoiceWithoutId(
  status: 'held' | 'succeeded',
): Promise<{ shopOrderId: string; gatewayId: string }> {
  const shopOrderId = order(`noid-${status}`);
  const twoStep = status === 'held';
  const gateway = ctx.service.app.get(GatewayService);
  const req = {
    shop_order_id: shopOrderId,
    amount: '100.00',
    currency: 643,
    payway: twoStep ? PAYMENT.card : PAYMENT.cardSuccess,
  };
  const created = twoStep ? await gateway.holdInvoice(req) : await gateway.createInvoice(req);
  if (twoStep) await control(`invoices/${String(created.id)}/pay`);
  await db.query(
    `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, two_step, pay_token)
     VALUES ($1, $2, $3, $4, '100.00', 643, $5, $6, $7)`,
    [
      SHOP_ID,
      shopOrderId,
      'f'.repeat(64),
      status,
      req.payway,
      twoStep,
      randomBytes(16).toString('hex'),
    ],
  );
  return { shopOrderId, gatewayId: String(created.id) };
}

async function notify(fields: Record<string, string>): Promise<void> {
  const res = await fetch(`${ctx.url}/webhooks/gateway?type=invoice`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...fields, sign: signNotificationFields(fields, SECRET) }),
  });
  expect(res.status).toBe(200);
}

async function attentionEvents(shopOrderId: string): Promise<Json[]> {
  const r = await db.query(
    `SELECT type, details FROM events WHERE entity_id = $1 AND type LIKE 'invoice.attention_%' ORDER BY id`,
    [shopOrderId],
  );
  return r.rows as Json[];
}

describe('the gateway invoice id comes from every record that carries it', () => {
  it('a create whose answer was lost learns the id from invoice/check, and the refund works', async () => {
    await control('faults', { path: 'invoice/create', fault: 'timeout_done', delayMs: 3000 });
    const shopOrderId = order('lost');
    const created = await ctx.http.post('/api/v1/invoices').set(auth()).send({
      shopOrderId,
      amount: '100.00',
      currency: 643,
      payway: PAYMENT.cardSuccess,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'unknown', invoiceId: null });
    const gatewayId = String(ctx.sandbox.state.findInvoiceByOrder(SHOP_ID, shopOrderId)?.id);
    const checked = await get(shopOrderId, true).expect(200);
    expect(checked.body).toMatchObject({ status: 'succeeded', invoiceId: gatewayId });
    const refund = await ctx.http
      .post(`/api/v1/invoices/${shopOrderId}/refunds`)
      .set(auth())
      .send({ shopRefundId: order('r'), amount: '40.00' });
    expect(refund.status).toBe(201);
    expect(callsFor(shopOrderId, gatewayId)).toContain('invoice/create-refund');
  });

  it('a paid invoice whose id was never learnt: the refund asks invoice/check first, then proceeds', async () => {
    const { shopOrderId, gatewayId } = await invoiceWithoutId('succeeded');
    const refund = await ctx.http
      .post(`/api/v1/invoices/${shopOrderId}/refunds`)
      .set(auth())
      .send({ shopRefundId: order('r'), amount: '10.00' });
    expect(refund.status).toBe(201);
    expect(callsFor(shopOrderId, gatewayId)).toEqual([
      'invoice/create',
      'invoice/check',
      'invoice/create-refund',
    ]);
    expect((await row(shopOrderId)).invoice_id).toBe(gatewayId);
  });

  it('a non-fatal answer to invoice/hold: the notification brings the id, then charge and unhold work', async () => {
    for (const action of ['charge', 'unhold'] as const) {
      await control('faults', { path: 'invoice/hold', fault: 'nonfatal' });
      const shopOrderId = order(`nonfatal-${action}`);
      const created = await ctx.http.post('/api/v1/invoices').set(auth()).send({
        shopOrderId,
        amount: '100.00',
        currency: 643,
        payway: PAYMENT.card,
        twoStep: true,
      });
      expect(created.status).toBe(201);
      const held = await until(
        async () => (await get(shopOrderId)).body as Json,
        (b) => b.status === 'held',
      );
      expect(held.status).toBe('held');
      expect(held.invoiceId).toEqual(expect.stringMatching(/^\d+$/));
      // The answer is the invoice as it stood when answered: no id, unless the notification the
      // gateway sends a moment after its non-fatal answer was applied first (a loaded machine).
      expect([null, held.invoiceId]).toContainEqual(created.body.invoiceId);
      const res = await ctx.http.post(`/api/v1/invoices/${shopOrderId}/${action}`).set(auth());
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(action === 'charge' ? 'succeeded' : 'unheld');
      expect(res.body.needsAttention).toBe(false);
    }
  });

  it('a held invoice whose id was never learnt: charge and unhold ask invoice/check first', async () => {
    for (const action of ['charge', 'unhold'] as const) {
      const { shopOrderId, gatewayId } = await invoiceWithoutId('held');
      const res = await ctx.http.post(`/api/v1/invoices/${shopOrderId}/${action}`).set(auth());
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: action === 'charge' ? 'succeeded' : 'unheld',
        invoiceId: gatewayId,
      });
      expect(callsFor(shopOrderId, gatewayId)).toEqual([
        'invoice/hold',
        'invoice/check',
        `invoice/${action}`,
      ]);
    }
  });

  it('held or paid without a gateway id is flagged at once; the id learnt later clears the flag', async () => {
    for (const [word, status] of [
      ['hold', 'held'],
      ['success', 'succeeded'],
    ] as const) {
      const { shopOrderId, gatewayId } = await invoiceWithoutId(status);
      await db.query(`UPDATE invoices SET status = 'awaiting_payer' WHERE shop_order_id = $1`, [
        shopOrderId,
      ]);
      // A notification that carries no payment_id.
      await notify({
        shop_id: String(SHOP_ID),
        shop_order_id: shopOrderId,
        shop_amount: '100.00',
        shop_currency: '643',
        payway: PAYMENT.card,
        status: word,
        created: '2026-01-01T10:00:00+03:00',
        updated: '2026-01-01T10:05:00+03:00',
      });
      const flagged = await row(shopOrderId);
      expect(flagged).toMatchObject({ status, needs_attention: true, invoice_id: null });
      expect(String(flagged.attention_reason)).toMatch(/^missing_invoice_id: /);
      expect(await attentionEvents(shopOrderId)).toHaveLength(1);

      const checked = await get(shopOrderId, true).expect(200);
      expect(checked.body).toMatchObject({ status, invoiceId: gatewayId, needsAttention: false });
      expect((await attentionEvents(shopOrderId)).map((e) => e.type)).toEqual([
        'invoice.attention_raised',
        'invoice.attention_resolved',
      ]);
    }
  });

  it('a record with another gateway id than the known one is not applied and is flagged', async () => {
    const held = await heldInvoice();
    const shopOrderId = String(held.shopOrderId);
    await notify({
      shop_id: String(SHOP_ID),
      shop_order_id: shopOrderId,
      shop_amount: '100.00',
      shop_currency: '643',
      payment_id: String(Number(held.invoiceId) + 1000),
      payway: PAYMENT.card,
      status: 'success',
      created: '2026-01-01T10:00:00+03:00',
      updated: '2026-01-01T10:05:00+03:00',
    });
    const r = await row(shopOrderId);
    expect(r).toMatchObject({ status: 'held', invoice_id: String(held.invoiceId) });
    expect(String(r.attention_reason)).toMatch(/^mismatch: payment_id /);
  });
});

describe('an unhold is judged by its record', () => {
  it('unhold → unheld with no attention; the 6 that follows (notification, check) changes nothing', async () => {
    const held = await heldInvoice();
    const shopOrderId = String(held.shopOrderId);
    const res = await ctx.http.post(`/api/v1/invoices/${shopOrderId}/unhold`).set(auth());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'unheld', gatewayStatus: 6, needsAttention: false });
    // The sandbox notifies the released hold as `rejected` (6): wait until it was applied.
    const n = await until(
      async () =>
        (await db.query(`SELECT status FROM notifications WHERE shop_order_id = $1`, [shopOrderId]))
          .rows as Json[],
      (rows) => rows.length >= 2,
    );
    expect(n.length).toBeGreaterThanOrEqual(2);
    const checked = await get(shopOrderId, true).expect(200);
    expect(checked.body).toMatchObject({ status: 'unheld', needsAttention: false });
    expect(await attentionEvents(shopOrderId)).toEqual([]);
    expect((await row(shopOrderId)).unhold_requested_at).not.toBeNull();
  });

  it("the released hold's 6 arriving before the unhold's answer: unheld, and the gateway status is 6 all the same", async () => {
    const held = await heldInvoice();
    const shopOrderId = String(held.shopOrderId);
    // As if our invoice/unhold were in flight: asked for, its answer not back yet.
    await db.query(`UPDATE invoices SET unhold_requested_at = now() WHERE shop_order_id = $1`, [
      shopOrderId,
    ]);
    await notify({
      shop_id: String(SHOP_ID),
      shop_order_id: shopOrderId,
      shop_amount: '100.00',
      shop_currency: '643',
      payment_id: String(held.invoiceId),
      payway: PAYMENT.card,
      status: 'rejected',
      created: '2026-01-01T10:00:00+03:00',
      updated: '2026-01-01T10:05:00+03:00',
    });
    const got = (await get(shopOrderId).expect(200)).body as Json;
    expect(got).toMatchObject({ status: 'unheld', gatewayStatus: 6, needsAttention: false });
  });

  it('an unhold answered 4 (a charge still queued): charge_on_unhold, never unheld', async () => {
    const held = await heldInvoice();
    const shopOrderId = String(held.shopOrderId);
    await control(`invoices/${String(held.invoiceId)}/charge-on-unhold`);
    const res = await ctx.http.post(`/api/v1/invoices/${shopOrderId}/unhold`).set(auth());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'succeeded', gatewayStatus: 4, needsAttention: true });
    expect(String(res.body.attentionReason)).toMatch(/^charge_on_unhold: /);
    const checked = await get(shopOrderId, true).expect(200);
    expect(checked.body.status).toBe('succeeded');
    expect(String(checked.body.attentionReason)).toMatch(/^charge_on_unhold: /);
  });

  it('a repeat of an unhold that happened answers 200 with the same invoice, no second call', async () => {
    const held = await heldInvoice();
    const shopOrderId = String(held.shopOrderId);
    const first = await ctx.http.post(`/api/v1/invoices/${shopOrderId}/unhold`).set(auth());
    expect(first.status).toBe(200);
    const again = await ctx.http.post(`/api/v1/invoices/${shopOrderId}/unhold`).set(auth());
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('unheld');
    expect(
      callsFor(shopOrderId, String(held.invoiceId)).filter((p) => p === 'invoice/unhold'),
    ).toHaveLength(1);
    // A charge after the release is still refused.
    await ctx.http.post(`/api/v1/invoices/${shopOrderId}/charge`).set(auth()).expect(409);
  });
});

describe('charge and unhold take no body fields', () => {
  const variants: Array<
    [string, (r: ReturnType<TestContext['http']['post']>) => unknown, string[]]
  > = [
    ['a partial amount', (r) => r.send({ amount: '50.00' }), ['amount']],
    ['another spelling', (r) => r.send({ Amount: '1' }), ['Amount']],
    ['a null amount', (r) => r.send({ amount: null }), ['amount']],
    ['two fields', (r) => r.send({ amount: '1', note: 'x' }), ['amount', 'note']],
    ['a JSON array', (r) => r.send([{ amount: '1' }]), ['body']],
  ];

  it.each(variants)(
    '%s: 400 naming the field, no gateway call, no row change',
    async (_n, send, fields) => {
      const held = await heldInvoice();
      const shopOrderId = String(held.shopOrderId);
      const before = await row(shopOrderId);
      const calls = callsFor(shopOrderId, String(held.invoiceId)).length;
      for (const action of ['charge', 'unhold']) {
        const res = (await send(
          ctx.http.post(`/api/v1/invoices/${shopOrderId}/${action}`).set(auth()),
        )) as { status: number; body: Json; headers: Record<string, string> };
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toContain('application/problem+json');
        const errors = res.body.errors as Array<{ field: string; message: string }>;
        expect(errors.map((e) => e.field)).toEqual(fields);
        if (fields[0].toLowerCase() === 'amount')
          expect(errors[0].message).toBe(PARTIAL_CAPTURE_MESSAGE);
      }
      expect(callsFor(shopOrderId, String(held.invoiceId))).toHaveLength(calls);
      expect(await row(shopOrderId)).toEqual(before);
    },
  );

  it('a form-encoded body is 415 naming the JSON type (the edge refuses it first), no gateway call, no row change', async () => {
    const held = await heldInvoice();
    const shopOrderId = String(held.shopOrderId);
    const before = await row(shopOrderId);
    const calls = callsFor(shopOrderId, String(held.invoiceId)).length;
    for (const action of ['charge', 'unhold']) {
      const res = await ctx.http
        .post(`/api/v1/invoices/${shopOrderId}/${action}`)
        .set(auth())
        .type('form')
        .send('amount=50.00');
      expect(res.status).toBe(415);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(String(res.body.detail)).toContain('application/json');
    }
    expect(callsFor(shopOrderId, String(held.invoiceId))).toHaveLength(calls);
    expect(await row(shopOrderId)).toEqual(before);
  });

  it('an empty body {} or no body charges the whole hold', async () => {
    const a = await heldInvoice();
    const charged = await ctx.http
      .post(`/api/v1/invoices/${String(a.shopOrderId)}/charge`)
      .set(auth())
      .send({});
    expect(charged.status).toBe(200);
    expect(charged.body.status).toBe('succeeded');
    const b = await heldInvoice();
    const released = await ctx.http
      .post(`/api/v1/invoices/${String(b.shopOrderId)}/unhold`)
      .set(auth());
    expect(released.status).toBe(200);
    expect(released.body.status).toBe('unheld');
  });
});

describe('holds expire visibly', () => {
  it('invoice/check stores the expiry; invoice.hold_expiring is emitted once within the window', async () => {
    // A hold of an hour: inside the default 6-hour warning window.
    await control('settings', { holdLifetimeS: 3600 });
    try {
      const held = await heldInvoice();
      const shopOrderId = String(held.shopOrderId);
      const before = Date.now();
      const checked = await get(shopOrderId, true).expect(200);
      const expires = Date.parse(String(checked.body.holdExpiresAt));
      expect(expires).toBeGreaterThan(before + 3500_000);
      expect(expires).toBeLessThan(before + 3700_000);
      const r = await row(shopOrderId);
      expect((r.next_check_at as Date).getTime()).toBeLessThanOrEqual(expires);

      const job = ctx.service.app.get(HoldExpiryJob);
      await Promise.all([job.runOnce(), job.runOnce()]);
      await job.runOnce();
      const events = await db.query(
        `SELECT data FROM events WHERE entity_id = $1 AND type = 'invoice.hold_expiring'`,
        [shopOrderId],
      );
      expect(events.rows).toHaveLength(1);
      expect(events.rows[0].data).toMatchObject({
        shopOrderId,
        status: 'held',
        holdExpiresAt: checked.body.holdExpiresAt,
      });
    } finally {
      await control('settings', { holdLifetimeS: 7 * 24 * 3600 });
    }
  });

  it('a hold of a week is stored and not warned of yet; a check pulled past the expiry is brought back', async () => {
    const held = await heldInvoice();
    const shopOrderId = String(held.shopOrderId);
    const checked = await get(shopOrderId, true).expect(200);
    const expires = Date.parse(String(checked.body.holdExpiresAt));
    expect(expires).toBeGreaterThan(Date.now() + 6 * 24 * 3600_000);
    await db.query(
      `UPDATE invoices SET next_check_at = hold_expires_at + interval '1 hour' WHERE shop_order_id = $1`,
      [shopOrderId],
    );
    await ctx.service.app.get(HoldExpiryJob).runOnce();
    const r = await row(shopOrderId);
    expect((r.next_check_at as Date).getTime()).toBe(expires);
    expect(r.hold_expiry_warned_at).toBeNull();
  });
});
