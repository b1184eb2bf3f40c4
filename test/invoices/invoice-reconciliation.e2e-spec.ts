import { randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { GatewayService } from '../../src/gateway';
import { InvoiceReconciler } from '../../src/invoices/invoice-reconciler';
import { admin, SHOP_ID, startTestApp, TestContext, tokenOf } from '../support/app';
import { PAYMENT } from '../support/payways';

/**
 * Invoice reconciliation over the sandbox: notifications suppressed, so only invoice/check can
 * settle the invoices. Grace 0.1 s so that `runOnce()` finds them due almost at once.
 */

const env = {
  INVOICE_RECONCILE_GRACE_S: '0.1',
  INVOICE_RECONCILE_MAX_S: '3600',
  ABSENT_CHECKS: '2',
  ABSENT_WINDOW_S: '0.5',
};
let ctx: TestContext;
let db: Pool;

beforeAll(async () => {
  ctx = await startTestApp({ env });
  db = new Pool({ connectionString: ctx.databaseUrl });
  await control('POST', '/sandbox/settings', { suppressNotifications: true });
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${ctx.sandbox.origin}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: unknown }).data;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An invoice row as the invoices module writes it, created on the sandbox unless `onGateway: false`. */
async function invoice(
  opts: { status?: string; onGateway?: boolean; token?: boolean } = {},
): Promise<{ shopOrderId: string; gatewayId: number | null }> {
  const shopOrderId = `rec-${randomUUID()}`;
  await db.query(
    `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token, save_payment_token)
     VALUES ($1, $2, $3, $4, '250.50', 643, $7, $5, $6)`,
    [
      SHOP_ID,
      shopOrderId,
      'f'.repeat(64),
      opts.status ?? 'awaiting_payer',
      randomBytes(16).toString('hex'),
      opts.token ?? false,
      PAYMENT.card,
    ],
  );
  if (opts.onGateway === false) return { shopOrderId, gatewayId: null };
  const created = await ctx.service.app.get(GatewayService).createInvoice({
    shop_order_id: shopOrderId,
    amount: '250.50',
    currency: 643,
    payway: PAYMENT.card,
    callback_url: `${ctx.url}/webhooks/gateway`,
    ...(opts.token ? { issue_payment_token: true } : {}),
  });
  await db.query(`UPDATE invoices SET invoice_id = $2 WHERE shop_order_id = $1`, [
    shopOrderId,
    created.id,
  ]);
  return { shopOrderId, gatewayId: created.id };
}

async function row(shopOrderId: string): Promise<Record<string, unknown>> {
  return (await db.query(`SELECT * FROM invoices WHERE shop_order_id = $1`, [shopOrderId]))
    .rows[0] as Record<string, unknown>;
}

/**
 * Takes every other invoice out of the way so each test sees only its own (a flag no longer
 * does: flagged invoices stay watched, so they are moved far into the future instead).
 */
async function parkOthers(): Promise<void> {
  await db.query(
    `UPDATE invoices SET next_check_at = now() + interval '10 years' WHERE status NOT IN ('succeeded','rejected','unheld')`,
  );
}

describe('invoice reconciliation', () => {
  it('two instances on one database check each due invoice once per cycle', async () => {
    const ctxB = await startTestApp({ databaseUrl: ctx.databaseUrl, sandbox: ctx.sandbox, env });
    try {
      await parkOthers();
      const invoices = await Promise.all(Array.from({ length: 50 }, () => invoice()));
      await sleep(150);
      await control('DELETE', '/sandbox/requests');
      const cycleStart = new Date();
      const [a, b] = await Promise.all([
        ctx.service.app.get(InvoiceReconciler).runOnce(),
        ctxB.service.app.get(InvoiceReconciler).runOnce(),
      ]);
      expect(a + b).toBe(50);
      const requests = (await control('GET', '/sandbox/requests')) as Array<{
        path: string;
        body: { shop_order_id?: string };
      }>;
      const checks = requests.filter((r) => r.path === 'invoice/check');
      expect(checks).toHaveLength(50);
      expect(new Set(checks.map((r) => r.body.shop_order_id))).toEqual(
        new Set(invoices.map((i) => i.shopOrderId)),
      );
      // Still awaiting the payer: backed off from the check (not from the claim), lease cleared.
      const rows = await db.query(
        `SELECT check_attempts, lease_until, next_check_at > $2 AS later FROM invoices WHERE shop_order_id = ANY($1)`,
        [invoices.map((i) => i.shopOrderId), cycleStart],
      );
      expect(rows.rows).toHaveLength(50);
      expect(
        rows.rows.every(
          (r: { check_attempts: number; lease_until: Date | null; later: boolean }) =>
            r.check_attempts === 1 && r.lease_until === null && r.later,
        ),
      ).toBe(true);
    } finally {
      await ctxB.close();
    }
  });

  it('a payment whose notification never arrives is settled through invoice/check, token included', async () => {
    await parkOthers();
    const inv = await invoice({ token: true });
    await control('POST', `/sandbox/invoices/${inv.gatewayId}/pay`);
    await sleep(150);
    expect(await ctx.service.app.get(InvoiceReconciler).runOnce()).toBe(1);
    const r = await row(inv.shopOrderId);
    expect(r).toMatchObject({
      status: 'succeeded',
      gateway_status: 4,
      next_check_at: null,
      lease_until: null,
    });
    expect(String(r.payment_id)).toBe(String(inv.gatewayId));
    expect(r.payment_token).toMatch(/^k1\.test1\./);
    expect(tokenOf(ctx, r)).toMatch(/^tok_/);
    expect(r.payment_token_info).toMatchObject({ status: 'SUCCESS' });
    const events = await db.query(
      `SELECT from_status, to_status, cause FROM events WHERE entity_id = $1`,
      [inv.shopOrderId],
    );
    expect(events.rows).toEqual([
      { from_status: 'awaiting_payer', to_status: 'succeeded', cause: 'reconciliation' },
    ]);
    // Settled: nothing left to check.
    expect(await ctx.service.app.get(InvoiceReconciler).runOnce()).toBe(0);
  });

  it('a declined payment without notification ends rejected', async () => {
    await parkOthers();
    const inv = await invoice();
    await control('POST', `/sandbox/invoices/${inv.gatewayId}/decline`);
    await sleep(150);
    await ctx.service.app.get(InvoiceReconciler).runOnce();
    expect((await row(inv.shopOrderId)).status).toBe('rejected');
  });

  it('one "absent" answer decides nothing; absent on every check over the window, it is rejected as never created', async () => {
    await parkOthers();
    const inv = await invoice({ status: 'pending', onGateway: false });
    await sleep(150);
    await ctx.service.app.get(InvoiceReconciler).runOnce();
    let r = await row(inv.shopOrderId);
    expect(r).toMatchObject({ status: 'pending', absent_count: 1, needs_attention: false });
    // Asked again before the window is over: still absent, still not final.
    await db.query(`UPDATE invoices SET next_check_at = now() WHERE shop_order_id = $1`, [
      inv.shopOrderId,
    ]);
    await ctx.service.app.get(InvoiceReconciler).runOnce();
    expect((await row(inv.shopOrderId)).status).toBe('pending');
    await sleep(600);
    await db.query(`UPDATE invoices SET next_check_at = now() WHERE shop_order_id = $1`, [
      inv.shopOrderId,
    ]);
    await ctx.service.app.get(InvoiceReconciler).runOnce();
    r = await row(inv.shopOrderId);
    expect(r.status).toBe('rejected');
    expect(r.gateway_message).toMatch(/never created/);
  });

  it('a transport error keeps the invoice and backs off', async () => {
    await parkOthers();
    const inv = await invoice();
    await control('POST', `/sandbox/invoices/${inv.gatewayId}/pay`);
    await control('POST', '/sandbox/faults', { path: 'invoice/check', fault: 'http500' });
    await sleep(150);
    await ctx.service.app.get(InvoiceReconciler).runOnce();
    let r = await row(inv.shopOrderId);
    expect(r).toMatchObject({
      status: 'awaiting_payer',
      check_attempts: 1,
      lease_until: null,
      needs_attention: false,
    });
    expect(r.next_check_at).not.toBeNull();
    await sleep(300);
    await ctx.service.app.get(InvoiceReconciler).runOnce();
    r = await row(inv.shopOrderId);
    expect(r.status).toBe('succeeded');
  });

  it('an invoice still open at its deadline is flagged and still checked every WATCH_INTERVAL_S', async () => {
    await parkOthers();
    const inv = await invoice();
    await db.query(
      `UPDATE invoices SET next_check_at = now(), check_deadline = now() - interval '1 second' WHERE shop_order_id = $1`,
      [inv.shopOrderId],
    );
    const before = Date.now();
    await ctx.service.app.get(InvoiceReconciler).runOnce();
    const r = await row(inv.shopOrderId);
    expect(r).toMatchObject({
      status: 'awaiting_payer',
      needs_attention: true,
      lease_until: null,
    });
    expect(String(r.attention_reason)).toMatch(/^deadline:/);
    // WATCH_INTERVAL_S (600 by default) later, not dropped from the queue.
    const nextMs = (r.next_check_at as Date).getTime() - before;
    expect(nextMs).toBeGreaterThan(590_000);
    expect(nextMs).toBeLessThan(610_000);
    // The flag is a shop event, written with it; a second run does not raise it again.
    await ctx.service.app.get(InvoiceReconciler).runOnce();
    const events = await db.query(
      `SELECT type, data->>'status' AS status FROM events WHERE entity_id = $1 AND type LIKE '%attention%'`,
      [inv.shopOrderId],
    );
    expect(events.rows).toEqual([{ type: 'invoice.attention_raised', status: 'awaiting_payer' }]);
  });

  it('a flagged invoice past its deadline settles when the gateway finishes: the flag clears itself (cause gateway)', async () => {
    await parkOthers();
    const inv = await invoice();
    await db.query(
      `UPDATE invoices SET next_check_at = now(), check_deadline = now() - interval '1 second' WHERE shop_order_id = $1`,
      [inv.shopOrderId],
    );
    const reconciler = ctx.service.app.get(InvoiceReconciler);
    await reconciler.runOnce();
    expect(await row(inv.shopOrderId)).toMatchObject({ needs_attention: true });
    // The operator rechecks while the payer has not paid: still flagged and still scheduled.
    const rechecked = await ctx.http
      .post(`/api/v1/admin/invoices/${inv.shopOrderId}/resolve`)
      .set(admin())
      .send({ action: 'recheck' });
    expect(rechecked.status).toBe(200);
    let r = await row(inv.shopOrderId);
    expect(r).toMatchObject({ status: 'awaiting_payer', needs_attention: true });
    expect(r.next_check_at).not.toBeNull();
    // The payer pays later; no notification arrives (suppressed), the watch finds it.
    await control('POST', `/sandbox/invoices/${inv.gatewayId}/pay`);
    await db.query(`UPDATE invoices SET next_check_at = now() WHERE shop_order_id = $1`, [
      inv.shopOrderId,
    ]);
    await reconciler.runOnce();
    r = await row(inv.shopOrderId);
    expect(r).toMatchObject({
      status: 'succeeded',
      needs_attention: false,
      attention_reason: null,
      next_check_at: null,
    });
    const events = await db.query(
      `SELECT type, cause FROM events WHERE entity_id = $1 AND type IS NOT NULL ORDER BY id`,
      [inv.shopOrderId],
    );
    expect(events.rows).toEqual(
      expect.arrayContaining([
        { type: 'invoice.succeeded', cause: 'reconciliation' },
        { type: 'invoice.attention_resolved', cause: 'gateway' },
      ]),
    );
  });

  it('past WATCH_MAX_S after creation an open invoice is no longer checked: watch_ended, an operator decides', async () => {
    await parkOthers();
    const inv = await invoice();
    await db.query(
      `UPDATE invoices SET next_check_at = now(), check_deadline = now() - interval '8 days',
              created_at = now() - interval '8 days' WHERE shop_order_id = $1`,
      [inv.shopOrderId],
    );
    await ctx.service.app.get(InvoiceReconciler).runOnce();
    const r = await row(inv.shopOrderId);
    expect(r).toMatchObject({
      status: 'awaiting_payer',
      needs_attention: true,
      next_check_at: null,
    });
    expect(String(r.attention_reason)).toMatch(/^watch_ended:/);
    // Not scheduled again by the next cycles either.
    await ctx.service.app.get(InvoiceReconciler).runOnce();
    expect((await row(inv.shopOrderId)).next_check_at).toBeNull();
    const listed = await ctx.http.get('/api/v1/admin/attention').set(admin());
    expect((listed.body.items as Array<{ id: string }>).map((i) => i.id)).toContain(
      inv.shopOrderId,
    );
  });
});
