import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { ADMIN_KEY, admin, auth, startTestApp, TestContext } from '../support/app';
import { csvMoneyProblems } from '../support/answers';
import { launchBrowser, LaunchedBrowser } from '../support/browser';
import { PAYMENT } from '../support/payways';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Finance in the console, in headless Chromium: the books differ from the gateway by 5.00; the
 * attention queue shows the reconciliation with its own actions, the overview's books tile says
 * so, and the reconciliation's items and the ledger's entries download as CSV in the console's
 * own session (no API key), the ledger filtered by account, currency and days.
 */
describe('books in the console, in a browser', () => {
  let ctx: TestContext;
  let browser: LaunchedBrowser;
  let page: Page;
  let recId: string;
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    ctx = await startTestApp();
    const shopOrderId = `books-${randomUUID()}`;
    await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId, amount: '150000', currency: 643, payway: PAYMENT.cardSuccess })
      .expect(201);
    for (let i = 0; i < 200; i++) {
      const r = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      if (r.body.status === 'succeeded') break;
      await sleep(50);
    }
    await ctx.http.post('/api/v1/admin/reconciliations').set(admin()).send({ date: today }).expect(201);
    const drift = await fetch(`${ctx.sandbox.origin}/sandbox/balances/drift`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ currency: 643, amount: '5.00' }),
    });
    expect(drift.status).toBe(200);
    const rec = await ctx.http.post('/api/v1/admin/reconciliations').set(admin()).send({ date: today }).expect(201);
    recId = String(rec.body.id);
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.goto(`${ctx.url}/admin/login`);
    await page.fill('#key', ADMIN_KEY);
    await Promise.all([page.waitForURL(`${ctx.url}/admin`), page.click('button[type=submit]')]);
  }, 90000);

  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
  });

  async function download(selector: string): Promise<{ name: string; text: string }> {
    const [file] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
    return { name: file.suggestedFilename(), text: readFileSync(await file.path(), 'utf8') };
  }

  it('the attention queue opens with the reconciliation and only its actions; the overview has the books tile', async () => {
    const res = await page.goto(`${ctx.url}/admin/ui/attention`);
    expect(res?.status()).toBe(200);
    const row = page.locator(`#attention-reconciliation-${recId}`);
    expect(await row.locator('text=Open the run').count()).toBe(1);
    expect(await row.locator('text=Post an adjustment').count()).toBe(1);
    expect(await row.locator('button').count()).toBe(0);
    const home = await page.goto(`${ctx.url}/admin`);
    expect(home?.status()).toBe(200);
    const books = await page.textContent('#books');
    expect(books).toContain('variances');
    expect(books).toContain('5.00 RUB');
  });

  it("downloads the reconciliation's items as CSV in the console session", async () => {
    await page.goto(`${ctx.url}/admin/ui/attention`);
    await Promise.all([page.waitForURL(`**/admin/ui/reconciliations/${recId}`), page.click(`#attention-reconciliation-${recId} >> text=Open the run`)]);
    const csv = await download('#items-csv');
    expect(csv.name).toMatch(/^reconciliation-.*\.csv$/);
    expect(csv.text.split('\r\n')[0]).toBe('kind,object_type,object_id,account,currency,ours,gateway,amount');
    expect(csv.text).toMatch(/balance,,,agent_available,643,[0-9.]+,[0-9.]+,5\.00/);
    expect(csvMoneyProblems(csv.text)).toEqual([]);
  });

  it('filters the ledger by account, currency and days, and downloads what it shows', async () => {
    await page.goto(`${ctx.url}/admin/ui/ledger`);
    await page.selectOption('#account', 'gateway_payment_shop');
    await page.fill('#currency', 'RUB');
    await page.fill('#from', today);
    await page.fill('#to', today);
    await Promise.all([page.waitForURL('**/admin/ui/ledger?**'), page.click('#ledger-filter button[type=submit]')]);
    const shown = await page.textContent('main');
    expect(shown).toContain('gateway_payment_shop 150,000.00 RUB');
    // Entries without a gateway_payment_shop posting (the opening balances) are not shown.
    expect(shown).not.toContain('opening');
    const csv = await download('#ledger-csv');
    const rows = csv.text.trim().split('\r\n');
    expect(rows[0]).toBe('id,created_at,kind,object_type,object_id,event_id,key_id,note,account,currency,amount');
    expect(rows.slice(1).every((r) => r.includes('invoice.succeeded'))).toBe(true);
    expect(rows.slice(1).map((r) => r.split(',').slice(-3).join(','))).toEqual(
      expect.arrayContaining(['gateway_payment_shop,643,150000.00', 'sales,643,-150000.00']),
    );
    expect(csvMoneyProblems(csv.text)).toEqual([]);
    // A day before any entry: none.
    await page.goto(`${ctx.url}/admin/ui/ledger?from=2020-01-01&to=2020-01-02`);
    expect(await page.locator('main table').nth(1).locator('tbody tr').count()).toBe(0);
  });
});
