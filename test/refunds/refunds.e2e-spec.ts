// Over 500 lines on purpose: one app and database, started once in its beforeAll, serve all its
// tests; a split would start another.
import { Client } from 'pg';
import { createHash, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { signNotificationFields } from '../../src/gateway';
import { RefundReconciler } from '../../src/refunds/refund-reconciler';
import { acceptRefundStatus, lockRefundById } from '../../src/refunds/refund-transitions';
import { admin, auth, SECRET, SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';
import { eventually } from '../support/webhook-receiver';

interface SandboxRequest {
  path: string;
  body: Record<string, unknown>;
  result: boolean | null;
  error_code: number | null;
}

const PROBLEM = 'https://problems.piastrix-orchestrator.dev/';

describe('refunds (sandbox + PostgreSQL)', () => {
  let ctx: TestContext;
  let db: Client;

  beforeAll(async () => {
    ctx = await startTestApp({
      env: { REFUND_RECONCILE_GRACE_S: '0.1', ABSENT_CHECKS: '2', ABSENT_WINDOW_S: '0.5' },
    });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  afterEach(async () => {
    await control('POST', '/sandbox/settings', { suppressNotifications: false });
    await control('DELETE', '/sandbox/faults');
  });

  // ------------------------------------------------------------ helpers

  async function control(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<unknown> {
    const res = await fetch(ctx.sandbox.origin + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as { data: unknown };
    return json.data;
  }

  async function gatewayRequests(path: string, shopRefundId?: string): Promise<SandboxRequest[]> {
    const all = (await control('GET', '/sandbox/requests')) as SandboxRequest[];
    return all.filter(
      (r) =>
        r.path === path && (shopRefundId === undefined || r.body.shop_refund_id === shopRefundId),
    );
  }

  /** Builder: an invoice paid at once through the service's own API (the sandbox completes it). */
  async function paidInvoice(
    overrides: { amount?: string; payway?: string } = {},
  ): Promise<{ shopOrderId: string; invoiceId: string }> {
    const shopOrderId = `order-${randomUUID()}`;
    const created = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId,
        amount: overrides.amount ?? '100.00',
        currency: 643,
        payway: overrides.payway ?? PAYMENT.cardSuccess,
      });
    expect(created.status).toBe(201);
    if (overrides.payway === undefined) {
      await eventually(async () => {
        const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
        expect(got.body.status).toBe('succeeded');
      });
    }
    return { shopOrderId, invoiceId: String(created.body.invoiceId) };
  }

  function refund(shopOrderId: string, body: Record<string, unknown>, as = auth()) {
    const prefix = as.Authorization === admin().Authorization ? '/api/v1/admin' : '/api/v1';
    return ctx.http.post(`${prefix}/invoices/${shopOrderId}/refunds`).set(as).send(body);
  }

  async function stored(
    shopRefundId: string,
  ): Promise<{ status: string; submit_state: string; amount: string } | undefined> {
    const r = await db.query(
      'SELECT status, submit_state, amount::text AS amount FROM refunds WHERE shop_refund_id = $1',
      [shopRefundId],
    );
    return r.rows[0] as { status: string; submit_state: string; amount: string } | undefined;
  }

  async function refundedAmount(shopOrderId: string): Promise<string> {
    const r = await db.query(
      'SELECT refunded_amount::text AS v FROM invoices WHERE shop_order_id = $1',
      [shopOrderId],
    );
    return (r.rows[0] as { v: string }).v;
  }


  /** A refund notification as the gateway sends it (all values text), signed by the spec's rule. */
  function refundNotice(
    shopOrderId: string,
    invoiceId: string,
    shopRefundId: string,
    amount: string,
    status: 'SUCCESS' | 'FAILED' | 'WAITING',
    processedAt = '2026-01-01T10:05:00',
  ) {
    const fields: Record<string, string> = {
      shop_id: String(SHOP_ID),
      shop_refund_id: shopRefundId,
      invoice_id: invoiceId,
      shop_order_id: shopOrderId,
      status,
      amount,
      currency: 'RUB',
      error_code: status === 'FAILED' ? '10' : '0',
      created_at: '2026-01-01T10:00:00',
      processed_at: processedAt,
    };
    return ctx.http
      .post('/webhooks/gateway?type=refund')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ ...fields, sign: signNotificationFields(fields, SECRET) }));
  }

  /** The invoice's `invoice.refund_updated` events, oldest first. */
  async function refundUpdates(shopOrderId: string): Promise<
    Array<{
      cause: string;
      details: Record<string, unknown>;
      data: Record<string, unknown>;
    }>
  > {
    const r = await db.query(
      `SELECT cause, details, data FROM events
        WHERE entity_type = 'invoice' AND entity_id = $1 AND type = 'invoice.refund_updated' ORDER BY sequence`,
      [shopOrderId],
    );
    return r.rows as Array<{
      cause: string;
      details: Record<string, unknown>;
      data: Record<string, unknown>;
    }>;
  }

  const sums = (v: Record<string, unknown>) => ({
    refundedAmount: v.refundedAmount,
    refundPendingAmount: v.refundPendingAmount,
    refundableAmount: v.refundableAmount,
    refundStatus: v.refundStatus,
  });

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const reconciler = (): RefundReconciler => ctx.service.app.get(RefundReconciler);

  // ------------------------------------------------------------ tests

  it('full refund: WAITING, settled SUCCESS by the gateway notification, refunded_amount kept, audited', async () => {
    const { shopOrderId } = await paidInvoice();
    const res = await refund(shopOrderId, { shopRefundId: 'full-1', amount: '100.00' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      shopRefundId: 'full-1',
      shopOrderId,
      amount: '100.00',
      currency: 643,
    });
    expect(['WAITING', 'SUCCESS']).toContain(res.body.status);
    const [call] = await gatewayRequests('invoice/create-refund', 'full-1');
    expect(call.body.callback_url).toBe(`${ctx.url}/webhooks/gateway`);

    await eventually(async () => expect((await stored('full-1'))?.status).toBe('SUCCESS'));
    expect(await refundedAmount(shopOrderId)).toBe('100.00');
    // invoice/check now reports shop_refund 100.00 as well: the sums agree, nothing is flagged.
    await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth()).expect(200);
    const flag = await db.query('SELECT needs_attention FROM invoices WHERE shop_order_id = $1', [
      shopOrderId,
    ]);
    expect(flag.rows[0]).toEqual({ needs_attention: false });
    const list = await ctx.http.get(`/api/v1/invoices/${shopOrderId}/refunds`).set(auth());
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([
      expect.objectContaining({
        shopRefundId: 'full-1',
        status: 'SUCCESS',
        processedAt: expect.any(String),
      }),
    ]);
    const events = await db.query(
      `SELECT from_status, to_status, cause FROM events WHERE entity_type = 'refund' AND entity_id = 'full-1' ORDER BY id`,
    );
    expect(events.rows[0]).toMatchObject({ from_status: null, to_status: 'WAITING', cause: 'api' });
    expect(events.rows).toContainEqual(
      expect.objectContaining({
        from_status: 'WAITING',
        to_status: 'SUCCESS',
        cause: 'notification',
      }),
    );
  });

  it('two partial refunds up to the total; a third that would exceed is refused with no gateway call', async () => {
    const { shopOrderId } = await paidInvoice();
    expect((await refund(shopOrderId, { shopRefundId: 'part-1', amount: '40.10' })).status).toBe(
      201,
    );
    expect(
      (await refund(shopOrderId, { shopRefundId: 'part-2', amount: '59.90' }, admin())).status,
    ).toBe(201);
    const third = await refund(shopOrderId, { shopRefundId: 'part-3', amount: '0.01' });
    expect(third.status).toBe(422);
    expect(third.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(third.body.type).toBe(PROBLEM + 'refund-exceeds-paid-amount');
    expect(await gatewayRequests('invoice/create-refund', 'part-3')).toHaveLength(0);
    expect(await stored('part-3')).toBeUndefined();
    await eventually(async () => expect(await refundedAmount(shopOrderId)).toBe('100.00'));
  });

  it('10 concurrent partial refunds never exceed the paid amount', async () => {
    const { shopOrderId } = await paidInvoice({ amount: '100.00' });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        refund(shopOrderId, { shopRefundId: `conc-${i}`, amount: '15.00' }),
      ),
    );
    const accepted = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 422);
    expect(accepted).toHaveLength(6);
    expect(refused).toHaveLength(4);
    const sum = await db.query(
      `SELECT COALESCE(SUM(r.amount), 0) <= i.amount AS fits, COALESCE(SUM(r.amount), 0)::text AS total
         FROM invoices i LEFT JOIN refunds r ON r.invoice_pk = i.id AND r.status <> 'FAILED'
        WHERE i.shop_order_id = $1 GROUP BY i.amount`,
      [shopOrderId],
    );
    expect(sum.rows[0]).toEqual({ fits: true, total: '90.00' });
    const calls = (await gatewayRequests('invoice/create-refund')).filter((c) =>
      String(c.body.shop_refund_id).startsWith('conc-'),
    );
    expect(calls).toHaveLength(6);
  });

  it('refuses a refund of an unpaid invoice, a bad amount, and an unknown invoice', async () => {
    const { shopOrderId } = await paidInvoice({ payway: PAYMENT.card });
    const res = await refund(shopOrderId, { shopRefundId: 'unpaid-1', amount: '10.00' });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe(PROBLEM + 'invalid-state');
    expect(res.body.currentStatus).not.toBe('succeeded');
    expect(await stored('unpaid-1')).toBeUndefined();

    const paid = await paidInvoice();
    for (const amount of ['0', '0.00', '-1', '1e2', 12]) {
      const bad = await refund(paid.shopOrderId, { shopRefundId: 'bad-amount', amount });
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].field).toBe('amount');
    }
    const wrongCurrency = await refund(paid.shopOrderId, {
      shopRefundId: 'bad-cur',
      amount: '1.00',
      currency: 840,
    });
    expect(wrongCurrency.status).toBe(400);
    expect((await refund('no-such-order', { shopRefundId: 'x-1', amount: '1.00' })).status).toBe(
      404,
    );
    expect(await gatewayRequests('invoice/create-refund', 'bad-amount')).toHaveLength(0);
  });

  it('replays an identical request and refuses the same id with a different body', async () => {
    const { shopOrderId } = await paidInvoice();
    const first = await refund(shopOrderId, { shopRefundId: 'idem-1', amount: '30.00' });
    const again = await refund(shopOrderId, { shopRefundId: 'idem-1', amount: '30.00' });
    expect(again.status).toBe(first.status);
    expect(again.headers['idempotent-replayed']).toBe('true');
    // The refund as it is now (it may have been settled meanwhile), same id and amount.
    const { status: _s, updatedAt: _u, processedAt: _p, ...same } = first.body as Record<string, unknown>;
    expect(again.body).toMatchObject(same);
    expect(['WAITING', 'SUCCESS']).toContain(again.body.status);
    const different = await refund(shopOrderId, { shopRefundId: 'idem-1', amount: '31.00' });
    expect(different.status).toBe(409);
    expect(different.body.type).toBe(PROBLEM + 'idempotency-conflict');
    const concurrent = await Promise.all(
      Array.from({ length: 5 }, () =>
        refund(shopOrderId, { shopRefundId: 'idem-2', amount: '10.00' }),
      ),
    );
    expect(new Set(concurrent.map((r) => r.status))).toEqual(new Set([201]));
    expect(await gatewayRequests('invoice/create-refund', 'idem-1')).toHaveLength(1);
    expect(await gatewayRequests('invoice/create-refund', 'idem-2')).toHaveLength(1);
  });

  it('with the notification suppressed, reconciliation settles the WAITING refund', async () => {
    const { shopOrderId } = await paidInvoice();
    await control('POST', '/sandbox/settings', { suppressNotifications: true });
    const res = await refund(shopOrderId, { shopRefundId: 'recon-1', amount: '25.00' });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('WAITING');
    await sleep(300);
    expect((await stored('recon-1'))?.status).toBe('WAITING');
    await reconciler().runOnce();
    expect(await stored('recon-1')).toMatchObject({ status: 'SUCCESS', submit_state: 'accepted' });
    expect(await refundedAmount(shopOrderId)).toBe('25.00');
    const next = await db.query(
      `SELECT next_check_at, lease_until FROM refunds WHERE shop_refund_id = 'recon-1'`,
    );
    expect(next.rows[0]).toEqual({ next_check_at: null, lease_until: null });
    const events = await db.query(
      `SELECT cause FROM events WHERE entity_type = 'refund' AND entity_id = 'recon-1' AND to_status = 'SUCCESS'`,
    );
    expect(events.rows).toEqual([{ cause: 'reconciliation' }]);
  });

  it('a WAITING refund past its deadline stays flagged and checked, a recheck keeps it scheduled, and SUCCESS later settles it and clears the flag', async () => {
    const { shopOrderId } = await paidInvoice();
    // The gateway keeps it WAITING (its own step is far away) and sends no notification.
    await control('POST', '/sandbox/settings', { suppressNotifications: true, timeScale: 1000 });
    const res = await refund(shopOrderId, { shopRefundId: 'watch-1', amount: '20.00' });
    await control('POST', '/sandbox/settings', { timeScale: 0.001 });
    expect(res.body.status).toBe('WAITING');
    await db.query(
      `UPDATE refunds SET next_check_at = now(), check_deadline = now() - interval '1 second' WHERE shop_refund_id = 'watch-1'`,
    );
    await reconciler().runOnce();
    const row = async () =>
      (
        await db.query(
          `SELECT status, needs_attention, attention_reason, next_check_at FROM refunds WHERE shop_refund_id = 'watch-1'`,
        )
      ).rows[0] as {
        status: string;
        needs_attention: boolean;
        attention_reason: string | null;
        next_check_at: Date | null;
      };
    let r = await row();
    expect(r).toMatchObject({ status: 'WAITING', needs_attention: true });
    expect(r.attention_reason).toMatch(/^deadline:/);
    expect(r.next_check_at).not.toBeNull();

    const rechecked = await ctx.http
      .post('/api/v1/admin/refunds/watch-1/resolve')
      .set(admin())
      .send({ action: 'recheck' });
    expect(rechecked.status).toBe(200);
    expect(rechecked.body).toMatchObject({ status: 'WAITING', needsAttention: true });
    r = await row();
    expect(r.needs_attention).toBe(true);
    expect(r.next_check_at).not.toBeNull();
    const queue = await ctx.http.get('/api/v1/admin/attention').set(admin());
    expect((queue.body.items as Array<{ id: string }>).map((i) => i.id)).toContain('watch-1');

    // The gateway finishes it later; only the watch can learn it.
    const onGateway = ctx.sandbox.state.refunds.get('watch-1')!;
    onGateway.status = 'SUCCESS';
    onGateway.processedAt = new Date();
    await db.query(`UPDATE refunds SET next_check_at = now() WHERE shop_refund_id = 'watch-1'`);
    await reconciler().runOnce();
    r = await row();
    expect(r).toEqual({
      status: 'SUCCESS',
      needs_attention: false,
      attention_reason: null,
      next_check_at: null,
    });
    const events = await db.query(
      `SELECT type, cause FROM events WHERE entity_type = 'refund' AND entity_id = 'watch-1' AND type IS NOT NULL ORDER BY id`,
    );
    expect((events.rows as Array<{ type: string; cause: string }>).slice(-2)).toEqual([
      { type: 'refund.success', cause: 'reconciliation' },
      { type: 'refund.attention_resolved', cause: 'gateway' },
    ]);
  });

  it('a time-out on creation leaves WAITING/unknown, then reconciliation settles it with exactly one gateway refund', async () => {
    const { shopOrderId, invoiceId } = await paidInvoice();
    await control('POST', '/sandbox/settings', { suppressNotifications: true });
    await control('POST', '/sandbox/faults', {
      path: 'invoice/create-refund',
      fault: 'timeout_done',
      delayMs: 3000,
    });
    const res = await refund(shopOrderId, { shopRefundId: 'tmo-1', amount: '50.00' });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('WAITING');
    expect(await stored('tmo-1')).toMatchObject({ status: 'WAITING', submit_state: 'unknown' });
    // The unknown refund still counts: a refund of the rest of the paid amount only just fits.
    expect((await refund(shopOrderId, { shopRefundId: 'tmo-2', amount: '50.01' })).status).toBe(
      422,
    );
    await sleep(200);
    await reconciler().runOnce();
    expect(await stored('tmo-1')).toMatchObject({ status: 'SUCCESS', submit_state: 'accepted' });
    expect(await gatewayRequests('invoice/create-refund', 'tmo-1')).toHaveLength(1);
    const onGateway = (
      ctx.sandbox.state.refundsOf(Number(invoiceId)) as Array<{ shopRefundId: string }>
    ).filter((r) => r.shopRefundId === 'tmo-1');
    expect(onGateway).toHaveLength(1);
  });

  it('a refund the gateway refuses outright is FAILED/rejected, answered with the gateway error, and does not count', async () => {
    const { shopOrderId } = await paidInvoice();
    await control('POST', '/sandbox/faults', { path: 'invoice/create-refund', fault: 'fatal' });
    const res = await refund(shopOrderId, { shopRefundId: 'fatal-1', amount: '100.00' });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      type: PROBLEM + 'gateway-error',
      gatewayErrorCode: 10,
      fatal: true,
    });
    expect(await stored('fatal-1')).toMatchObject({ status: 'FAILED', submit_state: 'rejected' });
    const again = await refund(shopOrderId, { shopRefundId: 'fatal-1', amount: '100.00' });
    expect(again.status).toBe(422);
    expect(again.body.gatewayErrorCode).toBe(10);
    expect(await gatewayRequests('invoice/create-refund', 'fatal-1')).toHaveLength(1);
    expect((await refund(shopOrderId, { shopRefundId: 'fatal-2', amount: '100.00' })).status).toBe(
      201,
    );
  });

  it('one missing listing decides nothing (the refund keeps counting); absent over the window, it is FAILED', async () => {
    const { shopOrderId } = await paidInvoice();
    // A crash between the committed row and the gateway call leaves a pending row nobody sent.
    const inv = await db.query('SELECT id, invoice_id FROM invoices WHERE shop_order_id = $1', [
      shopOrderId,
    ]);
    const { id, invoice_id } = inv.rows[0] as { id: string; invoice_id: string };
    await db.query(
      `INSERT INTO refunds (shop_id, shop_refund_id, invoice_pk, shop_order_id, gateway_invoice_id, request_fingerprint, amount, currency, status, submit_state, next_check_at, check_deadline)
       VALUES (2001, 'lost-1', $1, $2, $3, repeat('0', 64), '10.00', 643, 'WAITING', 'pending', now(), now() + interval '1 hour')`,
      [id, shopOrderId, invoice_id],
    );
    await db.query(
      `UPDATE refunds SET created_at = now() - interval '1 second' WHERE shop_refund_id = 'lost-1'`,
    );
    await reconciler().runOnce();
    expect(await stored('lost-1')).toMatchObject({ status: 'WAITING' });
    // Still counted toward the paid amount: the shop cannot refund the same money again.
    const over = await refund(shopOrderId, { shopRefundId: 'lost-1-again', amount: '90.01' });
    expect(over.status).toBe(422);
    await sleep(600);
    await db.query(`UPDATE refunds SET next_check_at = now() WHERE shop_refund_id = 'lost-1'`);
    await reconciler().runOnce();
    expect(await stored('lost-1')).toMatchObject({ status: 'FAILED', submit_state: 'rejected' });
    expect(await gatewayRequests('invoice/create-refund', 'lost-1')).toHaveLength(0);
  });

  it('absences counted before a repeat sent the refund do not count against that send: one listing after its time-out decides nothing', async () => {
    const { shopOrderId } = await paidInvoice();
    await control('POST', '/sandbox/settings', { suppressNotifications: true });
    const inv = await db.query('SELECT id, invoice_id FROM invoices WHERE shop_order_id = $1', [
      shopOrderId,
    ]);
    const { id, invoice_id } = inv.rows[0] as { id: string; invoice_id: string };
    // A refund whose first create never reached the gateway (the shop got 503), found absent by
    // the reconciler well past the window: never sent, so never decided.
    const fingerprint = createHash('sha256')
      .update(
        JSON.stringify({ shopOrderId, shopRefundId: 'late-1', amount: '10.00', currency: null }),
      )
      .digest('hex');
    await db.query(
      `INSERT INTO refunds (shop_id, shop_refund_id, invoice_pk, shop_order_id, gateway_invoice_id, request_fingerprint, amount, currency, status, submit_state,
                            absent_count, first_absent_at, created_at, next_check_at, check_deadline)
       VALUES (2001, 'late-1', $1, $2, $3, $4, '10.00', 643, 'WAITING', 'pending',
               4, now() - interval '1 hour', now() - interval '1 hour', NULL, now() + interval '1 hour')`,
      [id, shopOrderId, invoice_id, fingerprint],
    );
    // The shop repeats: this request sends it, and the answer is lost (time-out).
    await control('POST', '/sandbox/faults', {
      path: 'invoice/create-refund',
      fault: 'timeout_not_done',
      delayMs: 3000,
    });
    const repeat = await refund(shopOrderId, { shopRefundId: 'late-1', amount: '10.00' });
    expect(repeat.status).toBe(201);
    expect(await stored('late-1')).toMatchObject({ status: 'WAITING', submit_state: 'unknown' });
    expect(await gatewayRequests('invoice/create-refund', 'late-1')).toHaveLength(1);
    // Listed nowhere yet: one look is one absence of this send, not the fifth of the refund.
    await ctx.http
      .get(`/api/v1/invoices/${shopOrderId}/refunds?refresh=true`)
      .set(auth())
      .expect(200);
    expect(await stored('late-1')).toMatchObject({ status: 'WAITING' });
    const counted = await db.query(
      `SELECT absent_count FROM refunds WHERE shop_refund_id = 'late-1'`,
    );
    expect((counted.rows[0] as { absent_count: number }).absent_count).toBe(1);
    // Still counted toward the paid amount.
    expect(
      (await refund(shopOrderId, { shopRefundId: 'late-1-more', amount: '90.01' })).status,
    ).toBe(422);
  });

  it('?refresh=true asks invoice/get-refunds; the admin list filters and pages', async () => {
    const { shopOrderId } = await paidInvoice();
    await control('POST', '/sandbox/settings', { suppressNotifications: true });
    expect((await refund(shopOrderId, { shopRefundId: 'list-1', amount: '10.00' })).status).toBe(
      201,
    );
    expect((await refund(shopOrderId, { shopRefundId: 'list-2', amount: '20.00' })).status).toBe(
      201,
    );
    await sleep(100);
    const refreshed = await ctx.http
      .get(`/api/v1/invoices/${shopOrderId}/refunds?refresh=true`)
      .set(auth());
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.items.map((r: { status: string }) => r.status)).toEqual([
      'SUCCESS',
      'SUCCESS',
    ]);
    expect(await refundedAmount(shopOrderId)).toBe('30.00');
    // processedAt is the gateway's processed_at (sent to the second), not the moment we asked.
    const gatewaySide = [...ctx.sandbox.state.refunds.values()].find(
      (r) => r.shopRefundId === 'list-1',
    );
    const ours = (
      refreshed.body.items as Array<{ shopRefundId: string; processedAt: string }>
    ).find((r) => r.shopRefundId === 'list-1');
    expect(ours?.processedAt).toBe(
      new Date(Math.floor((gatewaySide?.processedAt?.getTime() ?? 0) / 1000) * 1000).toISOString(),
    );

    const page1 = await ctx.http
      .get(`/api/v1/admin/refunds?shopOrderId=${shopOrderId}&status=SUCCESS&limit=1`)
      .set(admin());
    expect(page1.status).toBe(200);
    expect(page1.body.items).toHaveLength(1);
    expect(page1.body.items[0].shopRefundId).toBe('list-2');
    const page2 = await ctx.http
      .get(
        `/api/v1/admin/refunds?shopOrderId=${shopOrderId}&status=SUCCESS&limit=1&cursor=${page1.body.nextCursor}`,
      )
      .set(admin());
    expect(page2.body.items[0].shopRefundId).toBe('list-1');
    expect(page2.body.nextCursor).toBeNull();
    expect((await ctx.http.get('/api/v1/admin/refunds').set(auth())).status).toBe(403);
    expect((await ctx.http.get('/api/v1/admin/refunds?status=DONE').set(admin())).status).toBe(400);
  });

  it('refund sums say what they mean, agree with the refund cap, and each change is one invoice.refund_updated', async () => {
    const { shopOrderId, invoiceId } = await paidInvoice({ amount: '100.00' });
    const invoice = async () =>
      (await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth()).expect(200))
        .body as Record<string, unknown>;
    expect(sums(await invoice())).toEqual({
      refundedAmount: '0.00',
      refundPendingAmount: '0.00',
      refundableAmount: '100.00',
      refundStatus: 'none',
    });
    expect(await refundUpdates(shopOrderId)).toEqual([]);

    // Three refunds, their outcomes told by hand-signed notifications only.
    await control('POST', '/sandbox/settings', { suppressNotifications: true });
    for (const [id, amount] of [
      ['sums-30', '30.00'],
      ['sums-20', '20.00'],
      ['sums-10', '10.00'],
    ]) {
      const res = await refund(shopOrderId, { shopRefundId: id, amount });
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('WAITING');
    }
    expect(sums(await invoice())).toEqual({
      refundedAmount: '0.00',
      refundPendingAmount: '60.00',
      refundableAmount: '40.00',
      refundStatus: 'none',
    });
    expect((await refundNotice(shopOrderId, invoiceId, 'sums-30', '30.00', 'SUCCESS')).status).toBe(
      200,
    );
    expect((await refundNotice(shopOrderId, invoiceId, 'sums-10', '10.00', 'FAILED')).status).toBe(
      200,
    );
    // The gateway's books say the same (its own refund cap counts what is not FAILED).
    ctx.sandbox.state.refunds.get('sums-10')!.status = 'FAILED';
    expect(await stored('sums-30')).toMatchObject({ status: 'SUCCESS' });
    expect(await stored('sums-20')).toMatchObject({ status: 'WAITING' });
    expect(await stored('sums-10')).toMatchObject({ status: 'FAILED' });

    const figures = {
      refundedAmount: '30.00',
      refundPendingAmount: '20.00',
      refundableAmount: '50.00',
      refundStatus: 'partial',
    };
    expect(sums(await invoice())).toEqual(figures);
    const stored_ = await db.query(
      `SELECT refunded_amount::text AS refunded, refund_pending_amount::text AS pending FROM invoices WHERE shop_order_id = $1`,
      [shopOrderId],
    );
    expect(stored_.rows[0]).toEqual({ refunded: '30.00', pending: '20.00' });

    // Nothing changed, nothing told: the same notification again, and the same status re-stated.
    expect((await refundNotice(shopOrderId, invoiceId, 'sums-30', '30.00', 'SUCCESS')).status).toBe(
      200,
    );
    expect(
      (
        await refundNotice(
          shopOrderId,
          invoiceId,
          'sums-30',
          '30.00',
          'SUCCESS',
          '2026-01-01T10:06:00',
        )
      ).status,
    ).toBe(200);
    expect((await refundNotice(shopOrderId, invoiceId, 'sums-20', '20.00', 'WAITING')).status).toBe(
      200,
    );

    // One event per change: three creations, one SUCCESS, one FAILED; each carries the invoice
    // as its GET showed it at that moment.
    const events = await refundUpdates(shopOrderId);
    expect(events.map((e) => [e.cause, e.details.shopRefundId, e.details.refundTo])).toEqual([
      ['api', 'sums-30', 'WAITING'],
      ['api', 'sums-20', 'WAITING'],
      ['api', 'sums-10', 'WAITING'],
      ['notification', 'sums-30', 'SUCCESS'],
      ['notification', 'sums-10', 'FAILED'],
    ]);
    expect(events.map((e) => [e.data.refundedAmount, e.data.refundPendingAmount])).toEqual([
      ['0.00', '30.00'],
      ['0.00', '50.00'],
      ['0.00', '60.00'],
      ['30.00', '30.00'],
      ['30.00', '20.00'],
    ]);
    expect(sums(events[4].data)).toEqual(figures);
    expect(events[4].data).toMatchObject({ shopOrderId, status: 'succeeded' });
    const feed = await ctx.http
      .get('/api/v1/events?type=invoice.refund_updated&limit=500')
      .set(auth())
      .expect(200);
    const mine = (
      feed.body.items as Array<{
        objectId: string;
        sequence: number;
        data: Record<string, unknown>;
      }>
    ).filter((e) => e.objectId === shopOrderId);
    expect(mine.map((e) => sums(e.data))).toEqual(events.map((e) => sums(e.data)));

    // The cap agrees with refundableAmount: 50.01 is refused (no event), 50.00 fits.
    const over = await refund(shopOrderId, { shopRefundId: 'sums-over', amount: '50.01' });
    expect(over.status).toBe(422);
    expect(over.body.type).toBe(PROBLEM + 'refund-exceeds-paid-amount');
    expect(await refundUpdates(shopOrderId)).toHaveLength(5);
    expect((await refund(shopOrderId, { shopRefundId: 'sums-50', amount: '50.00' })).status).toBe(
      201,
    );
    expect(sums(await invoice())).toEqual({
      refundedAmount: '30.00',
      refundPendingAmount: '70.00',
      refundableAmount: '0.00',
      refundStatus: 'partial',
    });
    expect(await refundUpdates(shopOrderId)).toHaveLength(6);

    // An operator's correction of the FAILED refund to SUCCESS may count more than was paid
    // (40 refunded + 70 waiting on 100): it is recorded, which is why no database check ties
    // refunded + pending to the amount; refundable stays at zero, and the shop is told.
    await ctx.service.app.get(DataSource).transaction(async (m) => {
      const row = await db.query(`SELECT id FROM refunds WHERE shop_refund_id = 'sums-10'`);
      const r = await lockRefundById(m, (row.rows[0] as { id: string }).id);
      await acceptRefundStatus(m, r!, 'SUCCESS', { note: 'the bank statement shows it paid' });
    });
    expect(sums(await invoice())).toEqual({
      refundedAmount: '40.00',
      refundPendingAmount: '70.00',
      refundableAmount: '0.00',
      refundStatus: 'partial',
    });
    const last = (await refundUpdates(shopOrderId)).at(-1)!;
    expect(last.cause).toBe('admin');
    expect(last.details).toMatchObject({
      shopRefundId: 'sums-10',
      refundFrom: 'FAILED',
      refundTo: 'SUCCESS',
      refundedAmount: '40.00',
    });
    expect(await refundUpdates(shopOrderId)).toHaveLength(7);
  });

  it('an unpaid invoice has nothing refundable; a full refund is refundStatus full', async () => {
    const unpaid = await paidInvoice({ payway: PAYMENT.card });
    const u = await ctx.http.get(`/api/v1/invoices/${unpaid.shopOrderId}`).set(auth()).expect(200);
    expect(sums(u.body as Record<string, unknown>)).toEqual({
      refundedAmount: '0.00',
      refundPendingAmount: '0.00',
      refundableAmount: '0.00',
      refundStatus: 'none',
    });

    const { shopOrderId } = await paidInvoice({ amount: '100.50' });
    expect((await refund(shopOrderId, { shopRefundId: 'sums-full', amount: '100.5' })).status).toBe(
      201,
    );
    await eventually(async () => expect((await stored('sums-full'))?.status).toBe('SUCCESS'));
    const full = await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth()).expect(200);
    expect(sums(full.body as Record<string, unknown>)).toEqual({
      refundedAmount: '100.50',
      refundPendingAmount: '0.00',
      refundableAmount: '0.00',
      refundStatus: 'full',
    });
    const events = await refundUpdates(shopOrderId);
    expect(events.map((e) => sums(e.data))).toEqual([
      {
        refundedAmount: '0.00',
        refundPendingAmount: '100.50',
        refundableAmount: '0.00',
        refundStatus: 'none',
      },
      {
        refundedAmount: '100.50',
        refundPendingAmount: '0.00',
        refundableAmount: '0.00',
        refundStatus: 'full',
      },
    ]);
  });
});
