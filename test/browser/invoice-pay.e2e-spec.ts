import { auth, startTestApp, TestContext } from '../support/app';
import { launchBrowser, LaunchedBrowser } from '../support/browser';
import { PAYMENT } from '../support/payways';

type Json = Record<string, unknown>;

/**
 * The payer's whole way in a real browser: payUrl → our auto-submitting form → the gateway's
 * browser-information step → its payer page → Pay → the notification → `succeeded`.
 */
describe('payer pays in a browser (headless Chromium)', () => {
  let ctx: TestContext;
  let browser: LaunchedBrowser;

  beforeAll(async () => {
    ctx = await startTestApp();
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
  });

  async function waitForStatus(shopOrderId: string, status: string, ms = 8000): Promise<Json> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const res = await ctx.http
        .get(`/api/v1/invoices/${encodeURIComponent(shopOrderId)}`)
        .set(auth());
      if (res.body.status === status) return res.body as Json;
      await new Promise((r) => setTimeout(r, 100));
    }
    // The notification did not come: ask the gateway.
    return (
      await ctx.http
        .get(`/api/v1/invoices/${encodeURIComponent(shopOrderId)}?refresh=true`)
        .set(auth())
    ).body as Json;
  }

  it('follows payUrl to the sandbox payer page, pays, and the invoice ends succeeded', async () => {
    const shopOrderId = `browser-${Date.now()}`;
    const created = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId,
        amount: '250.50',
        currency: 643,
        payway: PAYMENT.card,
        description: 'Browser <test> & co',
      })
      .expect(201);
    const invoice = created.body as Json;
    expect(invoice.status).toBe('awaiting_payer');

    const page = await browser.context.newPage();
    await page.goto(String(invoice.payUrl));
    await page.waitForURL(new RegExp(`/sandbox/pay/${String(invoice.invoiceId)}$`), {
      timeout: 10000,
    });
    expect(await page.textContent('#order')).toBe(shopOrderId);
    expect(await page.textContent('#amount')).toContain('250.50');
    expect(await page.textContent('#description')).toBe('Browser <test> & co');

    await page.click('#pay');
    await page.waitForLoadState();
    const done = await waitForStatus(shopOrderId, 'succeeded');
    expect(done).toMatchObject({ status: 'succeeded', gatewayStatus: 4, amount: '250.50' });
  });
});
