import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ReconciliationJob } from '../../src/reconciliation/reconciliation-job';
import { Decimal as SandboxDecimal } from '../../src/sandbox/decimal';
import { admin, ADMIN_KEY, auth, SHOP_ID, startTestApp, TestContext } from '../support/app';
import { signIn } from '../console/console-session';
import { booksAgainstChart } from '../support/ledger-chart';
import { PAYMENT, PAYOUT } from '../support/payways';
import { eventually } from '../support/webhook-receiver';

/**
 * The books from the outside, beyond ledger.e2e-spec.ts: each object's console page shows its
 * entries; the database's postings are the chart of docs/api.md for every object; reconciliation
 * compares invoices' amounts (not only their status), gives the same result twice, stores nothing
 * and answers 502/503 when the gateway cannot answer (the daily job then tries again at its next
 * tick, once across instances); and in a single-shop setup the sales in the gateway's available
 * balance are the books' `gateway_payment_shop`.
 */
const ENV = { PAYOUT_POLL_INTERVAL_S: '0.2', PAYOUT_POLL_MAX_S: '30' };



interface World {
  ctx: TestContext;
  db: Client;
}

async function open(shops: 'two' | 'single'): Promise<World> {
  const ctx = await startTestApp({ env: ENV, shops });
  const db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  return { ctx, db };
}

async function close(w: World | undefined): Promise<void> {
  await w?.db.end();
  await w?.ctx.close();
}

const rows = async <T>(w: World, sql: string, params: unknown[] = []): Promise<T[]> =>
  (await w.db.query(sql, params)).rows as T[];

async function paidInvoice(w: World, amount: string): Promise<string> {
  const shopOrderId = `lb-${randomUUID()}`;
  await w.ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({ shopOrderId, amount, currency: 643, payway: PAYMENT.cardSuccess })
    .expect(201);
  await eventually(async () => {
    const got = await w.ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
    expect(got.body.status).toBe('succeeded');
  });
  return shopOrderId;
}

async function refunded(w: World, shopOrderId: string, amount: string): Promise<string> {
  const shopRefundId = `lbr-${randomUUID()}`;
  await w.ctx.http
    .post(`/api/v1/invoices/${shopOrderId}/refunds`)
    .set(auth())
    .send({ shopRefundId, amount })
    .expect(201);
  await eventually(async () => {
    const r = await rows<{ status: string }>(
      w,
      `SELECT status FROM refunds WHERE shop_refund_id = $1`,
      [shopRefundId],
    );
    if (r[0]?.status !== 'SUCCESS') {
      await w.ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      throw new Error(`refund ${shopRefundId} is ${r[0]?.status}`);
    }
  });
  return shopRefundId;
}

/** A two-step invoice the payer has paid: its funds held at the gateway. */
async function heldInvoice(w: World, amount: string): Promise<string> {
  const shopOrderId = `lbh-${randomUUID()}`;
  const res = await w.ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({ shopOrderId, amount, currency: 643, payway: PAYMENT.card, twoStep: true })
    .expect(201);
  const paid = await fetch(
    `${w.ctx.sandbox.origin}/sandbox/invoices/${String(res.body.invoiceId)}/pay`,
    { method: 'POST' },
  );
  expect(paid.status).toBe(200);
  await eventually(async () => {
    const got = await w.ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth());
    expect(got.body.status).toBe('held');
  });
  return shopOrderId;
}

/** An adjustment of agent_available in RUB, explained. */
async function adjustBy(w: World, amount: string): Promise<void> {
  await w.ctx.http
    .post('/api/v1/admin/ledger/adjustments')
    .set(admin())
    .send({ account: 'agent_available', currency: 643, amount, note: 'the test drift, explained' })
    .expect(201);
}

interface Rec {
  id: string;
  status: string;
  items: Record<string, unknown>[];
  balances: Record<string, unknown>[];
}

/** Today's objects (the default day is yesterday's). */
const today = (): { date: string } => ({ date: new Date().toISOString().slice(0, 10) });

async function reconcile(w: World): Promise<Rec> {
  const res = await w.ctx.http.post('/api/v1/admin/reconciliations').set(admin()).send(today());
  expect(res.status).toBe(201);
  return res.body as Rec;
}

const runs = async (w: World): Promise<number> =>
  (await rows<{ n: number }>(w, `SELECT count(*)::int AS n FROM reconciliations`))[0].n;

describe('two shops', () => {
  let w: World;
  beforeAll(async () => {
    w = await open('two');
  }, 60000);
  afterAll(() => close(w));

  it("shows each object's ledger entries on its console page, linking to the ledger", async () => {
    const order = await paidInvoice(w, '77.70');
    const refund = await refunded(w, order, '7.07');
    const shopPaymentId = `lbp-${randomUUID()}`;
    await w.ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({
        shopPaymentId,
        amount: '100.00',
        amountType: 'ps_amount',
        shopCurrency: 643,
        payway: PAYOUT.sandboxCard('never_final'),
        account: '4111111111111111',
      })
      .expect(202);
    await eventually(async () => {
      const r = await rows(w, `SELECT 1 FROM ledger_entries WHERE object_id = $1`, [shopPaymentId]);
      expect(r).toHaveLength(1);
    });
    const { jar } = await signIn(w.ctx, ADMIN_KEY);
    const page = async (path: string): Promise<string> =>
      (await w.ctx.http.get(path).set('Cookie', jar.header()).expect(200)).text;
    const section = (html: string): string => {
      const from = html.indexOf('id="ledger-h"');
      expect(from).toBeGreaterThan(0);
      return html.slice(from, html.indexOf('</section>', from));
    };

    const inv = section(await page(`/admin/ui/invoices/${order}`));
    expect(inv).toContain('invoice.succeeded');
    // The amount with its currency once ("77.70 RUB").
    expect(inv).toMatch(/<td>gateway_payment_shop<\/td>\s*<td class="num">77\.70 RUB<\/td>/);
    expect(inv).toMatch(/<td>sales<\/td>\s*<td class="num">-77\.70 RUB<\/td>/);
    expect(inv).toContain(`href="/admin/ui/ledger?objectType=invoice&amp;objectId=${order}"`);
    const ref = section(await page(`/admin/ui/refunds/${refund}`));
    expect(ref).toContain('refund.succeeded');
    expect(ref).toMatch(/<td>gateway_payment_shop<\/td>\s*<td class="num">-7\.07 RUB<\/td>/);
    const pay = section(await page(`/admin/ui/payouts/${shopPaymentId}`));
    expect(pay).toContain('payout.sent');
    expect(pay).toContain('<td>agent_frozen</td>');
    // Another object's page shows only its own entries.
    const other = await paidInvoice(w, '10.00');
    expect(section(await page(`/admin/ui/invoices/${other}`))).not.toContain('77.70');
    // An object that moved no money says so.
    const unpaid = `lb-${randomUUID()}`;
    await w.ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId: unpaid, amount: '50.00', currency: 643, payway: PAYMENT.card })
      .expect(201);
    expect(section(await page(`/admin/ui/invoices/${unpaid}`))).toContain('No entries');
    // The linked ledger page lists exactly the object's entry.
    const ledger = await page(`/admin/ui/ledger?objectType=invoice&objectId=${order}`);
    expect(ledger).toContain('invoice.succeeded');
    expect(ledger).not.toContain('refund.succeeded');
  }, 60000);

  it('the database posts exactly the chart of docs/api.md for every object', async () => {
    expect(await booksAgainstChart((sql, p) => rows(w, sql, p))).toEqual([]);
    // The rule has one place (the triggers): no runtime file carries a copy of the chart.
    let copies = '';
    try {
      copies = execFileSync('grep', ['-rlE', 'objectPostings|ledger-chart', 'src'], {
        encoding: 'utf8',
      });
    } catch (e) {
      // grep's 1: nothing found.
      if ((e as { status?: number }).status !== 1) throw e;
    }
    expect(copies).toBe('');
  });

  it("names an invoice whose amount the gateway's record contradicts, the same on a second run", async () => {
    // The first run opens the books after a payout was already sent (and posted): the opening
    // is the gateway's balance less what the books hold, so it balances at once.
    const opening = await reconcile(w);
    expect(opening.items).toEqual([]);
    expect(await rows(w, `SELECT 1 FROM ledger_entries WHERE kind = 'opening'`)).not.toHaveLength(
      0,
    );
    const order = await paidInvoice(w, '12.00');
    const atGateway = w.ctx.sandbox.state.findInvoiceByOrder(SHOP_ID, order)!;
    atGateway.amount = SandboxDecimal.parse('12.01');
    try {
      const rec = await reconcile(w);
      expect(rec.status).toBe('variances');
      // Both sides call it succeeded: only the amount differs (gateway − ours).
      expect(rec.items).toEqual([
        {
          kind: 'amount',
          objectType: 'invoice',
          objectId: order,
          currency: 643,
          ours: '12.00',
          gateway: '12.01',
          amount: '0.01',
        },
      ]);
      const flagged = await rows<{ attention_reason: string }>(
        w,
        `SELECT attention_reason FROM invoices WHERE shop_order_id = $1 AND needs_attention`,
        [order],
      );
      expect(flagged[0].attention_reason).toMatch(/^reconciliation: amount of invoice/);
      // The same amount written another way is no variance; a run repeated gives the same result.
      const again = await reconcile(w);
      expect(again.items).toEqual(rec.items);
      expect(again.balances).toEqual(rec.balances);
      atGateway.amount = SandboxDecimal.parse('12.000');
      expect((await reconcile(w)).items).toEqual([]);
    } finally {
      atGateway.amount = SandboxDecimal.parse('12.00');
    }
  }, 60000);

  it('stores nothing and answers a problem when the gateway cannot answer; the daily job retries next tick, once', async () => {
    const before = await runs(w);
    const faults = w.ctx.sandbox.state.faults;
    faults.add({ path: 'shop_balance', fault: 'http500', remaining: 50 });
    const down = await w.ctx.http.post('/api/v1/admin/reconciliations').set(admin()).send({});
    expect([502, 503]).toContain(down.status);
    expect(down.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(down.body.detail).toMatch(/nothing was stored/);
    faults.clear();
    // A refusal in the middle (an object's status call) is no partial result either.
    await paidInvoice(w, '30.00');
    faults.add({ path: 'invoice/check', fault: 'fatal', remaining: 50 });
    const refused = await w.ctx.http
      .post('/api/v1/admin/reconciliations')
      .set(admin())
      .send(today());
    expect(refused.status).toBe(502);
    expect(refused.body.type).toMatch(/gateway-error$/);
    expect(await runs(w)).toBe(before);

    // The daily job: the failed run lets its claim go, so the next tick takes the day again. (Its
    // day is yesterday's, whose objects may need no status call: the balance read fails it.)
    faults.add({ path: 'shop_balance', fault: 'fatal', remaining: 50 });
    const job = w.ctx.service.app.get(ReconciliationJob);
    const day = job.dueDay();
    await expect(job.runOnce()).rejects.toThrow();
    expect(
      await rows(w, `SELECT 1 FROM reconciliation_days WHERE date = $1 AND lease_until > now()`, [
        day,
      ]),
    ).toEqual([]);
    expect(await runs(w)).toBe(before);
    faults.clear();
    const ids = await Promise.all([job.runOnce(), job.runOnce(), job.runOnce()]);
    expect(ids.filter((x) => x !== null)).toHaveLength(1);
    expect(await job.runOnce()).toBeNull();
    expect(await runs(w)).toBe(before + 1);
  }, 60000);
});

describe('one shop takes the payments and pays out', () => {
  let w: World;
  beforeAll(async () => {
    w = await open('single');
  }, 60000);
  afterAll(() => close(w));

  it('compares agent_available + gateway_payment_shop with available: sales before and after the opening balance', async () => {
    // Sold before the books opened: part of the gateway's available, not opened twice.
    await paidInvoice(w, '500.00');
    const first = await reconcile(w);
    expect(first.items).toEqual([]);
    expect(first.status).toBe('balanced');
    // Sold and refunded after: the gateway's available moves, and so do the books.
    const order = await paidInvoice(w, '250.50');
    await refunded(w, order, '0.50');
    const second = await reconcile(w);
    expect(second.items).toEqual([]);
    expect(second.status).toBe('balanced');
    // A drift is still caught.
    const drift = await fetch(`${w.ctx.sandbox.origin}/sandbox/balances/drift`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ currency: 643, amount: '1.00' }),
    });
    expect(drift.status).toBe(200);
    const third = await reconcile(w);
    expect(third.items).toEqual([
      expect.objectContaining({ kind: 'balance', account: 'agent_available', amount: '1.00' }),
    ]);
    // Explained by an adjustment: balanced again.
    await adjustBy(w, '1.00');
    expect((await reconcile(w)).items).toEqual([]);
  }, 60000);

  it('a payer’s held funds are in the one shop’s hold: balanced while held, charged or released', async () => {
    expect((await reconcile(w)).items).toEqual([]);
    const held = await heldInvoice(w, '70.00');
    const released = await heldInvoice(w, '30.10');
    const whileHeld = await reconcile(w);
    expect(whileHeld.items).toEqual([]);
    const rub = (r: Rec): unknown => r.balances.find((b) => b.currency === 643);
    expect(rub(whileHeld)).toEqual(
      expect.objectContaining({
        gateway: expect.objectContaining({ hold: '100.10' }),
        differences: { available: '0.00', frozen: '0.00' },
      }),
    );
    await w.ctx.http.post(`/api/v1/invoices/${held}/charge`).set(auth()).expect(200);
    await w.ctx.http.post(`/api/v1/invoices/${released}/unhold`).set(auth()).expect(200);
    await eventually(async () => {
      const r = await rows<{ status: string }>(
        w,
        `SELECT status FROM invoices WHERE shop_order_id IN ($1, $2) ORDER BY amount DESC`,
        [held, released],
      );
      expect(r.map((x) => x.status)).toEqual(['succeeded', 'unheld']);
    });
    const after = await reconcile(w);
    expect(after.items).toEqual([]);
    expect(rub(after)).toEqual(
      expect.objectContaining({
        gateway: expect.objectContaining({ hold: '0.00' }),
        differences: { available: '0.00', frozen: '0.00' },
      }),
    );
  }, 60000);
});
