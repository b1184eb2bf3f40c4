import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import { Client } from 'pg';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { admin, auth, PAYOUT_SHOP_ID, SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';

/**
 * The books follow the state on the operator's paths too: a correction between final statuses
 * (Recheck flags the gateway's contradiction, Accept records the gateway's word) posts its
 * reversal, sends the new status's event and gives back what the old status took; an Accept
 * without the gateway's word (unreachable, no record of an object it may have) changes nothing;
 * `GET /admin/ledger/check` is empty throughout and lists a hand-made mismatch.
 */
const CARD = '4111111111111111';
let ctx: TestContext;
let db: Client;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(check: () => Promise<T>, ms = 15000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > until) throw e;
      await sleep(100);
    }
  }
}

async function q<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.query(sql, params)).rows as T[];
}

/** An object's entries, summed per account (zero sums left out), as "account amount" lines. */
async function posted(objectId: string): Promise<string[]> {
  const rows = await q<{ account: string; amount: string }>(
    `SELECT p.account, sum(p.amount)::text AS amount
       FROM ledger_entries e JOIN ledger_postings p ON p.entry_id = e.id
      WHERE e.object_id = $1 GROUP BY p.account HAVING sum(p.amount) <> 0 ORDER BY p.account`,
    [objectId],
  );
  return rows.map((r) => `${r.account} ${new Decimal(r.amount).toFixed(2)}`);
}

async function kinds(objectId: string): Promise<string[]> {
  return (
    await q<{ kind: string }>(`SELECT kind FROM ledger_entries WHERE object_id = $1 ORDER BY id`, [
      objectId,
    ])
  ).map((r) => r.kind);
}

async function eventTypes(objectId: string): Promise<string[]> {
  return (
    await q<{ type: string }>(
      `SELECT type FROM events WHERE entity_id = $1 AND type IS NOT NULL ORDER BY id`,
      [objectId],
    )
  ).map((r) => r.type);
}

async function check(): Promise<{ objects: number; mismatches: Record<string, unknown>[] }> {
  const res = await ctx.http.get('/api/v1/admin/ledger/check').set(admin());
  expect(res.status).toBe(200);
  return res.body as { objects: number; mismatches: Record<string, unknown>[] };
}

function resolve(kind: string, objectId: string, body: Record<string, unknown>) {
  return ctx.http.post(`/api/v1/admin/${kind}/${objectId}/resolve`).set(admin()).send(body);
}

async function paidInvoice(amount: string): Promise<{ shopOrderId: string; invoiceId: number }> {
  const shopOrderId = `cor-${randomUUID()}`;
  const created = await ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({ shopOrderId, amount, currency: 643, payway: PAYMENT.cardSuccess });
  expect(created.status).toBe(201);
  await eventually(async () => {
    const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
    expect(got.body.status).toBe('succeeded');
  });
  return { shopOrderId, invoiceId: Number(created.body.invoiceId) };
}

function sandboxInvoice(shopOrderId: string): { status: number } {
  const inv = ctx.sandbox.state.findInvoiceByOrder(SHOP_ID, shopOrderId);
  if (inv === undefined) throw new Error(`no sandbox invoice ${shopOrderId}`);
  return inv;
}

function sandboxPayout(shopPaymentId: string): { status: number } {
  const p = [...ctx.sandbox.state.payouts.values()].find(
    (x) => x.shopId === PAYOUT_SHOP_ID && x.shopPaymentId === shopPaymentId,
  );
  if (p === undefined) throw new Error(`no sandbox payout ${shopPaymentId}`);
  return p;
}

beforeAll(async () => {
  ctx = await startTestApp({
    env: { PAYOUT_POLL_INTERVAL_S: '0.2', PAYOUT_POLL_MAX_S: '30', WATCH_INTERVAL_S: '1' },
  });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
}, 60000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

afterEach(() => {
  ctx.sandbox.state.faults.clear();
});

describe('a correction between final statuses books its reversal', () => {
  it('invoice succeeded, then the gateway says 6: Recheck flags it, Accept rejected reverses the sale and sends invoice.rejected', async () => {
    const { shopOrderId } = await paidInvoice('3210.00');
    expect(await posted(shopOrderId)).toEqual(['gateway_payment_shop 3210.00', 'sales -3210.00']);
    sandboxInvoice(shopOrderId).status = 6;
    const recheck = await resolve('invoices', shopOrderId, { action: 'recheck' });
    expect(recheck.status).toBe(200);
    expect(recheck.body).toMatchObject({ status: 'succeeded', needsAttention: true });
    const ok = await resolve('invoices', shopOrderId, {
      action: 'accept',
      status: 'rejected',
      note: 'the gateway reversed it',
    });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('rejected');
    expect(await posted(shopOrderId)).toEqual([]);
    expect(await kinds(shopOrderId)).toEqual(['invoice.succeeded', 'invoice.corrected']);
    expect(await eventTypes(shopOrderId)).toContain('invoice.rejected');
    expect((await check()).mismatches).toEqual([]);
  });

  it('refund SUCCESS 300.00, then the gateway says FAILED: Accept FAILED reverses it and gives its room back; the books agree', async () => {
    const { shopOrderId, invoiceId } = await paidInvoice('1000.00');
    const shopRefundId = `cor-r-${randomUUID()}`;
    const res = await ctx.http
      .post(`/api/v1/invoices/${shopOrderId}/refunds`)
      .set(auth())
      .send({ shopRefundId, amount: '300.00' });
    expect(res.status).toBe(201);
    await eventually(async () => {
      await ctx.http.get(`/api/v1/invoices/${shopOrderId}/refunds?refresh=true`).set(auth());
      const rows = await q<{ status: string }>(
        `SELECT status FROM refunds WHERE shop_refund_id = $1`,
        [shopRefundId],
      );
      expect(rows[0]?.status).toBe('SUCCESS');
    });
    expect(await posted(shopRefundId)).toEqual(['gateway_payment_shop -300.00', 'sales 300.00']);
    const theirs = [...ctx.sandbox.state.refunds.values()].find(
      (r) => r.shopRefundId === shopRefundId && r.invoiceId === invoiceId,
    );
    if (theirs === undefined) throw new Error('no sandbox refund');
    // Without the gateway's word (it cannot be asked) nothing changes.
    await db.query(
      `UPDATE refunds SET needs_attention = true, attention_reason = 'test', attention_at = now() WHERE shop_refund_id = $1`,
      [shopRefundId],
    );
    ctx.sandbox.state.faults.add({ path: 'invoice/get-refunds', fault: 'http500', remaining: 1 });
    const refused = await resolve('refunds', shopRefundId, {
      action: 'accept',
      status: 'FAILED',
      note: 'bank says it bounced',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.type).toMatch(/gateway-evidence-required$/);
    expect(await posted(shopRefundId)).toEqual(['gateway_payment_shop -300.00', 'sales 300.00']);
    // The gateway's word: FAILED.
    theirs.status = 'FAILED';
    const ok = await resolve('refunds', shopRefundId, {
      action: 'accept',
      status: 'FAILED',
      note: 'the gateway failed it',
    });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('FAILED');
    expect(await posted(shopRefundId)).toEqual([]);
    expect(await kinds(shopRefundId)).toEqual(['refund.succeeded', 'refund.corrected']);
    expect(await eventTypes(shopRefundId)).toContain('refund.failed');
    const inv = await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth());
    expect(inv.body.refundedAmount).toMatch(/^0(\.00)?$/);
    expect((await check()).mismatches).toEqual([]);
  });

  it('a held invoice the gateway charged is not accepted as unheld; accepted as succeeded it books the sale', async () => {
    const shopOrderId = `cor-h-${randomUUID()}`;
    const created = await ctx.http.post('/api/v1/invoices').set(auth()).send({
      shopOrderId,
      amount: '700.00',
      currency: 643,
      payway: PAYMENT.card,
      twoStep: true,
    });
    expect(created.status).toBe(201);
    const pay = await fetch(
      `${ctx.sandbox.origin}/sandbox/invoices/${String(created.body.invoiceId)}/pay`,
      { method: 'POST' },
    );
    expect(pay.status).toBe(200);
    await eventually(async () => {
      const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      expect(got.body.status).toBe('held');
    });
    // Charged at the gateway behind our back; its notification lost.
    ctx.sandbox.state.settings.suppressNotifications = true;
    sandboxInvoice(shopOrderId).status = 4;
    await db.query(
      `UPDATE invoices SET needs_attention = true, attention_reason = 'test', attention_at = now() WHERE shop_order_id = $1`,
      [shopOrderId],
    );
    const refused = await resolve('invoices', shopOrderId, {
      action: 'accept',
      status: 'unheld',
      note: 'released, I think',
    });
    ctx.sandbox.state.settings.suppressNotifications = false;
    expect(refused.status).toBe(409);
    expect(refused.body.type).toMatch(/gateway-evidence-required$/);
    expect(await posted(shopOrderId)).toEqual([]);
    const ok = await resolve('invoices', shopOrderId, {
      action: 'accept',
      status: 'succeeded',
      note: 'charged at the gateway',
    });
    expect(ok.status).toBe(200);
    expect(await posted(shopOrderId)).toEqual(['gateway_payment_shop 700.00', 'sales -700.00']);
    expect((await check()).mismatches).toEqual([]);
  });
});

describe('payouts: corrections need the gateway, and the write-off stays frozen without its word', () => {
  it('succeeded, flagged, Accept failed while the status calls fail is 409; with the gateway saying 6 it books the reversal once, and back to succeeded once more', async () => {
    const shopPaymentId = `cor-p-${randomUUID()}`;
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send({
      shopPaymentId,
      amount: '1000.00',
      amountType: 'shop_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account: CARD,
    });
    expect(res.status).toBe(202);
    const poller = ctx.service.app.get(PayoutPoller);
    await eventually(async () => {
      await poller.runOnce();
      const rows = await q<{ status: string }>(
        `SELECT status FROM payouts WHERE shop_payment_id = $1`,
        [shopPaymentId],
      );
      expect(rows[0].status).toBe('succeeded');
    }, 20000);
    const paid = await posted(shopPaymentId);
    expect(paid).toContain('agent_available -1000.00');
    expect(paid.some((l) => l.startsWith('agent_frozen'))).toBe(false);
    await db.query(
      `UPDATE payouts SET needs_attention = true, attention_reason = 'test', attention_at = now() WHERE shop_payment_id = $1`,
      [shopPaymentId],
    );
    for (const path of ['withdraw/status', 'withdraw/shop_payment_status'])
      ctx.sandbox.state.faults.add({ path, fault: 'http500', remaining: 5 });
    const refused = await resolve('payouts', shopPaymentId, {
      action: 'accept',
      status: 'failed',
      note: 'the bank returned it',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.type).toMatch(/gateway-evidence-required$/);
    expect(await posted(shopPaymentId)).toEqual(paid);
    expect(await eventTypes(shopPaymentId)).not.toContain('payout.failed');
    ctx.sandbox.state.faults.clear();

    sandboxPayout(shopPaymentId).status = 6;
    const ok = await resolve('payouts', shopPaymentId, {
      action: 'accept',
      status: 'rejected',
      note: 'the gateway rejected it after all',
    });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('rejected');
    expect(await posted(shopPaymentId)).toEqual([]);
    expect(await eventTypes(shopPaymentId)).toContain('payout.rejected');
    expect((await check()).mismatches).toEqual([]);

    // And back: the gateway says 5 again.
    sandboxPayout(shopPaymentId).status = 5;
    await db.query(
      `UPDATE payouts SET needs_attention = true, attention_reason = 'test', attention_at = now() WHERE shop_payment_id = $1`,
      [shopPaymentId],
    );
    const back = await resolve('payouts', shopPaymentId, {
      action: 'accept',
      status: 'succeeded',
      note: 'paid after all',
    });
    expect(back.status).toBe(200);
    expect(await posted(shopPaymentId)).toEqual(paid);
    expect((await kinds(shopPaymentId)).filter((k) => k === 'payout.corrected')).toHaveLength(2);
    expect((await check()).mismatches).toEqual([]);
  });

  it('a lost create answer with failing status calls: Accept failed is refused, the write-off stays frozen; the gateway paid it, and the poller books the payment', async () => {
    const shopPaymentId = `cor-lost-${randomUUID()}`;
    ctx.sandbox.state.faults.add({ path: 'withdraw/create', fault: 'reset_done', remaining: 1 });
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send({
      shopPaymentId,
      amount: '2222.00',
      amountType: 'shop_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account: CARD,
    });
    expect(res.status).toBe(202);
    const row = await q<{ status: string; withdraw_id: string | null }>(
      `SELECT status, withdraw_id FROM payouts WHERE shop_payment_id = $1`,
      [shopPaymentId],
    );
    expect(row[0]).toMatchObject({ status: 'unknown', withdraw_id: null });
    // Frozen while its outcome is unknown.
    expect(await posted(shopPaymentId)).toEqual([
      'agent_available -2222.00',
      'agent_frozen 2222.00',
    ]);
    await db.query(
      `UPDATE payouts SET needs_attention = true, attention_reason = 'test', attention_at = now(), call_lease_until = NULL WHERE shop_payment_id = $1`,
      [shopPaymentId],
    );
    for (const path of ['withdraw/status', 'withdraw/shop_payment_status'])
      ctx.sandbox.state.faults.add({ path, fault: 'http500', remaining: 3 });
    const refused = await resolve('payouts', shopPaymentId, {
      action: 'accept',
      status: 'failed',
      note: 'no withdraw id; gateway down',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.type).toMatch(/gateway-evidence-required$/);
    expect(await eventTypes(shopPaymentId)).not.toContain('payout.failed');
    expect(
      (
        await q<{ status: string }>(`SELECT status FROM payouts WHERE shop_payment_id = $1`, [
          shopPaymentId,
        ])
      )[0].status,
    ).toBe('unknown');
    ctx.sandbox.state.faults.clear();
    // The gateway had it: the watch finds it and books it paid.
    const poller = ctx.service.app.get(PayoutPoller);
    await eventually(async () => {
      await poller.runOnce();
      const rows = await q<{ status: string }>(
        `SELECT status FROM payouts WHERE shop_payment_id = $1`,
        [shopPaymentId],
      );
      expect(rows[0].status).toBe('succeeded');
    }, 30000);
    const paid = await posted(shopPaymentId);
    expect(paid).toContain('agent_available -2222.00');
    expect(paid.some((l) => l.startsWith('agent_frozen'))).toBe(false);
    expect(await eventTypes(shopPaymentId)).not.toContain('payout.failed');
    expect((await check()).mismatches).toEqual([]);
  });
});

describe('a write-off the gateway restates', () => {
  it('moves the frozen amount while sent, and the paid amount once final, by its difference: nothing stays in agent_frozen', async () => {
    const shopPaymentId = `cor-w-${randomUUID()}`;
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send({
      shopPaymentId,
      amount: '500.00',
      amountType: 'shop_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account: CARD,
    });
    expect(res.status).toBe(202);
    // The watch asks nothing meanwhile (its status calls fail), so only these writes move it.
    for (const path of ['withdraw/status', 'withdraw/shop_payment_status'])
      ctx.sandbox.state.faults.add({ path, fault: 'http500', remaining: 1000 });
    // The gateway's record restates the write-off while the payout is on its way, then again
    // in its final record (as the record rule writes it onto the row).
    await db.query(
      `UPDATE payouts SET status = 'processing', shop_write_off = '510.00' WHERE shop_payment_id = $1`,
      [shopPaymentId],
    );
    expect(await posted(shopPaymentId)).toEqual(['agent_available -510.00', 'agent_frozen 510.00']);
    await db.query(
      `UPDATE payouts SET status = 'succeeded', shop_write_off = '512.00', payee_receive = '500.00', ps_currency = 643
        WHERE shop_payment_id = $1`,
      [shopPaymentId],
    );
    expect(await posted(shopPaymentId)).toEqual([
      'agent_available -512.00',
      'payout_fees 12.00',
      'payouts_paid 500.00',
    ]);
    expect(await kinds(shopPaymentId)).toEqual([
      'payout.sent',
      'payout.corrected',
      'payout.succeeded',
    ]);
    expect((await check()).mismatches).toEqual([]);
  });
});

describe('a create repeated posts nothing more', () => {
  it('a payout create repeated (the same body, another amount, at once) freezes its write-off once; no entry for a row never written', async () => {
    const shopPaymentId = `cor-rep-${randomUUID()}`;
    const body = {
      shopPaymentId,
      amount: '345.00',
      amountType: 'shop_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account: CARD,
    };
    const answers = await Promise.all([
      ctx.http.post('/api/v1/payouts').set(auth()).send(body),
      ctx.http.post('/api/v1/payouts').set(auth()).send(body),
      ctx.http.post('/api/v1/payouts').set(auth()).send(body),
    ]);
    expect(answers.every((a) => [202, 200, 409].includes(a.status))).toBe(true);
    const other = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({ ...body, amount: '346.00' });
    expect(other.status).toBe(409);
    const rows = await q<{ id: string }>(`SELECT id FROM payouts WHERE shop_payment_id = $1`, [
      shopPaymentId,
    ]);
    expect(rows).toHaveLength(1);
    // Every entry of this id belongs to the one row.
    expect(
      await q(`SELECT DISTINCT object_pk::text AS pk FROM ledger_entries WHERE object_id = $1`, [
        shopPaymentId,
      ]),
    ).toEqual([{ pk: rows[0].id }]);
    expect((await kinds(shopPaymentId)).filter((k) => k === 'payout.sent')).toHaveLength(1);
    expect((await check()).mismatches).toEqual([]);
  });
});

describe('GET /admin/ledger/check', () => {
  it('is admin only, counts the objects, and lists an object whose entries do not equal its position', async () => {
    expect((await ctx.http.get('/api/v1/admin/ledger/check').set(auth())).status).toBe(403);
    const before = await check();
    expect(before.mismatches).toEqual([]);
    expect(before.objects).toBeGreaterThan(3);
    const { shopOrderId } = await paidInvoice('55.00');
    // A hand-made mismatch: the row moved behind the books' back (its triggers off).
    const c = new Client({ connectionString: ctx.databaseUrl });
    await c.connect();
    try {
      await c.query(`SET session_replication_role = replica`);
      await c.query(`UPDATE invoices SET status = 'rejected' WHERE shop_order_id = $1`, [
        shopOrderId,
      ]);
    } finally {
      await c.end();
    }
    const after = await check();
    expect(after.mismatches).toEqual([
      {
        objectType: 'invoice',
        objectId: shopOrderId,
        status: 'rejected',
        posted: [
          { account: 'gateway_payment_shop', currency: 643, amount: '55.00' },
          { account: 'sales', currency: 643, amount: '-55.00' },
        ],
        position: [],
      },
    ]);
    const metrics = await ctx.http.get('/metrics');
    expect(metrics.text).toMatch(/^ledger_position_mismatches 1$/m);
  });
});

describe('the position rule in SQL and the state machines in TypeScript agree', () => {
  it('the final statuses the position functions read are the state machines’ (and an invoice’s lapsed hold)', async () => {
    const { POSITION_FINALS } =
      await import('../../src/database/migrations/1796500000010-LedgerPositions');
    const { FINAL_INVOICE_STATUSES } = await import('../../src/invoices/invoice.state');
    const { FINAL_REFUND_STATUSES } = await import('../../src/refunds/refund.state');
    const { PAYOUT_FINAL_STATUSES } = await import('../../src/payouts/payout.state');
    const { FINAL_DISPUTE_STATUSES, CHARGEBACK_STATUSES } = await import('../../src/disputes/dispute.state');
    const sorted = (xs: readonly string[]): string[] => [...xs].sort();
    expect(sorted(POSITION_FINALS.invoice)).toEqual(
      sorted([...new Set([...FINAL_INVOICE_STATUSES, 'expired'])]),
    );
    expect(sorted(POSITION_FINALS.refund)).toEqual(sorted(FINAL_REFUND_STATUSES));
    expect(sorted(POSITION_FINALS.payout)).toEqual(sorted(PAYOUT_FINAL_STATUSES));
    expect(sorted(POSITION_FINALS.dispute)).toEqual(sorted(FINAL_DISPUTE_STATUSES));
    // And the database holds those lists: a correction away from each final status is one.
    const fn = await q<{ src: string }>(
      `SELECT string_agg(prosrc, ' ') AS src FROM pg_proc WHERE proname IN ('ledger_follow_invoice', 'ledger_follow_refund', 'ledger_follow_payout', 'ledger_follow_dispute')`,
    );
    for (const s of [
      ...POSITION_FINALS.invoice,
      ...POSITION_FINALS.refund,
      ...POSITION_FINALS.payout,
      ...POSITION_FINALS.dispute,
    ])
      expect(fn[0].src).toContain(`'${s}'`);
    // A dispute's position is a chargeback exactly for the chargeback statuses of dispute.state.ts.
    const positions = await q<{ status: string; legs: number }>(
      `SELECT s AS status, cardinality(ledger_position_dispute(ROW(NULL, NULL, NULL, NULL, NULL, 10, 643, NULL, s,
                NULL, NULL, NULL, '[]', NULL, NULL, NULL, NULL, NULL, '{}')::disputes)) AS legs
         FROM unnest($1::varchar[]) s ORDER BY s`,
      [['open', 'won', 'lost', 'accepted']],
    );
    expect(positions.filter((p) => p.legs > 0).map((p) => p.status)).toEqual(sorted(CHARGEBACK_STATUSES));
  });
});
