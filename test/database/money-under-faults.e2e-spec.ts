// Over 500 lines on purpose: one app and database, started once in its beforeAll, serve all its
// tests; a split would start another.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { GatewayService, signNotificationFields } from '../../src/gateway';
import { GatewayError } from '../../src/gateway/gateway.errors';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { PayoutProcessor } from '../../src/payouts/payout-processor';
import { PaywayConfigService } from '../../src/payway-config/payway-config.service';
import {
  admin,
  auth,
  PAYOUT_SHOP_ID,
  SECRET,
  SHOP_ID,
  startTestApp,
  TestContext,
} from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';

/**
 * Money under faults, case by case (the absent-answer and contradicting-notification cases live
 * in the reconciliation, refund and notification
 * suites): a repeat answered whatever the configuration says now, the refresh's amount check,
 * the payout re-create discipline, foreign gateway records, polls that always fail, and the
 * operator's attention queue with its two resolutions.
 */
let ctx: TestContext;
let db: Client;
let seq = 0;
const id = (p: string): string => `${p}-${Date.now()}-${++seq}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  ctx = await startTestApp({
    env: { PAYOUT_POLL_INTERVAL_S: '0.2', PAYOUT_POLL_MAX_S: '60' },
  });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
}, 120000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

async function sandbox(path: string, body: Record<string, unknown> = {}): Promise<void> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

function payoutBody(
  shopPaymentId: string,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    shopPaymentId,
    amount: '1000.00',
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway: PAYOUT.card,
    account: '4111111111111111',
    ...over,
  };
}

async function row(table: string, key: string, value: string): Promise<Record<string, unknown>> {
  // table and key are literals of this file, never input.
  const r = await db.query(`SELECT * FROM ${table} WHERE ${key} = $1`, [value]);
  return r.rows[0] as Record<string, unknown>;
}

async function pollUntil(
  shopPaymentId: string,
  done: (r: Record<string, unknown>) => boolean,
  ms = 15000,
): Promise<Record<string, unknown>> {
  const poller = ctx.service.app.get(PayoutPoller);
  const until = Date.now() + ms;
  for (;;) {
    await poller.runOnce();
    const r = await row('payouts', 'shop_payment_id', shopPaymentId);
    if (done(r) || Date.now() > until) return r;
    await sleep(100);
  }
}

describe('a repeat is answered before the configuration is consulted', () => {
  it('payout and invoice repeats replay after the limits were lowered; a new id is refused', async () => {
    const payways = ctx.service.app.get(PaywayConfigService);
    const payout = id('c1-po');
    const first = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(payout));
    expect(first.status).toBe(202);
    const order = id('c1-inv');
    const invoice = {
      shopOrderId: order,
      amount: '100.10',
      currency: 643,
      payway: PAYMENT.card,
      description: 'x',
    };
    const created = await ctx.http.post('/api/v1/invoices').set(auth()).send(invoice);
    expect(created.status).toBe(201);

    // Another instance's cache, or a refresh: the limits are now below both amounts.
    const out = (await payways.getPayway('payout', PAYOUT.card)) as { max_amount?: unknown };
    const pay = (await payways.getPayway('payment', PAYMENT.card)) as { max_amount?: unknown };
    const saved = [out.max_amount, pay.max_amount];
    out.max_amount = '1.00';
    pay.max_amount = '1.00';
    try {
      const repeat = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(payout));
      expect(repeat.status).toBe(202);
      expect(repeat.body).toEqual(first.body);
      const again = await ctx.http.post('/api/v1/invoices').set(auth()).send(invoice);
      expect(again.status).toBe(201);
      expect(again.body).toEqual(created.body);
      const fresh = await ctx.http
        .post('/api/v1/payouts')
        .set(auth())
        .send(payoutBody(id('c1-new')));
      expect(fresh.status).toBe(400);
      expect((fresh.body.errors as Array<{ field: string }>).map((e) => e.field)).toContain(
        'amount',
      );
    } finally {
      [out.max_amount, pay.max_amount] = saved;
    }
    const creates = ctx.sandbox.state.requests.filter(
      (r) =>
        r.path === 'withdraw/create' &&
        (r.body as Record<string, unknown>).shop_payment_id === payout,
    );
    expect(creates).toHaveLength(1);
  });
});

describe('?refresh=true checks the amount like every other path', () => {
  it('a paid record with another amount is not applied; the invoice is flagged', async () => {
    const shopOrderId = id('c4');
    await db.query(
      `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token)
       VALUES ($1, $2, $3, 'awaiting_payer', '100.00', 643, 'card_rub', $4)`,
      [SHOP_ID, shopOrderId, 'f'.repeat(64), randomBytes(16).toString('hex')],
    );
    await sandbox('settings', { suppressNotifications: true });
    try {
      const created = await ctx.service.app.get(GatewayService).createInvoice({
        shop_order_id: shopOrderId,
        amount: '50.00',
        currency: 643,
        payway: PAYMENT.card,
      });
      await sandbox(`invoices/${String(created.id)}/pay`);
      const res = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('awaiting_payer');
      const r = await row('invoices', 'shop_order_id', shopOrderId);
      expect(r.needs_attention).toBe(true);
      expect(String(r.attention_reason)).toMatch(/^mismatch: shop_amount 50/);
    } finally {
      await sandbox('settings', { suppressNotifications: false });
    }
  });
});

describe('a foreign gateway record is never adopted', () => {
  it('error 6 for a payout the gateway holds with another amount: attention, no money state', async () => {
    const shopPaymentId = id('c6');
    await ctx.service.app.get(GatewayService).createWithdraw({
      shop_payment_id: shopPaymentId,
      amount: '500.00',
      amount_type: 'ps_amount',
      shop_currency: 643,
      payway: PAYOUT.card,
      account: '4111111111111111',
    });
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(shopPaymentId));
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('unknown');
    const r = await pollUntil(shopPaymentId, (p) => p.status !== 'unknown');
    expect(r).toMatchObject({
      status: 'needs_attention',
      needs_attention: true,
      withdraw_id: null,
    });
    expect(String(r.attention_reason)).toMatch(/^mismatch: .*amount 500/);
    const shown = await ctx.http.get(`/api/v1/payouts/${shopPaymentId}`).set(auth());
    expect(shown.body).toMatchObject({ status: 'needs_attention', needsAttention: true });
    expect(String(shown.body.attentionReason)).toMatch(/^mismatch/);
  });
});

describe('a payout whose every poll fails is recorded and flagged', () => {
  it('the error lands on the row in its own transaction; past the deadline: attention', async () => {
    const shopPaymentId = id('c7');
    await db.query(
      `INSERT INTO payouts (shop_id, shop_payment_id, request_fingerprint, status, amount, amount_type, shop_currency,
                            payway, account_masked, account_sealed, create_attempts, next_poll_at, poll_deadline)
       VALUES ($1, $2, $3, 'unknown', '10.00', 'ps_amount', 643, 'card_rub', '****1111', 'not-a-sealed-value', 1,
               now(), now() + interval '1 hour')`,
      [PAYOUT_SHOP_ID, shopPaymentId, 'f'.repeat(64)],
    );
    const poller = ctx.service.app.get(PayoutPoller);
    await poller.runOnce();
    let r = await row('payouts', 'shop_payment_id', shopPaymentId);
    expect(r).toMatchObject({ status: 'unknown', poll_count: 1, lease_until: null });
    expect(r.last_error).toEqual(expect.any(String));
    expect(r.next_poll_at).not.toBeNull();
    await db.query(
      `UPDATE payouts SET poll_deadline = now() - interval '1 second', next_poll_at = now() WHERE shop_payment_id = $1`,
      [shopPaymentId],
    );
    await poller.runOnce();
    r = await row('payouts', 'shop_payment_id', shopPaymentId);
    // Flagged, and still polled every WATCH_INTERVAL_S: the flag never stops the watch.
    expect(r).toMatchObject({
      status: 'needs_attention',
      needs_attention: true,
    });
    expect(r.next_poll_at).not.toBeNull();
    expect(String(r.attention_reason)).toMatch(/^poll_failing/);
    expect(
      ctx.sandbox.state.requests.some(
        (q) => (q.body as Record<string, unknown>).shop_payment_id === shopPaymentId,
      ),
    ).toBe(false);
  });
});

describe('a payout still absent at its poll deadline', () => {
  it('is not sent again (nobody would poll it): flagged, one withdraw/create in all', async () => {
    const shopPaymentId = id('late');
    await sandbox('faults', { path: 'withdraw/create', fault: 'timeout_not_done', delayMs: 3000 });
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(shopPaymentId));
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('unknown');
    const creates = (): number =>
      ctx.sandbox.state.requests.filter(
        (q) =>
          q.path === 'withdraw/create' &&
          (q.body as Record<string, unknown>).shop_payment_id === shopPaymentId,
      ).length;
    expect(creates()).toBe(1);
    // Long past any wait for the lost create, and past the deadline.
    await db.query(
      `UPDATE payouts SET last_create_at = now() - interval '1 hour', poll_deadline = now() - interval '1 second',
              next_poll_at = now(), call_lease_until = NULL, call_owner = NULL WHERE shop_payment_id = $1`,
      [shopPaymentId],
    );
    await ctx.service.app.get(PayoutPoller).runOnce();
    const r = await row('payouts', 'shop_payment_id', shopPaymentId);
    // Flagged and still polled, never created again.
    expect(r).toMatchObject({ needs_attention: true, create_attempts: 1 });
    expect(r.next_poll_at).not.toBeNull();
    expect(String(r.attention_reason)).toMatch(/^deadline: absent at the poll deadline/);
    expect(creates()).toBe(1);
  });
});

describe('a late withdraw/create answer of an earlier attempt', () => {
  it('never fails the payout nor frees the claim of the newer attempt; only a gateway record is applied', async () => {
    const shopPaymentId = id('stale');
    await sandbox('faults', { path: 'withdraw/create', fault: 'timeout_not_done', delayMs: 3000 });
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(shopPaymentId));
    expect(res.body.status).toBe('unknown');
    // Another instance has since claimed attempt 2 and is calling the gateway.
    await db.query(
      `UPDATE payouts SET create_attempts = 2, call_owner = 'other-instance', call_started_at = now(),
              call_lease_until = now() + interval '1 hour' WHERE shop_payment_id = $1`,
      [shopPaymentId],
    );
    const processor = ctx.service.app.get(PayoutProcessor);
    const refused = new GatewayError({
      call: 'withdraw/create',
      errorCode: 15,
      gatewayMessage: 'IP denied',
      fatal: true,
      httpStatus: 200,
      isDuplicate: false,
      isAbsent: false,
    });
    // Attempt 1's answer arrives now (its process was paused past its lease).
    await ctx.service.app.get(DataSource).transaction(async (m) => {
      const p = await processor.lock(m, { shopId: PAYOUT_SHOP_ID, shopPaymentId });
      await processor.applyCreate(m, p!, { ok: false, err: refused }, 'reconciliation', 1);
    });
    const r = await row('payouts', 'shop_payment_id', shopPaymentId);
    expect(r).toMatchObject({
      status: 'unknown',
      call_owner: 'other-instance',
      create_attempts: 2,
      needs_attention: false,
    });
    expect(r.call_lease_until).not.toBeNull();
    expect(String(r.last_error)).toMatch(/attempt 1/);
    // The same answer for the current attempt (a repeat) frees the claim but does
    // not fail the payout: attempt 1 may have been paid. Unknown, flagged, still polled.
    await ctx.service.app.get(DataSource).transaction(async (m) => {
      const p = await processor.lock(m, { shopId: PAYOUT_SHOP_ID, shopPaymentId });
      await processor.applyCreate(m, p!, { ok: false, err: refused }, 'reconciliation', 2);
    });
    const settled = await row('payouts', 'shop_payment_id', shopPaymentId);
    expect(settled).toMatchObject({
      status: 'unknown',
      call_owner: null,
      needs_attention: true,
    });
    expect(String(settled.attention_reason)).toMatch(/^unsettled_recreate:/);
    expect(settled.next_poll_at).not.toBeNull();
    // A status round that then hears "absent" claims no create for the flagged payout: an
    // operator decides.
    const absent = new GatewayError({
      call: 'withdraw/shop_payment_status',
      errorCode: 5,
      gatewayMessage: 'not found',
      fatal: null,
      httpStatus: 200,
      isDuplicate: false,
      isAbsent: true,
    });
    const step = await ctx.service.app.get(DataSource).transaction(async (m) => {
      const p = await processor.lock(m, { shopId: PAYOUT_SHOP_ID, shopPaymentId });
      await m.update('payouts', { id: p!.id }, { lastCreateAt: new Date(0) });
      p!.lastCreateAt = new Date(0);
      return processor.applyStatus(
        m,
        p!,
        'withdraw/shop_payment_status',
        { ok: false, err: absent },
        'reconciliation',
        true,
      );
    });
    expect(step).toBe('done');
    expect(await row('payouts', 'shop_payment_id', shopPaymentId)).toMatchObject({
      status: 'unknown',
      create_attempts: 2,
      call_owner: null,
    });
  });
});

describe('attention: the queue and its resolutions', () => {
  function notification(
    shopOrderId: string,
    status: string,
    updated: string,
  ): Record<string, string> {
    const fields: Record<string, string> = {
      shop_id: String(SHOP_ID),
      shop_order_id: shopOrderId,
      shop_amount: '100.00',
      shop_currency: '643',
      payment_id: '42',
      payway: 'card_rub',
      created: '2026-01-01T10:00:00+03:00',
      updated,
      status,
    };
    return { ...fields, sign: signNotificationFields(fields, SECRET) };
  }

  async function contradicted(): Promise<string> {
    const shopOrderId = id('att');
    await db.query(
      `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token)
       VALUES ($1, $2, $3, 'rejected', '100.00', 643, 'card_rub', $4)`,
      [SHOP_ID, shopOrderId, 'f'.repeat(64), randomBytes(16).toString('hex')],
    );
    const res = await ctx.http
      .post('/webhooks/gateway?type=invoice')
      .set('content-type', 'application/json')
      .send(JSON.stringify(notification(shopOrderId, 'success', '2026-01-01T10:05:00+03:00')));
    expect(res.status).toBe(200);
    return shopOrderId;
  }

  it('lists flagged objects oldest first, admin only; accept without the gateway\'s word changes nothing', async () => {
    const a = await contradicted();
    await sleep(20);
    const b = await contradicted();
    expect((await ctx.http.get('/api/v1/admin/attention').set(auth())).status).toBe(403);
    const list = await ctx.http.get('/api/v1/admin/attention').set(admin());
    expect(list.status).toBe(200);
    const ids = (
      list.body.items as Array<{ id: string; objectType: string; attentionReason: string }>
    ).map((i) => i.id);
    expect(ids.indexOf(a)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(a)).toBeLessThan(ids.indexOf(b));
    const item = (list.body.items as Array<Record<string, unknown>>).find((i) => i.id === a);
    expect(item).toMatchObject({ objectType: 'invoice', status: 'rejected', amount: '100.00' });
    expect(String(item?.attentionReason)).toMatch(/^contradiction/);

    const metrics = await ctx.http.get('/metrics');
    expect(metrics.text).toMatch(
      /payments_attention_raised_total\{object="invoice",reason="contradiction"\} \d+/,
    );

    const bad = await ctx.http
      .post(`/api/v1/admin/invoices/${a}/resolve`)
      .set(admin())
      .send({ action: 'accept', status: 'paid', note: 'x' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('status');
    const noNote = await ctx.http
      .post(`/api/v1/admin/invoices/${a}/resolve`)
      .set(admin())
      .send({ action: 'accept', status: 'succeeded' });
    expect(noNote.status).toBe(400);
    expect(
      (
        await ctx.http
          .post(`/api/v1/admin/invoices/${a}/resolve`)
          .set(auth())
          .send({ action: 'recheck' })
      ).status,
    ).toBe(403);
    expect(
      (
        await ctx.http
          .post(`/api/v1/admin/nothing/${a}/resolve`)
          .set(admin())
          .send({ action: 'recheck' })
      ).status,
    ).toBe(404);

    // The gateway has no record of this hand-made invoice: no word for succeeded, nothing moves.
    const refused = await ctx.http
      .post(`/api/v1/admin/invoices/${a}/resolve`)
      .set(admin())
      .send({ action: 'accept', status: 'succeeded', note: 'paid per back office' });
    expect(refused.status).toBe(409);
    expect(refused.body.type).toMatch(/gateway-evidence-required$/);
    expect(await row('invoices', 'shop_order_id', a)).toMatchObject({
      status: 'rejected',
      needs_attention: true,
    });
    const events = await db.query(
      `SELECT to_status, cause, details FROM events WHERE entity_type = 'invoice' AND entity_id = $1 ORDER BY id`,
      [a],
    );
    const details = events.rows.map(
      (e) => (e as { details: Record<string, unknown> | null }).details ?? {},
    );
    expect(details.some((d) => d.attention === 'raised')).toBe(true);
    expect(details.some((d) => d.attention === 'resolved')).toBe(false);
    const after = await ctx.http.get('/api/v1/admin/attention').set(admin());
    expect((after.body.items as Array<{ id: string }>).map((i) => i.id)).toContain(a);
  });

  it('recheck asks the gateway now and applies its answer through the invoice rule; an unconfirmed flag stays', async () => {
    const shopOrderId = await contradicted();
    const res = await ctx.http
      .post(`/api/v1/admin/invoices/${shopOrderId}/resolve`)
      .set(admin())
      .send({ action: 'recheck' });
    // The gateway does not know this hand-made invoice: absence teaches nothing about a final one.
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('rejected');
    // Nothing confirmed the final status: the flag stays for an operator.
    const r = await row('invoices', 'shop_order_id', shopOrderId);
    expect(r.needs_attention).toBe(true);
    expect(
      ctx.sandbox.state.requests.some(
        (q) =>
          q.path === 'invoice/check' &&
          (q.body as Record<string, unknown>).shop_order_id === shopOrderId,
      ),
    ).toBe(true);
  });
});

describe('payout re-create discipline', () => {
  let fast: TestContext;
  beforeAll(async () => {
    fast = await startTestApp({
      env: {
        GATEWAY_TIMEOUT_MS: '700',
        PAYOUT_POLL_INTERVAL_S: '0.2',
        PAYOUT_POLL_MAX_S: '60',
        PAYOUT_MAX_CREATES: '2',
      },
    });
  }, 120000);
  afterAll(async () => {
    await fast?.close();
  });

  it('waits an interval before asking, never creates twice within two time-outs, stops at PAYOUT_MAX_CREATES', async () => {
    const res = await fetch(`${fast.sandbox.origin}/sandbox/faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        path: 'withdraw/create',
        fault: 'timeout_not_done',
        times: 10,
        delayMs: 900,
      }),
    });
    expect(res.status).toBe(200);
    const shopPaymentId = id('c5');
    const created = await fast.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(payoutBody(shopPaymentId));
    expect(created.status).toBe(202);
    expect(created.body.status).toBe('unknown');
    const mine = (path: string) =>
      fast.sandbox.state.requests.filter(
        (r) =>
          r.path === path && (r.body as Record<string, unknown>).shop_payment_id === shopPaymentId,
      );
    // No status question right after the time-out.
    expect(mine('withdraw/shop_payment_status')).toHaveLength(0);
    const poller = fast.service.app.get(PayoutPoller);
    const until = Date.now() + 20000;
    let status = '';
    while (Date.now() < until) {
      await poller.runOnce();
      const r = await fast.http.get(`/api/v1/payouts/${shopPaymentId}`).set(auth());
      status = String(r.body.status);
      if (status === 'needs_attention') break;
      await sleep(100);
    }
    expect(status).toBe('needs_attention');
    const creates = mine('withdraw/create');
    expect(creates).toHaveLength(2);
    // Two time-outs by the service's clock; the sandbox's receipt times add the requests' own
    // trips (a few ms apart at most). A second create inside the window would be ~0 or ~700 ms.
    expect(Date.parse(creates[1].time) - Date.parse(creates[0].time)).toBeGreaterThanOrEqual(
      1400 - 50,
    );
    const statusCalls = mine('withdraw/shop_payment_status');
    expect(Date.parse(statusCalls[0].time) - Date.parse(creates[0].time)).toBeGreaterThanOrEqual(
      200,
    );
    // Several absent answers, yet no third create.
    expect(statusCalls.length).toBeGreaterThanOrEqual(2);
    const attention = await fast.http.get('/api/v1/admin/attention').set(admin());
    const item = (attention.body.items as Array<Record<string, unknown>>).find(
      (i) => i.id === shopPaymentId,
    );
    expect(String(item?.attentionReason)).toMatch(/^create_cap/);
  }, 60000);
});

describe('a crash between phase 2 and phase 3 (the answer lost with its process)', () => {
  /** Puts a row back where a process killed after the gateway's answer would have left it. */
  async function lose(table: string, key: string, value: string, extra: string): Promise<void> {
    // table, key and extra are literals of this file, never input.
    await db.query(
      `UPDATE ${table} SET response_code = NULL, response_body = NULL, call_owner = 'dead-instance',
              call_started_at = now() - interval '1 minute', call_lease_until = now() - interval '1 second', ${extra}
        WHERE ${key} = $1`,
      [value],
    );
  }
  const calls = (path: string, field: string, value: string): number =>
    ctx.sandbox.state.requests.filter(
      (r) => r.path === path && (r.body as Record<string, unknown>)[field] === value,
    ).length;

  it('invoice: the repeat answers unknown and never re-sends; invoice/check settles it', async () => {
    const shopOrderId = id('lost-inv');
    const body = {
      shopOrderId,
      amount: '100.10',
      currency: 643,
      payway: PAYMENT.card,
      description: 'x',
    };
    expect((await ctx.http.post('/api/v1/invoices').set(auth()).send(body)).status).toBe(201);
    await lose(
      'invoices',
      'shop_order_id',
      shopOrderId,
      `status = 'pending', invoice_id = NULL, redirect = NULL`,
    );
    const repeat = await ctx.http.post('/api/v1/invoices').set(auth()).send(body);
    expect(repeat.status).toBe(201);
    expect(repeat.body.status).toBe('unknown');
    expect(calls('invoice/create', 'shop_order_id', shopOrderId)).toBe(1);
    const settled = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
    expect(settled.body.status).toBe('awaiting_payer');
    expect(calls('invoice/create', 'shop_order_id', shopOrderId)).toBe(1);
  });

  it('refund: the repeat answers WAITING/unknown and never re-sends; get-refunds settles it', async () => {
    const shopOrderId = id('lost-ref-inv');
    const paid = await ctx.http.post('/api/v1/invoices').set(auth()).send({
      shopOrderId,
      amount: '100.00',
      currency: 643,
      payway: PAYMENT.cardSuccess,
    });
    expect(paid.status).toBe(201);
    const until = Date.now() + 10000;
    while (Date.now() < until) {
      const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      if (got.body.status === 'succeeded') break;
      await sleep(100);
    }
    const shopRefundId = id('lost-ref');
    const body = { shopRefundId, amount: '10.00' };
    const url = `/api/v1/invoices/${shopOrderId}/refunds`;
    // No refund notification: one arriving after the answer is "lost" would settle the refund
    // before the repeat (correctly), and this test is about the repeat and get-refunds alone.
    const settings = (suppress: boolean): Promise<Response> =>
      fetch(`${ctx.sandbox.origin}/sandbox/settings`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ suppressNotifications: suppress }),
      });
    expect((await settings(true)).ok).toBe(true);
    try {
      expect((await ctx.http.post(url).set(auth()).send(body)).status).toBe(201);
      await lose(
        'refunds',
        'shop_refund_id',
        shopRefundId,
        `status = 'WAITING', submit_state = 'pending'`,
      );
      const repeat = await ctx.http.post(url).set(auth()).send(body);
      expect(repeat.status).toBe(201);
      expect(repeat.body.status).toBe('WAITING');
      expect((await row('refunds', 'shop_refund_id', shopRefundId)).submit_state).toBe('unknown');
      const listed = await ctx.http.get(`${url}?refresh=true`).set(auth());
      expect(listed.status).toBe(200);
      expect((await row('refunds', 'shop_refund_id', shopRefundId)).submit_state).toBe('accepted');
      expect(calls('invoice/create-refund', 'shop_refund_id', shopRefundId)).toBe(1);
    } finally {
      await settings(false);
    }
  });

  it('payout: the repeat answers unknown and never re-sends; the poller finds it by status', async () => {
    const shopPaymentId = id('lost-po');
    expect(
      (await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(shopPaymentId))).status,
    ).toBe(202);
    await lose(
      'payouts',
      'shop_payment_id',
      shopPaymentId,
      `status = 'pending', withdraw_id = NULL`,
    );
    const repeat = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(payoutBody(shopPaymentId));
    expect(repeat.status).toBe(202);
    expect(repeat.body.status).toBe('unknown');
    await db.query(`UPDATE payouts SET next_poll_at = now() WHERE shop_payment_id = $1`, [
      shopPaymentId,
    ]);
    const r = await pollUntil(shopPaymentId, (p) => p.withdraw_id !== null);
    expect(r.withdraw_id).not.toBeNull();
    expect(calls('withdraw/create', 'shop_payment_id', shopPaymentId)).toBe(1);
  });
});
