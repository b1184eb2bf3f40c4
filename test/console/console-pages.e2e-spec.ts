import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ADMIN_KEY, admin, auth, startTestApp, TestContext } from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';
import { INVOICE_STATUSES } from '../../src/invoices/invoice.state';
import { PAYOUT_STATUSES } from '../../src/payouts/payout.state';
import { REFUND_STATUSES } from '../../src/refunds/refund.state';
import { CookieJar, hidden, signIn } from './console-session';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Every console page over fixtures of every object type in every state, each flagged for
 * attention, a reconciliation with a variance among them, and webhook deliveries of every event
 * object type: the pages and every console address they link to answer without a 5xx.
 */
describe('console pages over every object type and state', () => {
  let ctx: TestContext;
  let db: Client;
  let jar: CookieJar;
  let reconciliationId: string;
  const ids: Record<'invoice' | 'refund' | 'payout', string[]> = {
    invoice: [],
    refund: [],
    payout: [],
  };

  const page = (path: string): Promise<{ status: number; text: string }> =>
    ctx.http
      .get(path)
      .set('Cookie', jar.header())
      .then((r) => ({ status: r.status, text: r.text }));

  async function invoice(payway: string, amount = '150000'): Promise<string> {
    const shopOrderId = `pages-${randomUUID()}`;
    await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId, amount, currency: 643, payway, description: `Order ${shopOrderId}` })
      .expect(201);
    return shopOrderId;
  }

  async function until(check: () => Promise<boolean>, what: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if (await check()) return;
      await sleep(50);
    }
    throw new Error(`never ${what}`);
  }

  beforeAll(async () => {
    ctx = await startTestApp({
      env: {
        // Deliveries that wait: no receiver listens there.
        SHOP_WEBHOOK_URL: 'http://127.0.0.1:9/hooks',
        SHOP_WEBHOOK_SECRET: `whsec_${Buffer.alloc(24, 3).toString('base64')}`,
        PAYOUT_APPROVAL_THRESHOLD: '643:5000.00',
      },
    });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();

    // Invoices: one per status, each flagged.
    for (const status of INVOICE_STATUSES) {
      const id = await invoice(PAYMENT.cardSuccess);
      ids.invoice.push(id);
      await db.query(
        `UPDATE invoices SET status = $2, needs_attention = true, attention_reason = 'fixture', attention_at = now()
          WHERE shop_order_id = $1`,
        [id, status],
      );
    }
    // Refunds of a paid invoice: one per status, flagged.
    const paid = await invoice(PAYMENT.cardSuccess, '1080.22');
    await until(async () => {
      const r = await ctx.http.get(`/api/v1/invoices/${paid}?refresh=true`).set(auth());
      return r.body.status === 'succeeded';
    }, 'paid');
    for (const status of REFUND_STATUSES) {
      const shopRefundId = `pages-r-${randomUUID()}`;
      await ctx.http
        .post(`/api/v1/invoices/${paid}/refunds`)
        .set(auth())
        .send({ shopRefundId, amount: '10' })
        .expect((r) => expect(r.status).toBeLessThan(300));
      ids.refund.push(shopRefundId);
      await db.query(
        `UPDATE refunds SET status = $2, needs_attention = true, attention_reason = 'fixture', attention_at = now()
          WHERE shop_refund_id = $1`,
        [shopRefundId, status],
      );
    }
    // Payouts: one per status, flagged.
    for (const status of PAYOUT_STATUSES) {
      const shopPaymentId = `pages-p-${randomUUID()}`;
      await ctx.http
        .post('/api/v1/payouts')
        .set(auth())
        .send({
          shopPaymentId,
          amount: '6000',
          amountType: 'ps_amount',
          shopCurrency: 643,
          payway: PAYOUT.card,
          account: '4111111111111111',
        })
        .expect((r) => expect(r.status).toBeLessThan(300));
      ids.payout.push(shopPaymentId);
      await db.query(
        `UPDATE payouts SET status = $2, needs_attention = true, attention_reason = 'fixture', attention_at = now()
          WHERE shop_payment_id = $1`,
        [shopPaymentId, status],
      );
    }
    // A reconciliation that finds a variance: the books and the gateway differ by 5.00.
    await ctx.http
      .post('/api/v1/admin/reconciliations')
      .set(admin())
      .send({ date: new Date().toISOString().slice(0, 10) })
      .expect(201);
    const drift = await fetch(`${ctx.sandbox.origin}/sandbox/balances/drift`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ currency: 643, amount: '5.00' }),
    });
    expect(drift.status).toBe(200);
    const rec = await ctx.http
      .post('/api/v1/admin/reconciliations')
      .set(admin())
      .send({ date: new Date().toISOString().slice(0, 10) })
      .expect(201);
    expect(rec.body.status).toBe('variances');
    reconciliationId = String(rec.body.id);
    jar = (await signIn(ctx, ADMIN_KEY)).jar;
  }, 120000);

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  it('the attention queue lists the reconciliation with only its own actions', async () => {
    const att = await page('/admin/ui/attention');
    expect(att.status).toBe(200);
    const row = new RegExp(`<tr id="attention-reconciliation-${reconciliationId}">([\\s\\S]*?)</tr>`).exec(
      att.text,
    );
    expect(row).not.toBeNull();
    const cells = row![1];
    expect(cells).toContain(`href="/admin/ui/reconciliations/${reconciliationId}"`);
    expect(cells).toContain('Open the run');
    expect(cells).toContain('Post an adjustment');
    // No Recheck or Accept: no such route exists for a reconciliation.
    expect(cells).not.toContain('/resolve');
    expect(cells).not.toContain('Recheck');
    expect(cells).not.toContain('Accept');
    // Every other flagged object is there with its own page's link.
    const missing = Object.entries(ids).flatMap(([type, list]) =>
      list.filter((id) => !att.text.includes(`action="/admin/ui/${type}s/${id}/resolve"`)).map((id) => `${type} ${id}`),
    );
    expect(missing).toEqual([]);
  });

  it('the overview has a books tile: the last reconciliation, its status and its differences', async () => {
    const home = await page('/admin');
    expect(home.status).toBe(200);
    const tile = /<section aria-labelledby="books-h" id="books">([\s\S]*?)<\/section>/.exec(home.text);
    expect(tile).not.toBeNull();
    expect(tile![1]).toContain(`/admin/ui/reconciliations/${reconciliationId}`);
    expect(tile![1]).toContain('<strong>variances</strong>');
    expect(tile![1]).toMatch(/RUB<\/th><td class="num"( colspan="2")?>5\.00 RUB/);
  });

  it('every page, and every console address a page links to, answers without a 5xx', async () => {
    const start = [
      '/admin',
      '/admin/ui/attention',
      '/admin/ui/approvals',
      '/admin/ui/invoices',
      '/admin/ui/refunds',
      '/admin/ui/payouts',
      '/admin/ui/batches',
      '/admin/ui/payment-tokens',
      '/admin/ui/notifications',
      '/admin/ui/deliveries',
      '/admin/ui/deliveries?state=pending',
      '/admin/ui/deliveries?state=failed',
      '/admin/ui/reports/daily',
      '/admin/ui/ledger',
      '/admin/ui/ledger?account=agent_available&currency=RUB&from=2026-01-01&to=2099-12-31',
      '/admin/ui/reconciliations',
      `/admin/ui/reconciliations/${reconciliationId}`,
      '/admin/ui/sessions',
      ...Object.entries(ids).flatMap(([type, list]) => list.map((id) => `/admin/ui/${type}s/${id}`)),
      ...Object.entries(ids).flatMap(([type]) =>
        [...(type === 'invoice' ? INVOICE_STATUSES : type === 'refund' ? REFUND_STATUSES : PAYOUT_STATUSES)].map(
          (s) => `/admin/ui/${type}s?status=${encodeURIComponent(s)}`,
        ),
      ),
    ];
    const seen = new Set<string>();
    const queue = [...start];
    const failures: string[] = [];
    while (queue.length > 0 && seen.size < 600) {
      const path = queue.shift()!;
      if (seen.has(path)) continue;
      seen.add(path);
      const got = await page(path);
      if (got.status >= 500) failures.push(`${path}: ${got.status} ${got.text.slice(0, 200)}`);
      // A download link leads to its file, never to a "not found" page.
      if (path.split('?')[0].endsWith('.csv') && got.status !== 200) failures.push(`${path}: ${got.status}`);
      if (!/^\/admin(\/|$|\?)/.test(path) || path.endsWith('.csv')) continue;
      for (const m of got.text.matchAll(/href="(\/admin[^"#]*)/g)) {
        const href = m[1].replace(/&amp;/g, '&');
        if (!seen.has(href) && !href.startsWith('/admin/logout')) queue.push(href);
      }
    }
    expect(failures).toEqual([]);
    // The crawl reached the CSV downloads of the reconciliation and the ledger.
    expect([...seen]).toEqual(
      expect.arrayContaining([
        `/admin/ui/reconciliations/${reconciliationId}/items.csv`,
        expect.stringMatching(/^\/admin\/ui\/ledger\/entries\.csv/),
      ]),
    );
  }, 120000);

  it("an invoice's page: its money at a glance, and the ledger entries of the invoice and its refunds", async () => {
    const shopOrderId = `glance-${randomUUID()}`;
    await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId, amount: '1080.22', currency: 643, payway: PAYMENT.cardSuccess })
      .expect(201);
    await until(async () => {
      const r = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      return r.body.status === 'succeeded';
    }, 'paid');
    const shopRefundId = `glance-r-${randomUUID()}`;
    await ctx.http
      .post(`/api/v1/invoices/${shopOrderId}/refunds`)
      .set(auth())
      .send({ shopRefundId, amount: '80.22' })
      .expect((r) => expect(r.status).toBeLessThan(300));
    await until(async () => {
      const r = await ctx.http.get(`/api/v1/invoices/${shopOrderId}/refunds?refresh=true`).set(auth());
      return r.body.items[0]?.status === 'SUCCESS';
    }, 'refunded');
    const got = await page(`/admin/ui/invoices/${shopOrderId}`);
    const glance = /<section aria-labelledby="glance-h" id="money">([\s\S]*?)<\/section>/.exec(got.text)![1];
    expect(glance).toContain('<dt>Paid</dt><dd class="num">1,080.22 RUB</dd>');
    expect(glance).toContain('<dt>Refunded</dt><dd class="num">80.22 RUB</dd>');
    expect(glance).toContain('<dt>Refundable</dt><dd class="num">1,000.00 RUB</dd>');
    const ledger = /<section aria-labelledby="ledger-h">([\s\S]*?)<\/section>/.exec(got.text)![1];
    expect(ledger).toContain('invoice.succeeded');
    expect(ledger).toContain(`refund ${shopRefundId}`);
    expect(ledger).toContain('-80.22 RUB');
    expect(ledger).not.toMatch(/RUB RUB/);
  });

  it('search takes an id prefix, a metadata value and words of the description; Save only with filters', async () => {
    const shopOrderId = `find-${randomUUID()}`;
    await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId,
        amount: '12.00',
        currency: 643,
        payway: PAYMENT.cardSuccess,
        description: 'Blue teapot, large',
        metadata: { ticket: 'T-4711' },
      })
      .expect(201);
    for (const q of [shopOrderId.slice(0, 14), 'T-4711', 'teapot', 'BLUE TEA']) {
      const found = await page(`/admin/ui/invoices?q=${encodeURIComponent(q)}`);
      expect([q, found.status, found.text.includes(`/admin/ui/invoices/${shopOrderId}"`)]).toEqual([q, 200, true]);
    }
    // LIKE's wildcards are taken literally.
    const none = await page(`/admin/ui/invoices?q=${encodeURIComponent('%')}`);
    expect(none.text).not.toContain(`/admin/ui/invoices/${shopOrderId}"`);
    const plain = await page('/admin/ui/attention');
    expect(plain.text).not.toContain('Save these filters');
    const filtered = await page('/admin/ui/invoices?status=succeeded');
    expect(filtered.text).toContain('Save these filters');
    expect((await page('/admin/ui/invoices')).text).not.toContain('Save these filters');
  });

  it('a delivery to an address no longer configured says so', async () => {
    const [ev] = (await db.query(`SELECT id, entity_type, entity_id, sequence FROM events WHERE type IS NOT NULL ORDER BY position LIMIT 1`)).rows;
    await db.query(
      `INSERT INTO webhook_deliveries (event_id, url, entity_type, entity_id, sequence) VALUES ($1, $2, $3, $4, $5)`,
      [ev.id, 'http://old-shop.example/hooks', ev.entity_type, ev.entity_id, ev.sequence],
    );
    const got = await page('/admin/ui/deliveries');
    expect(got.status).toBe(200);
    expect(got.text).toContain('id="unconfigured-deliveries"');
    expect(got.text).toContain('configured now: http://127.0.0.1:9/hooks');
    expect(got.text).toMatch(/http:\/\/old-shop\.example\/hooks <span class="badge">no longer configured<\/span>/);
    expect(got.text).not.toMatch(/127\.0\.0\.1:9\/hooks <span class="badge">no longer configured/);
  });

  it("an adjustment posted from the Ledger page explains the reconciliation's balance item", async () => {
    const form = await page(`/admin/ui/ledger?reconciliation=${reconciliationId}`);
    expect(form.text).toContain(`Explains reconciliation ${reconciliationId}`);
    const posted = await ctx.http
      .post('/admin/ui/ledger/adjustments')
      .set('Cookie', jar.header())
      .type('form')
      .send({
        _csrf: hidden(form.text, '_csrf'),
        account: 'agent_available',
        currency: 'RUB',
        amount: '5.00',
        note: `Explains reconciliation ${reconciliationId}`,
      })
      .expect(303);
    expect(posted.headers.location).toMatch(/^\/admin\/ui\/ledger/);
    const entries = await ctx.http
      .get('/api/v1/admin/ledger/entries?account=agent_available')
      .set(admin())
      .expect(200);
    expect(entries.body.items[0]).toMatchObject({
      kind: 'adjustment',
      note: `Explains reconciliation ${reconciliationId}`,
      postings: expect.arrayContaining([{ account: 'agent_available', currency: 643, amount: '5.00' }]),
    });
    const rec = await ctx.http
      .post('/api/v1/admin/reconciliations')
      .set(admin())
      .send({ date: new Date().toISOString().slice(0, 10) })
      .expect(201);
    expect(rec.body.items.filter((i: { kind: string }) => i.kind === 'balance')).toEqual([]);
  });
});
