import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { Client } from 'pg';
import { ADMIN_KEY, admin, auth, startTestApp, TestContext } from '../support/app';
import { launchBrowser, LaunchedBrowser } from '../support/browser';
import { PAYMENT } from '../support/payways';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * An operator at the disputes desk, in headless Chromium: record a dispute from the invoice's
 * page (the same form sent twice is one dispute), see it on the desk ordered by its deadline,
 * and resolve it from the invoice's page; each result is seen through the API, and the page's
 * message comes from the server.
 */
describe('console disputes: record, desk and resolve, in a browser', () => {
  let ctx: TestContext;
  let db: Client;
  let browser: LaunchedBrowser;
  let page: Page;

  beforeAll(async () => {
    ctx = await startTestApp();
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.goto(`${ctx.url}/admin/login`);
    await page.fill('#key', ADMIN_KEY);
    await Promise.all([page.waitForURL(`${ctx.url}/admin`), page.click('button[type=submit]')]);
  });

  afterAll(async () => {
    await browser?.close();
    await db?.end();
    await ctx?.close();
  });

  async function submit(selector: string): Promise<void> {
    await Promise.all([
      page.waitForResponse((r) => r.request().isNavigationRequest()),
      page.click(selector),
    ]);
    await page.waitForLoadState('domcontentloaded');
  }

  async function paid(amount = '120.00'): Promise<string> {
    const shopOrderId = `bro-d-${randomUUID()}`;
    await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId, amount, currency: 643, payway: PAYMENT.cardSuccess })
      .expect(201);
    for (let i = 0; i < 200; i++) {
      const r = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      if (r.body.status === 'succeeded') return shopOrderId;
      await sleep(50);
    }
    throw new Error('invoice never succeeded');
  }

  const invoicePage = (id: string): string => `${ctx.url}/admin/ui/invoices/${encodeURIComponent(id)}`;

  it('records a dispute from the invoice page; the page shows it and the refundable figure; a resent form is one dispute', async () => {
    const shopOrderId = await paid();
    await page.goto(invoicePage(shopOrderId));
    await page.fill('#dispute-amount', '45.50');
    await page.fill('#dispute-reason', 'cardholder says not received');
    await page.fill('#dispute-respond-by', '2099-01-10T12:00:00Z');
    await page.fill('#dispute-note', 'manager e-mail of today');
    await submit('#dispute');
    expect(new URL(page.url()).pathname).toBe(`/admin/ui/invoices/${encodeURIComponent(shopOrderId)}`);
    expect(await page.textContent('.flash.ok')).toMatch(/^Dispute dp_\S+ of 45\.50 recorded: open until resolved\.$/);
    const api = await ctx.http.get(`/api/v1/admin/disputes?shopOrderId=${shopOrderId}`).set(admin()).expect(200);
    expect(api.body.items).toHaveLength(1);
    expect(api.body.items[0]).toMatchObject({ amount: '45.50', status: 'open', respondBy: '2099-01-10T12:00:00.000Z' });
    expect(await page.textContent('#disputes')).toContain('45.50');
    const glance = await page.textContent('#money');
    expect(glance).toMatch(/Disputed\s*45\.50/);
    expect(glance).toMatch(/Refundable\s*74\.50/);

    // The browser sends the same form again (back, resubmit): one dispute, replayed.
    await page.goBack();
    await page.waitForLoadState('domcontentloaded');
    await page.goto(invoicePage(shopOrderId));
    const key = await page.getAttribute('#dispute-form input[name=idempotencyKey]', 'value');
    const csrf = await page.getAttribute('#dispute-form input[name=_csrf]', 'value');
    const form = { _csrf: csrf!, idempotencyKey: key!, amount: '10.00', reason: 'r', reportedAt: new Date().toISOString(), note: 'n' };
    for (let i = 0; i < 2; i++) {
      const res = await page.request.post(`${ctx.url}/admin/ui/invoices/${encodeURIComponent(shopOrderId)}/disputes`, { form, maxRedirects: 0 });
      expect(res.status()).toBe(303);
    }
    const rows = await db.query(`SELECT count(*)::int AS n FROM disputes WHERE shop_order_id = $1`, [shopOrderId]);
    expect(rows.rows[0].n).toBe(2);
  });

  it('a refused form says why, naming the field, and records nothing', async () => {
    const shopOrderId = await paid('20.00');
    await page.goto(invoicePage(shopOrderId));
    await page.fill('#dispute-amount', '20.01');
    await page.fill('#dispute-reason', 'too much');
    await page.fill('#dispute-note', 'n');
    await submit('#dispute');
    expect(await page.textContent('main')).toContain('amount: must be at most 20.00');
    await page.goto(invoicePage(shopOrderId));
    await page.fill('#dispute-amount', '5.00');
    await page.fill('#dispute-reason', 'no offset');
    await page.fill('#dispute-reported', '2026-01-15T09:30:00');
    await page.fill('#dispute-note', 'n');
    await submit('#dispute');
    expect(await page.textContent('main')).toContain('reportedAt: must be');
    const rows = await db.query(`SELECT count(*)::int AS n FROM disputes WHERE shop_order_id = $1`, [shopOrderId]);
    expect(rows.rows[0].n).toBe(0);
  });

  it('the desk lists open disputes by respondBy; resolving from the invoice page posts the chargeback', async () => {
    const later = await paid();
    const sooner = await paid();
    const record = (id: string, respondBy: string) =>
      ctx.http
        .post(`/api/v1/admin/invoices/${id}/disputes`)
        .set(admin())
        .send({ amount: '30.00', reason: 'fraud', reportedAt: new Date().toISOString(), respondBy, note: 'n' })
        .expect(201);
    const l = await record(later, '2099-03-01T00:00:00Z');
    const s = await record(sooner, '2099-02-01T00:00:00Z');
    await page.goto(`${ctx.url}/admin/ui/disputes`);
    const ids = await page.$$eval('#disputes tbody tr', (trs) => trs.map((tr) => tr.id));
    const at = (id: string): number => ids.indexOf(`dispute-${id}`);
    expect(at(s.body.id)).toBeGreaterThanOrEqual(0);
    expect(at(s.body.id)).toBeLessThan(at(l.body.id));

    await page.goto(invoicePage(sooner));
    const row = `#disputes tr#dispute-${s.body.id}`;
    await page.selectOption(`${row} select[name=outcome]`, 'lost');
    await page.fill(`${row} input[name=note]`, 'issuer ruled for the cardholder');
    await submit(`${row} button[type=submit]`);
    expect(await page.textContent('.flash.ok')).toBe(`Dispute ${s.body.id} resolved: lost (a chargeback of 30.00).`);
    expect(await page.textContent(`${row} .dispute-status`)).toBe('lost');
    const entries = await ctx.http
      .get(`/api/v1/admin/ledger/entries?objectType=dispute&objectId=${s.body.id}`)
      .set(admin())
      .expect(200);
    expect(entries.body.items.map((e: { kind: string }) => e.kind)).toEqual(['dispute.lost']);
    expect(await page.textContent('section[aria-labelledby="ledger-h"]')).toContain('dispute.lost');
    // Gone from the open desk; listed as lost.
    await page.goto(`${ctx.url}/admin/ui/disputes`);
    expect(await page.locator(`#dispute-${s.body.id}`).count()).toBe(0);
    await page.goto(`${ctx.url}/admin/ui/disputes?status=lost`);
    expect(await page.locator(`#dispute-${s.body.id}`).count()).toBe(1);
    // Resolving it again from a stale page: refused, said, nothing posted.
    const csrf = await page.getAttribute('input[name=_csrf]', 'value');
    const again = await page.request.post(`${ctx.url}/admin/ui/disputes/${s.body.id}/resolve`, {
      form: { _csrf: csrf!, outcome: 'won', note: 'stale' },
      maxRedirects: 0,
    });
    expect(again.status()).toBe(409);
    expect(await again.text()).toContain('is lost: cannot resolve');
  });
});
