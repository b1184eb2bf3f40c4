import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { ADMIN_KEY, auth, startTestApp, TestContext } from '../support/app';
import { launchBrowser, LaunchedBrowser } from '../support/browser';
import { PAYOUT } from '../support/payways';

/**
 * The payout page's approval form, in headless Chromium: it shows the gateway's payee check,
 * the quoted fee and when each was asked; when the check refused the account, the form cannot
 * be sent without a note (the browser's own check, and the server's when that is bypassed).
 */
describe('the console approval form shows the payee check and the fee, in a browser', () => {
  let ctx: TestContext;
  let browser: LaunchedBrowser;
  let page: Page;

  beforeAll(async () => {
    ctx = await startTestApp({
      env: { PAYOUT_POLL_INTERVAL_S: '0.2', PAYOUT_APPROVAL_THRESHOLD: '643:5000.00' },
    });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.goto(`${ctx.url}/admin/login`);
    await page.fill('#key', ADMIN_KEY);
    await Promise.all([page.waitForURL(`${ctx.url}/admin`), page.click('button[type=submit]')]);
  });

  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
  });

  const withdrawCreates = (id: string): number =>
    ctx.sandbox.state.requests.filter(
      (r) => r.path === 'withdraw/create' && (r.body as Record<string, unknown>).shop_payment_id === id,
    ).length;

  async function payout(account: string): Promise<string> {
    const id = `bro-pc-${randomUUID()}`;
    const created = await ctx.http.post('/api/v1/payouts').set(auth()).send({
      shopPaymentId: id,
      amount: '6000.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account,
    });
    expect(created.body.status).toBe('awaiting_approval');
    return id;
  }

  async function submit(selector: string): Promise<void> {
    await Promise.all([
      page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'GET'),
      page.click(selector),
    ]);
    await page.waitForLoadState('domcontentloaded');
  }

  it('an account that can be credited: the check, the fee and their times are shown, the note is optional', async () => {
    const id = await payout('4111111111111111');
    await page.goto(`${ctx.url}/admin/ui/payouts/${encodeURIComponent(id)}`);
    const form = page.locator('#approve-form');
    expect(await form.locator('.check-ok').textContent()).toContain('can be credited');
    expect(await form.locator('.check-ok').textContent()).toContain('SANDBOX PAYEE');
    const fee = (await form.locator('.quote-ok').textContent()) ?? '';
    expect(fee).toMatch(/\d+\.\d{2} RUB: write-off [\d,]+\.\d{2} RUB, payee receives 6,000\.00 RUB/);
    expect(await form.locator('time').count()).toBe(2);
    for (const t of await form.locator('time').all()) {
      const at = Date.parse((await t.getAttribute('datetime')) ?? '');
      expect(Math.abs(Date.now() - at)).toBeLessThan(60_000);
    }
    expect(await page.evaluate(`document.querySelector('#approve-note').required`)).toBe(false);
    await submit('#approve');
    expect(await page.textContent('body')).toContain(`Payout ${id} approved`);
    expect(withdrawCreates(id)).toBe(1);
    // The page now lists the decision with what its approver was shown.
    expect(await page.locator('#decisions .check-ok').count()).toBe(1);
  });

  it('an account the gateway refuses: the form says so and cannot be sent without a note; with one it is approved', async () => {
    const id = await payout('4276380012340000');
    await page.goto(`${ctx.url}/admin/ui/payouts/${encodeURIComponent(id)}`);
    const form = page.locator('#approve-form');
    expect(await form.locator('.check-refused').textContent()).toContain('cannot be credited');
    expect(await form.locator('label[for=approve-note]').textContent()).toContain('required');
    // The browser will not send it without a note.
    await page.click('#approve');
    expect(new URL(page.url()).pathname).toBe(`/admin/ui/payouts/${encodeURIComponent(id)}`);
    expect(await page.evaluate(`document.querySelector('#approve-note').validity.valueMissing`)).toBe(true);
    // Bypassing the browser's check: the server refuses it, nothing is sent.
    await page.evaluate(`document.querySelector('#approve-note').removeAttribute('required')`);
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'POST'),
      page.click('#approve'),
    ]);
    await page.waitForLoadState('domcontentloaded');
    expect(refused.status()).toBe(422);
    expect(await page.textContent('body')).toContain('cannot be credited');
    expect(withdrawCreates(id)).toBe(0);
    expect((await ctx.http.get(`/api/v1/payouts/${id}`).set(auth())).body.status).toBe('awaiting_approval');
    // With a note it is approved and sent.
    await page.goto(`${ctx.url}/admin/ui/payouts/${encodeURIComponent(id)}`);
    await page.fill('#approve-note', 'payee confirmed the card by phone');
    await submit('#approve');
    expect(await page.textContent('body')).toContain(`Payout ${id} approved`);
    expect(withdrawCreates(id)).toBe(1);
    expect(await page.textContent('#decisions')).toContain('payee confirmed the card by phone');
  });
});
