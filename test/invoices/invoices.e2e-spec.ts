// Over 500 lines on purpose: one app and database, started once in its beforeAll, serve all its
// tests; a split would start another.
import { Client } from 'pg';
import { PaywayConfigService } from '../../src/payway-config/payway-config.service';
import { admin, auth, SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';
import { Decimal } from '../../src/sandbox/decimal';

type Json = Record<string, unknown>;

/** Helpers of this suite: sandbox logs and a body builder with overrides. */

interface SandboxRequest {
  path: string;
  body: Record<string, unknown>;
  result: boolean | null;
  error_code: number | null;
}

async function sandboxRequests(ctx: TestContext): Promise<SandboxRequest[]> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/requests`);
  return ((await res.json()) as { data: SandboxRequest[] }).data;
}

async function clearSandboxRequests(ctx: TestContext): Promise<void> {
  await fetch(`${ctx.sandbox.origin}/sandbox/requests`, { method: 'DELETE' });
}

async function sandboxControl(
  ctx: TestContext,
  path: string,
  body: unknown = {},
): Promise<Response> {
  return fetch(`${ctx.sandbox.origin}/sandbox/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

let seq = 0;
function orderId(prefix = 'ord'): string {
  seq += 1;
  return `${prefix}-${Date.now().toString(36)}-${seq}`;
}

function invoiceBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    shopOrderId: orderId(),
    amount: '100.10',
    currency: 643,
    payway: PAYMENT.card,
    description: 'Order',
    ...overrides,
  };
}

/**
 * Waits for the invoice to reach `status`: first by the notification (plain GET), then by
 * invoice/check (`?refresh=true`) should the notification not have come.
 */
async function waitForStatus(
  ctx: TestContext,
  shopOrderId: string,
  status: string,
  ms = 8000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const res = await ctx.http
      .get(`/api/v1/invoices/${encodeURIComponent(shopOrderId)}`)
      .set(auth());
    if (res.body.status === status) return res.body as Record<string, unknown>;
    await new Promise((r) => setTimeout(r, 100));
  }
  const res = await ctx.http
    .get(`/api/v1/invoices/${encodeURIComponent(shopOrderId)}?refresh=true`)
    .set(auth());
  return res.body as Record<string, unknown>;
}

describe('invoices (sandbox gateway, real PostgreSQL)', () => {
  let ctx: TestContext;
  let db: Client;

  beforeAll(async () => {
    ctx = await startTestApp();
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    // Warm the payway cache so validation failures below make no gateway call at all.
    await ctx.http.get('/api/v1/payways?direction=payment').set(auth()).expect(200);
  });

  afterAll(async () => {
    await db.end();
    await ctx.close();
  });

  const create = (body: Json) => ctx.http.post('/api/v1/invoices').set(auth()).send(body);
  const rowCount = async (shopOrderId: string): Promise<number> =>
    (
      await db.query('SELECT count(*)::int AS n FROM invoices WHERE shop_order_id = $1', [
        shopOrderId,
      ])
    ).rows[0].n as number;
  const invoiceCalls = async (): Promise<string[]> =>
    (await sandboxRequests(ctx)).map((r) => r.path).filter((p) => p.startsWith('invoice/'));

  describe('payment ways', () => {
    it('lists payment and payout ways, refetching on demand', async () => {
      const pay = await ctx.http.get('/api/v1/payways?direction=payment').set(auth()).expect(200);
      const aliases = (pay.body.groups as Array<{ payways: Array<{ alias: string }> }>).flatMap(
        (g) => g.payways.map((p) => p.alias),
      );
      expect(aliases).toEqual(
        expect.arrayContaining([PAYMENT.card, PAYMENT.wallet, PAYMENT.inactive]),
      );
      await clearSandboxRequests(ctx);
      const out = await ctx.http
        .get('/api/v1/payways?direction=payout&refresh=true')
        .set(auth())
        .expect(200);
      expect(out.body.direction).toBe('payout');
      expect((await sandboxRequests(ctx)).map((r) => r.path)).toEqual(['shop_output_config/shop']);
      const stored = await db.query(`SELECT direction FROM payway_configs ORDER BY direction`);
      expect(stored.rows.map((r: { direction: string }) => r.direction)).toEqual([
        'payment',
        'payout',
      ]);
      await ctx.http.get('/api/v1/payways?direction=sideways').set(auth()).expect(400);
    });

    it('the scheduled refresh refetches both directions and stores them', async () => {
      const before = await db.query(
        `SELECT direction, fetched_at FROM payway_configs ORDER BY direction`,
      );
      await clearSandboxRequests(ctx);
      await ctx.service.app.get(PaywayConfigService).refreshAll();
      expect((await sandboxRequests(ctx)).map((r) => r.path).sort()).toEqual([
        'shop_input_config/shop',
        'shop_output_config/shop',
      ]);
      const after = await db.query(
        `SELECT direction, fetched_at FROM payway_configs ORDER BY direction`,
      );
      after.rows.forEach((row: { fetched_at: Date }, i: number) =>
        expect(row.fetched_at.getTime()).toBeGreaterThan(
          (before.rows[i] as { fetched_at: Date }).fetched_at.getTime(),
        ),
      );
    });
  });

  describe('the gateway’s word from invoice/check', () => {
    it('takes processedAt from the gateway’s processed', async () => {
      const body = invoiceBody({ payway: PAYMENT.cardSuccess });
      const inv = (await create(body).expect(201)).body as Json;
      const sandboxInvoice = ctx.sandbox.state.invoices.get(Number(inv.invoiceId));
      if (sandboxInvoice === undefined) throw new Error('the sandbox has no such invoice');
      sandboxInvoice.processed = new Date('2026-01-02T03:04:05.000Z');
      const got = await ctx.http
        .get(`/api/v1/invoices/${String(body.shopOrderId)}?refresh=true`)
        .set(auth())
        .expect(200);
      expect(got.body).toMatchObject({
        status: 'succeeded',
        processedAt: '2026-01-02T03:04:05.000Z',
      });
    });

    it('an answered invoice the gateway no longer knows is flagged by ?refresh=true, never kept silently', async () => {
      const body = invoiceBody({ payway: PAYMENT.cardSuccess });
      const inv = (await create(body).expect(201)).body as Json;
      expect(inv.invoiceId).not.toBeNull();
      // The gateway forgets it (a reset or restored gateway, another environment's data).
      expect(ctx.sandbox.state.invoices.delete(Number(inv.invoiceId))).toBe(true);
      const got = await ctx.http
        .get(`/api/v1/invoices/${String(body.shopOrderId)}?refresh=true`)
        .set(auth())
        .expect(200);
      // Nothing about the money changes; an operator is told.
      expect(got.body).toMatchObject({ status: inv.status, needsAttention: true });
      expect(String(got.body.attentionReason)).toBe(
        `mismatch: the gateway has no record of invoice ${String(inv.invoiceId)}, which is ${String(inv.status)} here`,
      );
    });

    it('flags a refunded sum the gateway disagrees with, and never overwrites ours', async () => {
      const body = invoiceBody({ payway: PAYMENT.cardSuccess, amount: '100.00' });
      const inv = (await create(body).expect(201)).body as Json;
      await ctx.http
        .get(`/api/v1/invoices/${String(body.shopOrderId)}?refresh=true`)
        .set(auth())
        .expect(200);
      const attention = async () =>
        (
          await db.query(
            'SELECT needs_attention, refunded_amount::text AS refunded FROM invoices WHERE shop_order_id = $1',
            [body.shopOrderId],
          )
        ).rows[0] as { needs_attention: boolean; refunded: string };
      expect(await attention()).toEqual({ needs_attention: false, refunded: '0' });

      // A refund made behind the service's back: the gateway now counts 30.00 refunded.
      ctx.sandbox.state.refunds.set('behind-our-back', {
        shopRefundId: 'behind-our-back',
        invoiceId: Number(inv.invoiceId),
        amount: Decimal.parse('30.00'),
        currency: 643,
        status: 'SUCCESS',
        errorCode: 0,
        createdAt: new Date(),
        processedAt: new Date(),
      });
      for (let i = 0; i < 2; i++)
        await ctx.http
          .get(`/api/v1/invoices/${String(body.shopOrderId)}?refresh=true`)
          .set(auth())
          .expect(200);
      expect(await attention()).toEqual({ needs_attention: true, refunded: '0' });
      const events = await db.query(
        `SELECT details FROM events WHERE entity_type = 'invoice' AND entity_id = $1 AND details->>'attention' IS NOT NULL`,
        [body.shopOrderId],
      );
      // One attention raise for every object and reason: the check's facts ride along.
      expect(events.rows.map((r: { details: unknown }) => r.details)).toEqual([
        expect.objectContaining({
          attention: 'raised',
          reason: 'mismatch',
          check: 'refunded_amount_mismatch',
          gatewayRefunded: '30.00',
          ourRefunded: '0',
        }),
      ]);
    });
  });

  describe('another currency than the payway’s', () => {
    it('quotes USD on a RUB payway at the gateway’s conversion', async () => {
      const res = await ctx.http
        .post('/api/v1/invoices/quote')
        .set(auth())
        .send({ shopOrderId: orderId('fx'), amount: '100.00', currency: 840, payway: PAYMENT.card })
        .expect(200);
      // 100.00 USD at the sandbox's 92.5 = 9250.00 RUB, + 2.5% fee.
      expect(res.body).toMatchObject({ payerPrice: '9481.25', psCurrency: 643 });
    });

    it('creates a USD invoice on a RUB payway, storing the payer price and its currency', async () => {
      const body = invoiceBody({ currency: 840, amount: '100.00' });
      await clearSandboxRequests(ctx);
      const res = await create(body).expect(201);
      expect(res.body).toMatchObject({ currency: 840, amount: '100.00', payerPrice: '9481.25' });
      const row = await db.query(
        'SELECT payer_price::text AS p, ps_currency FROM invoices WHERE shop_order_id = $1',
        [body.shopOrderId],
      );
      expect(row.rows[0]).toEqual({ p: '9481.25', ps_currency: 643 });
      expect(await invoiceCalls()).toEqual(['invoice/try', 'invoice/create']);
      // An identical repeat replays the stored answer and asks the gateway nothing.
      await clearSandboxRequests(ctx);
      expect((await create(body).expect(201)).body).toEqual(res.body);
      expect(await invoiceCalls()).toEqual([]);
    });

    it('refuses an amount whose payer price exceeds the RUB maximum: 400 on amount, no row, no invoice/create', async () => {
      // 5300.00 USD = 490250.00 RUB (within), but the payer price 502506.25 is over 500000.0.
      const body = invoiceBody({ currency: 840, amount: '5300.00' });
      await clearSandboxRequests(ctx);
      const res = await create(body).expect(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.body.errors).toEqual([
        {
          field: 'amount',
          message: 'must be at most 500000.0 in RUB (643) (it converts to 502506.25)',
        },
      ]);
      expect(await rowCount(String(body.shopOrderId))).toBe(0);
      expect(await invoiceCalls()).toEqual(['invoice/try']);
    });

    it('answers the gateway’s refusal to price an amount under the minimum as a 400 on currency (never a 5xx): no row, no invoice/create', async () => {
      const body = invoiceBody({ currency: 840, amount: '0.10' }); // 9.25 RUB < 10.0
      await clearSandboxRequests(ctx);
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        { field: 'currency', message: expect.stringContaining('send the amount in RUB (643)') },
      ]);
      expect(res.body.gatewayErrorCode).toBe(10);
      expect(await rowCount(String(body.shopOrderId))).toBe(0);
      expect(await invoiceCalls()).toEqual(['invoice/try']);
    });

    it('refuses a currency the gateway cannot convert with a 400 on currency: no row, no invoice/create', async () => {
      const body = invoiceBody({ currency: 978, amount: '100.00', payway: PAYMENT.cardUsd });
      await clearSandboxRequests(ctx);
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        { field: 'currency', message: expect.stringContaining('EUR (978): the gateway would not price') },
      ]);
      expect(res.body.gatewayErrorCode).toBe(10);
      expect(await rowCount(String(body.shopOrderId))).toBe(0);
      expect(await invoiceCalls()).toEqual(['invoice/try']);
    });
  });

  describe('quote', () => {
    it('returns the payer price and the add-on fields in a form-friendly shape', async () => {
      const res = await ctx.http
        .post('/api/v1/invoices/quote')
        .set(auth())
        .send({
          shopOrderId: orderId('q'),
          amount: '100.00',
          currency: 643,
          payway: PAYMENT.wallet,
        })
        .expect(200);
      expect(res.body).toMatchObject({
        psCurrency: 643,
        paymethodName: 'QIWI wallet',
        manual: { en: expect.any(String) },
      });
      expect(typeof res.body.payerPrice).toBe('string');
      expect(res.body.fields).toEqual([
        {
          name: 'phone',
          label: { en: 'Phone number', ru: 'Номер телефона' },
          hint: { en: "The wallet's phone number", ru: 'Номер телефона кошелька' },
          example: '+79001234567',
          regex: '^\\+?7\\d{10}$',
          prefix: null,
        },
      ]);
    });
  });

  describe('single-step payment', () => {
    it('creates, redirects the payer, and ends succeeded when the payer pays', async () => {
      const body = invoiceBody();
      const res = await create(body).expect(201);
      const inv = res.body as Json;
      expect(inv).toMatchObject({
        shopOrderId: body.shopOrderId,
        status: 'awaiting_payer',
        gatewayStatus: 2,
        amount: '100.10',
        currency: 643,
        payway: PAYMENT.card,
        twoStep: false,
        refundedAmount: '0.00',
        paymentToken: null,
        processedAt: null,
      });
      expect(inv.invoiceId).toMatch(/^\d+$/);
      // As the test server's card payway: GET to a checkout URL carrying session_id.
      expect(inv.redirect).toMatchObject({
        method: 'GET',
        url: expect.stringContaining('/sandbox/checkout'),
        params: { session_id: expect.any(String) },
      });
      expect(inv.payUrl).toBe(
        `${ctx.url}/pay/${encodeURIComponent(String(body.shopOrderId))}?t=${(await db.query('SELECT pay_token FROM invoices WHERE shop_order_id=$1', [body.shopOrderId])).rows[0].pay_token}`,
      );
      const sent = (await sandboxRequests(ctx)).find(
        (r) => r.path === 'invoice/create' && r.body.shop_order_id === body.shopOrderId,
      );
      expect(sent?.body.callback_url).toBe(`${ctx.url}/webhooks/gateway`);
      expect(sent?.body.callback_rejected_url).toBe(`${ctx.url}/webhooks/gateway`);
      expect(sent?.body.amount).toBe('100.10');

      await sandboxControl(ctx, `invoices/${String(inv.invoiceId)}/pay`).then((r) =>
        expect(r.status).toBe(200),
      );
      const done = await waitForStatus(ctx, String(body.shopOrderId), 'succeeded');
      expect(done).toMatchObject({ status: 'succeeded', gatewayStatus: 4 });
      expect(done.processedAt).toEqual(expect.any(String));
      const events = await db.query(
        `SELECT from_status, to_status, cause FROM events WHERE entity_type='invoice' AND entity_id=$1 ORDER BY id`,
        [body.shopOrderId],
      );
      expect(events.rows[0]).toMatchObject({
        from_status: 'pending',
        to_status: 'awaiting_payer',
        cause: 'gateway',
      });
      expect(events.rows.at(-1)).toMatchObject({ to_status: 'succeeded' });
    });

    it('ends rejected when the payer declines', async () => {
      const body = invoiceBody();
      const inv = (await create(body).expect(201)).body as Json;
      await sandboxControl(ctx, `invoices/${String(inv.invoiceId)}/decline`);
      expect(await waitForStatus(ctx, String(body.shopOrderId), 'rejected')).toMatchObject({
        status: 'rejected',
        gatewayStatus: 6,
      });
    });

    it('settles through invoice/check on ?refresh=true', async () => {
      await sandboxControl(ctx, 'settings', { suppressNotifications: true });
      try {
        const body = invoiceBody();
        const inv = (await create(body).expect(201)).body as Json;
        await sandboxControl(ctx, `invoices/${String(inv.invoiceId)}/pay`);
        const plain = await ctx.http
          .get(`/api/v1/invoices/${String(body.shopOrderId)}`)
          .set(auth())
          .expect(200);
        expect(plain.body.status).toBe('awaiting_payer');
        const fresh = await ctx.http
          .get(`/api/v1/invoices/${String(body.shopOrderId)}?refresh=true`)
          .set(auth())
          .expect(200);
        expect(fresh.body).toMatchObject({
          status: 'succeeded',
          gatewayStatus: 4,
          paymentId: inv.invoiceId,
        });
        const ev = await db.query(
          `SELECT cause FROM events WHERE entity_id=$1 AND to_status='succeeded'`,
          [body.shopOrderId],
        );
        expect(ev.rows).toEqual([{ cause: 'reconciliation' }]);
      } finally {
        await sandboxControl(ctx, 'settings', { suppressNotifications: false });
      }
    });
  });

  describe('two-step payment', () => {
    const heldInvoice = async (): Promise<Json> => {
      const body = invoiceBody({ twoStep: true });
      const inv = (await create(body).expect(201)).body as Json;
      expect(inv.twoStep).toBe(true);
      expect(
        (await sandboxRequests(ctx)).some(
          (r) => r.path === 'invoice/hold' && r.body.shop_order_id === body.shopOrderId,
        ),
      ).toBe(true);
      await sandboxControl(ctx, `invoices/${String(inv.invoiceId)}/pay`);
      expect(await waitForStatus(ctx, String(body.shopOrderId), 'held')).toMatchObject({
        status: 'held',
        gatewayStatus: 8,
      });
      return inv;
    };

    it('hold then charge ends succeeded', async () => {
      const inv = await heldInvoice();
      // The gateway notifies the charge while it answers the call: held back here, so that the
      // transition asserted below is the one the charge's answer made (not whichever came first).
      ctx.sandbox.state.settings.suppressNotifications = true;
      let res;
      try {
        res = await ctx.http
          .post(`/api/v1/invoices/${String(inv.shopOrderId)}/charge`)
          .set(auth())
          .expect(200);
      } finally {
        ctx.sandbox.state.settings.suppressNotifications = false;
      }
      expect(res.body).toMatchObject({ status: 'succeeded', gatewayStatus: 4 });
      const ev = await db.query(
        `SELECT cause FROM events WHERE entity_id=$1 AND from_status='held'`,
        [inv.shopOrderId],
      );
      expect(ev.rows[0]).toEqual({ cause: 'api' });
      // A repeat of the charge that happened: the same invoice, 200, no second call.
      await clearSandboxRequests(ctx);
      const again = await ctx.http
        .post(`/api/v1/invoices/${String(inv.shopOrderId)}/charge`)
        .set(auth())
        .expect(200);
      expect(again.body).toEqual(res.body);
      expect(await invoiceCalls()).toEqual([]);
      // An unhold after the charge is still refused.
      await ctx.http
        .post(`/api/v1/invoices/${String(inv.shopOrderId)}/unhold`)
        .set(auth())
        .expect(409);
    });

    it('hold then unhold ends unheld', async () => {
      const inv = await heldInvoice();
      const res = await ctx.http
        .post(`/api/v1/invoices/${String(inv.shopOrderId)}/unhold`)
        .set(auth())
        .expect(200);
      expect(res.body).toMatchObject({ status: 'unheld' });
      expect(res.body.processedAt).toEqual(expect.any(String));
      // A late rejected notification or check cannot move a final status.
      const fresh = await ctx.http
        .get(`/api/v1/invoices/${String(inv.shopOrderId)}?refresh=true`)
        .set(auth())
        .expect(200);
      expect(fresh.body.status).toBe('unheld');
    });

    it('a charge whose answer was lost is never followed by a second charge or an unhold until invoice/check has settled it', async () => {
      const inv = await heldInvoice();
      const id = String(inv.shopOrderId);
      const calls = async (): Promise<string[]> =>
        (await sandboxRequests(ctx))
          .filter(
            (r) =>
              (r.path === 'invoice/charge' || r.path === 'invoice/unhold') &&
              String(r.body.invoice_id) === String(inv.invoiceId),
          )
          .map((r) => r.path);
      await sandboxControl(ctx, 'faults', {
        path: 'invoice/charge',
        fault: 'timeout_not_done',
        delayMs: 3000,
      });
      const lost = await ctx.http.post(`/api/v1/invoices/${id}/charge`).set(auth());
      expect(lost.status).toBe(504);
      // The shop repeats, or changes its mind: both wait for the first call's outcome.
      for (const action of ['charge', 'unhold']) {
        const res = await ctx.http.post(`/api/v1/invoices/${id}/${action}`).set(auth());
        expect(res.status).toBe(409);
        expect(res.body.type).toMatch(/request-in-progress$/);
        expect(res.headers['retry-after']).toBeDefined();
      }
      expect(await calls()).toEqual(['invoice/charge']);
      // invoice/check says it is still held (the charge was not done): the row is free again.
      const checked = await ctx.http.get(`/api/v1/invoices/${id}?refresh=true`).set(auth());
      expect(checked.body.status).toBe('held');
      const charged = await ctx.http.post(`/api/v1/invoices/${id}/charge`).set(auth());
      expect(charged.status).toBe(200);
      expect(charged.body.status).toBe('succeeded');
      expect(await calls()).toEqual(['invoice/charge', 'invoice/charge']);
    });

    it('charge or unhold from a state that is not held is 409 naming the status, with no gateway call', async () => {
      const inv = (await create(invoiceBody({ twoStep: true })).expect(201)).body as Json;
      await clearSandboxRequests(ctx);
      for (const action of ['charge', 'unhold']) {
        const res = await ctx.http
          .post(`/api/v1/invoices/${String(inv.shopOrderId)}/${action}`)
          .set(auth())
          .expect(409);
        expect(res.headers['content-type']).toContain('application/problem+json');
        expect(res.body).toMatchObject({ status: 409, currentStatus: 'awaiting_payer' });
      }
      expect(await invoiceCalls()).toEqual([]);
      await ctx.http.post('/api/v1/invoices/no-such-order/charge').set(auth()).expect(404);
    });
  });

  describe('recurrent payments', () => {
    it('issues a token, shows it masked (raw to admins only), and charges with it', async () => {
      const first = invoiceBody({ savePaymentToken: true });
      const inv = (await create(first).expect(201)).body as Json;
      const sent = (await sandboxRequests(ctx)).find(
        (r) => r.path === 'invoice/create' && r.body.shop_order_id === first.shopOrderId,
      );
      expect(sent?.body.issue_payment_token).toBe(true);
      await sandboxControl(ctx, `invoices/${String(inv.invoiceId)}/pay`);
      await waitForStatus(ctx, String(first.shopOrderId), 'succeeded');
      // invoice/check carries the token object with its expiry.
      const shown = await ctx.http
        .get(`/api/v1/invoices/${String(first.shopOrderId)}?refresh=true`)
        .set(auth())
        .expect(200);
      expect(shown.body.paymentToken).toEqual({
        account: expect.stringMatching(/\*/),
        expiresAt: expect.any(String),
      });
      const asAdmin = await ctx.http
        .get(`/api/v1/invoices/${String(first.shopOrderId)}`)
        .set(admin())
        .expect(200);
      const token = asAdmin.body.paymentToken.token as string;
      expect(token).toMatch(/^tok_/);
      expect(JSON.stringify(shown.body)).not.toContain(token);

      const second = invoiceBody({ paymentToken: token });
      // The sandbox completes a token charge autoComplete × timeScale after creating it: 1 ms at
      // the tests' scale, so its notification could overtake the create's answer. Held at 500 ms
      // here so the answer shows the charge as created, as the gateway's answer has it.
      const settings = ctx.sandbox.state.settings;
      const scale = settings.timeScale;
      settings.timeScale = 0.5;
      const charged = await (async () => {
        try {
          return (await create(second).expect(201)).body as Json;
        } finally {
          settings.timeScale = scale;
        }
      })();
      expect(charged).toMatchObject({ status: 'created', redirect: null, payUrl: null });
      expect(charged.paymentToken).toEqual({
        account: shown.body.paymentToken.account,
        expiresAt: shown.body.paymentToken.expiresAt,
      });
      const sentToken = (await sandboxRequests(ctx)).find(
        (r) => r.path === 'invoice/create' && r.body.shop_order_id === second.shopOrderId,
      );
      expect(sentToken?.body.payment_token).toBeDefined();
      const row = await db.query(
        `SELECT payment_token, used_payment_token FROM invoices WHERE shop_order_id=$1`,
        [second.shopOrderId],
      );
      expect(row.rows[0]).toEqual({ payment_token: null, used_payment_token: true });
      expect(await waitForStatus(ctx, String(second.shopOrderId), 'succeeded')).toMatchObject({
        status: 'succeeded',
      });
    });
  });

  describe('validation before anything is written or sent', () => {
    const cases: Array<[string, Json, string]> = [
      ['bad amount', { amount: '10.1.1' }, 'amount'],
      ['number amount', { amount: 100.1 }, 'amount'],
      ['negative amount', { amount: '-5' }, 'amount'],
      ['amount under the minimum', { amount: '9.99' }, 'amount'],
      ['amount over the maximum', { amount: '500000.01' }, 'amount'],
      ['unknown payway', { payway: 'nope_rub' }, 'payway'],
      ['listed alias without its scenario', { payway: 'card_core_payin_rub' }, 'payway'],
      ['inactive payway', { payway: PAYMENT.inactive, amount: '10' }, 'payway'],
      ['payway charset', { payway: 'card-rub' }, 'payway'],
      ['unknown alphabetic currency', { currency: 'RUR' }, 'currency'],
      ['bad extras regex', { payway: PAYMENT.wallet, extras: { phone: '12345' } }, 'extras.phone'],
      ['missing extra', { payway: PAYMENT.wallet }, 'extras.phone'],
      ['unknown extra', { extras: { colour: 'red' } }, 'extras.colour'],
      ['unknown field', { status: 'succeeded' }, 'status'],
      ['client-set refundedAmount', { refundedAmount: '0' }, 'refundedAmount'],
      ['long shopOrderId', { shopOrderId: 'x'.repeat(256) }, 'shopOrderId'],
      ['long description', { description: 'd'.repeat(256) }, 'description'],
      [
        'card number shape',
        { card: { number: '4111', expiryMonth: '12', expiryYear: '30', cvv: '123' } },
        'card.number',
      ],
      [
        'card expiry shape',
        { card: { number: '4111111111111111', expiryMonth: '1', expiryYear: '30', cvv: '123' } },
        'card.expiryMonth',
      ],
      [
        'card cvv shape',
        { card: { number: '4111111111111111', expiryMonth: '12', expiryYear: '30', cvv: '12' } },
        'card.cvv',
      ],
    ];

    it.each(cases)(
      '%s → 400 naming the field, no row, no gateway call',
      async (_name, overrides, field) => {
        await clearSandboxRequests(ctx);
        const body = invoiceBody(overrides);
        const res = await create(body).expect(400);
        expect(res.headers['content-type']).toContain('application/problem+json');
        expect(res.body.errors).toEqual(
          expect.arrayContaining([expect.objectContaining({ field })]),
        );
        if (typeof body.shopOrderId === 'string' && body.shopOrderId.length <= 255)
          expect(await rowCount(body.shopOrderId)).toBe(0);
        expect(await sandboxRequests(ctx)).toEqual([]);
      },
    );

    it('a valid wallet payment with its extra passes and sends the extra as a top-level field', async () => {
      const body = invoiceBody({ payway: PAYMENT.wallet, extras: { phone: '+79001234567' } });
      const res = await create(body).expect(201);
      expect(res.body.redirect).toMatchObject({ method: 'GET' });
      const sent = (await sandboxRequests(ctx)).find(
        (r) => r.path === 'invoice/create' && r.body.shop_order_id === body.shopOrderId,
      );
      expect(sent?.body.phone).toBe('+79001234567');
    });
  });

  describe('idempotency', () => {
    it('replays the same answer for the same body and refuses another body with 409', async () => {
      const body = invoiceBody();
      const first = await create(body).expect(201);
      await clearSandboxRequests(ctx);
      const again = await create({ ...body }).expect(201);
      expect(again.body).toEqual(first.body);
      expect(await invoiceCalls()).toEqual([]);
      const other = await create({ ...body, amount: '200.00' }).expect(409);
      expect(other.body).toMatchObject({
        status: 409,
        type: expect.stringContaining('idempotency-conflict'),
      });
      expect(await invoiceCalls()).toEqual([]);
    });

    it('20 concurrent identical creates make exactly one gateway call', async () => {
      const body = invoiceBody();
      await clearSandboxRequests(ctx);
      const results = await Promise.all(Array.from({ length: 20 }, () => create(body)));
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
      for (const r of results) expect(r.body).toEqual(results[0].body);
      expect(await invoiceCalls()).toEqual(['invoice/create']);
      expect(await rowCount(String(body.shopOrderId))).toBe(1);
    });
  });

  describe('gateway failures', () => {
    it('a fatal error rejects the invoice and answers 502 with the gateway error, replayed as is (with its own request id)', async () => {
      await sandboxControl(ctx, 'faults', { path: 'invoice/create', fault: 'fatal' });
      const body = invoiceBody();
      const res = await create(body).expect(502);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.body).toMatchObject({
        gatewayErrorCode: 10,
        fatal: true,
        gatewayMessage: expect.any(String),
      });
      const row = await db.query(`SELECT status, error_code FROM invoices WHERE shop_order_id=$1`, [
        body.shopOrderId,
      ]);
      expect(row.rows[0]).toEqual({ status: 'rejected', error_code: 10 });
      const again = await create(body).expect(502);
      // The same problem; each answer names its own request (docs/api.md, request ids).
      expect(again.body).toEqual({ ...res.body, requestId: again.headers['x-request-id'] });
      expect(res.body.requestId).toBe(res.headers['x-request-id']);
      expect(again.body.requestId).not.toBe(res.body.requestId);
    });

    it('a non-fatal error leaves the invoice created (201) for the notification to settle', async () => {
      await sandboxControl(ctx, 'faults', { path: 'invoice/create', fault: 'nonfatal' });
      const body = invoiceBody();
      const res = await create(body).expect(201);
      // Nothing is held during the call: the notification may settle it before the answer is
      // written, and the answer then says what is known.
      expect(['created', 'succeeded']).toContain(res.body.status);
      // The create's answer had no id; only a notification that came first can have told it.
      if (res.body.status === 'created') expect(res.body.invoiceId).toBeNull();
      else
        expect(res.body.invoiceId).toBe(
          String(ctx.sandbox.state.findInvoiceByOrder(SHOP_ID, String(body.shopOrderId))?.id),
        );
      expect(await waitForStatus(ctx, String(body.shopOrderId), 'succeeded')).toMatchObject({
        status: 'succeeded',
      });
    });

    it('a time-out leaves the invoice unknown, never retried; invoice/check settles it', async () => {
      await sandboxControl(ctx, 'faults', {
        path: 'invoice/create',
        fault: 'timeout_done',
        delayMs: 3000,
      });
      await clearSandboxRequests(ctx);
      const body = invoiceBody({ payway: PAYMENT.cardSuccess });
      const res = await create(body).expect(201);
      // No lock is held during the call, so the gateway's notification may land first and
      // settle it before the time-out is written: either way the create is never sent again.
      expect(['unknown', 'succeeded']).toContain(res.body.status);
      if (res.body.status === 'unknown') {
        const row = await db.query(
          `SELECT next_check_at <= now() + interval '1 second' AS due FROM invoices WHERE shop_order_id=$1`,
          [body.shopOrderId],
        );
        expect(row.rows[0].due).toBe(true);
      }
      expect(await invoiceCalls()).toEqual(['invoice/create']);
      const settled = await waitForStatus(ctx, String(body.shopOrderId), 'succeeded', 4000);
      expect(settled.status).toBe('succeeded');
    });
  });

  describe('payer redirect', () => {
    it('renders the auto-submitting form for a POST redirect, 404 for a wrong or missing token', async () => {
      const body = invoiceBody({
        shopOrderId: `pay/${orderId()}&"<x>`,
        payway: PAYMENT.sandboxCard('post_redirect'),
      });
      const inv = (await create(body).expect(201)).body as Json;
      const payUrl = new URL(String(inv.payUrl));
      expect(payUrl.pathname).toBe(`/pay/${encodeURIComponent(String(body.shopOrderId))}`);
      const page = await ctx.http.get(payUrl.pathname + payUrl.search).expect(200);
      expect(page.headers['content-type']).toContain('text/html');
      expect(page.headers['cache-control']).toBe('no-store');
      const redirect = inv.redirect as { url: string; params: Record<string, string> };
      expect(page.text).toContain(`<form method="post" action="${redirect.url}">`);
      for (const [k, v] of Object.entries(redirect.params))
        expect(page.text).toContain(`<input type="hidden" name="${k}" value="${v}">`);
      expect(page.text).toContain('<noscript><button type="submit">');
      await ctx.http.get(payUrl.pathname + '?t=wrong').expect(404);
      const missing = await ctx.http.get(payUrl.pathname).expect(404);
      expect(missing.headers['content-type']).toContain('application/problem+json');
      await ctx.http.get('/pay/nobody?t=x').expect(404);
    });

    it('answers a GET redirect with 302 to url?query', async () => {
      const body = invoiceBody({ payway: PAYMENT.wallet, extras: { phone: '+79001234567' } });
      const inv = (await create(body).expect(201)).body as Json;
      const payUrl = new URL(String(inv.payUrl));
      const res = await ctx.http
        .get(payUrl.pathname + payUrl.search)
        .redirects(0)
        .expect(302);
      const redirect = inv.redirect as { url: string; params: Record<string, string> };
      // JSON objects carry no order: the create's answer and the stored row may list the
      // parameters differently; the address and the parameters must be the same.
      const location = new URL(String(res.headers.location));
      expect(`${location.origin}${location.pathname}`).toBe(redirect.url);
      expect(Object.fromEntries(location.searchParams)).toEqual(redirect.params);
    });
  });

  describe('reading', () => {
    it('lists with filters and cursor pagination', async () => {
      const payway = PAYMENT.cardUsd;
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const body = invoiceBody({ payway, currency: 840, amount: '5.00' });
        await create(body).expect(201);
        ids.push(String(body.shopOrderId));
      }
      const page1 = await ctx.http
        .get(`/api/v1/invoices?payway=${encodeURIComponent(payway)}&limit=2`)
        .set(auth())
        .expect(200);
      expect(page1.body.items.map((i: Json) => i.shopOrderId)).toEqual([ids[2], ids[1]]);
      expect(page1.body.nextCursor).toEqual(expect.any(String));
      const page2 = await ctx.http
        .get(
          `/api/v1/invoices?payway=${encodeURIComponent(payway)}&limit=2&cursor=${page1.body.nextCursor}`,
        )
        .set(auth())
        .expect(200);
      expect(page2.body).toEqual({
        items: [expect.objectContaining({ shopOrderId: ids[0] })],
        nextCursor: null,
      });
      const byStatus = await ctx.http
        .get(`/api/v1/invoices?status=rejected&limit=500`)
        .set(auth())
        .expect(200);
      expect(byStatus.body.items.every((i: Json) => i.status === 'rejected')).toBe(true);
      const future = await ctx.http
        .get(`/api/v1/invoices?createdFrom=2999-01-01T00:00:00Z`)
        .set(auth())
        .expect(200);
      expect(future.body.items).toEqual([]);
      await ctx.http.get('/api/v1/invoices?status=nonsense').set(auth()).expect(400);
      await ctx.http.get('/api/v1/invoices/absent-order').set(auth()).expect(404);
      await ctx.http.get('/api/v1/invoices').expect(401);
    });
  });
});
