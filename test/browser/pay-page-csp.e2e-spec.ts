import { auth, startTestApp, TestContext } from '../support/app';
import { launchBrowser, LaunchedBrowser } from '../support/browser';
import { PAYMENT } from '../support/payways';

/**
 * The payer page's CSP in a real browser: the auto-submitting POST form still submits (its script
 * carries the response's nonce), and the policy is really enforced: the same page without the
 * nonce does not run its script.
 */
describe('payer page under its Content-Security-Policy (headless Chromium)', () => {
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

  async function payUrl(): Promise<{ url: string; invoiceId: string }> {
    const res = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId: `csp-${Date.now()}-${Math.random().toString(36).slice(2)}`, amount: '100.10', currency: 643, payway: PAYMENT.sandboxCard('post_redirect') })
      .expect(201);
    expect(res.body.redirect).toMatchObject({ method: 'POST' });
    return { url: String(res.body.payUrl), invoiceId: String(res.body.invoiceId) };
  }

  it('the POST form submits itself, with no CSP violation', async () => {
    const { url } = await payUrl();
    const page = await browser.context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) violations.push(m.text());
    });
    const first = page.waitForResponse((r) => r.url() === url);
    await page.goto(url);
    const csp = (await first).headers()['content-security-policy'];
    expect(csp).toMatch(/script-src 'nonce-[^']+'/);
    expect(csp).toContain("frame-ancestors 'none'");
    // Submitted: the browser left our page for the gateway's (the sandbox's) page.
    await page.waitForURL((u) => !u.pathname.startsWith('/pay/'), { timeout: 15_000 });
    expect(new URL(page.url()).origin).toBe(ctx.sandbox.origin);
    expect(violations).toEqual([]);
    await page.close();
  });

  it('the same page without the nonce is blocked by the policy (so the nonce is what lets it run)', async () => {
    const { url } = await payUrl();
    const page = await browser.context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) violations.push(m.text());
    });
    await page.route(url, async (route) => {
      const original = await route.fetch();
      const html = (await original.text()).replace(/ nonce="[^"]*"/, '');
      await route.fulfill({ response: original, body: html });
    });
    await page.goto(url);
    await page.waitForTimeout(1500);
    expect(new URL(page.url()).pathname.startsWith('/pay/')).toBe(true);
    expect(violations.length).toBeGreaterThan(0);
    await page.close();
  });
});
