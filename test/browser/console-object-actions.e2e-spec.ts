import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { Client } from 'pg';
import { ADMIN_KEY, auth, startTestApp, TestContext } from '../support/app';
import { launchBrowser, LaunchedBrowser } from '../support/browser';
import { PAYMENT, PAYOUT } from '../support/payways';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * An operator acting where they look, in headless Chromium: refund an invoice from its page,
 * charge a held invoice from its page, approve a payout from its page; each result is seen
 * through the API, and the page's message comes from the server.
 */
describe('console actions on object pages, in a browser', () => {
  let ctx: TestContext;
  let db: Client;
  let browser: LaunchedBrowser;
  let page: Page;

  beforeAll(async () => {
    ctx = await startTestApp({
      env: {
        PAYOUT_POLL_INTERVAL_S: '0.2',
        PAYOUT_APPROVAL_THRESHOLD: '643:5000.00',
        PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:20000',
      },
    });
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

  /** Clicks a form's submit button and waits for the page the POST leads to. */
  async function submit(selector: string): Promise<void> {
    await Promise.all([
      page.waitForResponse(
        (r) => r.request().isNavigationRequest() && r.request().method() === 'GET',
      ),
      page.click(selector),
    ]);
    await page.waitForLoadState('domcontentloaded');
  }

  async function invoice(twoStep: boolean): Promise<string> {
    const shopOrderId = `bro-${randomUUID()}`;
    const created = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId,
        amount: '120.00',
        currency: 643,
        payway: twoStep ? PAYMENT.card : PAYMENT.cardSuccess,
        ...(twoStep ? { twoStep: true } : {}),
      })
      .expect(201);
    if (twoStep)
      await fetch(`${ctx.sandbox.origin}/sandbox/invoices/${String(created.body.invoiceId)}/pay`, {
        method: 'POST',
      });
    const want = twoStep ? 'held' : 'succeeded';
    for (let i = 0; i < 200; i++) {
      const r = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      if (r.body.status === want) return shopOrderId;
      await sleep(50);
    }
    throw new Error(`invoice never ${want}`);
  }

  it('refunds an invoice from its page; the refund is seen through the API', async () => {
    const shopOrderId = await invoice(false);
    await page.goto(`${ctx.url}/admin/ui/invoices/${encodeURIComponent(shopOrderId)}`);
    await page.fill('#refund-amount', '20.25');
    await page.fill('#refund-reason', 'customer returned one item');
    await submit('#refund');
    expect(new URL(page.url()).pathname).toBe(`/admin/ui/invoices/${encodeURIComponent(shopOrderId)}`);
    expect(await page.textContent('.flash.ok')).toMatch(/^Refund console-\S+ of 20\.25 made: now /);
    const api = await ctx.http.get(`/api/v1/invoices/${shopOrderId}/refunds`).set(auth()).expect(200);
    expect(api.body.items).toHaveLength(1);
    expect(api.body.items[0]).toMatchObject({
      amount: '20.25',
      metadata: { reason: 'customer returned one item' },
    });
    // The page lists it, and the message was shown once.
    await page.reload();
    expect(await page.locator('.flash').count()).toBe(0);
    expect(await page.textContent('section[aria-labelledby="refunds-h"]')).toContain('20.25');
  });

  it('charges a held invoice from its page; the API says succeeded', async () => {
    const shopOrderId = await invoice(true);
    await page.goto(`${ctx.url}/admin/ui/invoices/${encodeURIComponent(shopOrderId)}`);
    expect(await page.locator('#unhold').count()).toBe(1);
    await submit('#charge');
    expect(await page.textContent('.flash.ok')).toBe(`Invoice ${shopOrderId} charged: now succeeded.`);
    const api = await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth()).expect(200);
    expect(api.body.status).toBe('succeeded');
    expect(await page.locator('#charge').count()).toBe(0);
  });

  it('approves a payout from its page; Reject asks for a reason and a confirmation first', async () => {
    const id = `bro-p-${randomUUID()}`;
    const created = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({
        shopPaymentId: id,
        amount: '6000',
        amountType: 'ps_amount',
        shopCurrency: 643,
        payway: PAYOUT.card,
        account: '4111111111111111',
      });
    expect(created.body.status).toBe('awaiting_approval');
    await page.goto(`${ctx.url}/admin`);
    expect(Number(await page.textContent('#awaiting-approval .num'))).toBeGreaterThanOrEqual(1);
    await page.goto(`${ctx.url}/admin/ui/payouts/${encodeURIComponent(id)}`);
    // Reject is folded away and its form cannot be sent without a reason and the ticked box.
    expect(await page.isVisible('#reject')).toBe(false);
    await page.click('summary:text("Reject…")');
    await page.click('#reject');
    expect(new URL(page.url()).pathname).toBe(`/admin/ui/payouts/${encodeURIComponent(id)}`);
    expect(await page.evaluate(`document.querySelector('#reject-reason').validity.valueMissing`)).toBe(true);
    const colours = (await page.evaluate(
      `[getComputedStyle(document.querySelector('#approve')).backgroundColor, getComputedStyle(document.querySelector('#reject')).backgroundColor]`,
    )) as [string, string];
    expect(colours[0]).not.toBe(colours[1]);
    const rows = await db.query(`SELECT status FROM payouts WHERE shop_payment_id = $1`, [id]);
    expect(rows.rows[0].status).toBe('awaiting_approval');

    await page.fill('#approve-note', 'verified with the merchant');
    await submit('#approve');
    expect(await page.textContent('.flash.ok')).toMatch(new RegExp(`^Payout ${id} approved: now `));
    const api = await ctx.http.get(`/api/v1/payouts/${id}`).set(auth()).expect(200);
    expect(api.body.status).not.toBe('awaiting_approval');
  });
});
