import type { Page } from 'playwright-core';
import type { SandboxHandle } from '../../src/sandbox/sandbox.server';
import {
  asText,
  startTestSandbox,
  TestShop,
  uniqueId,
  waitFor,
} from '../../src/sandbox/testing/sandbox-test-kit';
import { LaunchedBrowser, launchBrowser } from '../support/browser';
import { PAYMENT } from '../support/payways';

/** The shop's side of spec rule 6 for `method: POST`: a form posting `data` to `url`, submitted at once. */
function autoSubmitForm(url: string, data: Record<string, string>): string {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const inputs = Object.entries(data)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('');
  return `<!doctype html><form id="go" method="post" action="${esc(url)}">${inputs}</form>
<script>document.getElementById('go').submit()</script>`;
}

describe('sandbox payer page in headless Chromium', () => {
  let sandbox: SandboxHandle;
  let shop: TestShop;
  let browser: LaunchedBrowser;
  let page: Page;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    shop = new TestShop(sandbox);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });
  beforeEach(async () => {
    page = await browser.context.newPage();
  });
  afterEach(() => page.close());

  it('card payment: POST redirect, browser information collected, Pay → invoice/check status 4', async () => {
    const shopOrderId = uniqueId('browser');
    const created = await shop.createInvoice({
      shop_order_id: shopOrderId,
      amount: '250.00',
      description: 'Browser test',
      success_url: 'https://shop.example/thanks',
      payway: PAYMENT.sandboxCard('post_redirect'),
    });
    expect(created.data.method).toBe('POST');
    const invoiceId = asText(created.data.id);

    await page.setContent(
      autoSubmitForm(created.data.url as string, created.data.data as Record<string, string>),
    );
    await page.waitForURL(`${sandbox.origin}/sandbox/pay/${invoiceId}`);
    expect(await page.textContent('#amount')).toBe('250.00 RUB');
    expect(await page.textContent('#description')).toBe('Browser test');

    await page.click('#pay');
    await page.waitForSelector('#result');
    expect(await page.textContent('#result')).toBe('Payment successful');
    expect(await page.getAttribute('#return', 'href')).toBe('https://shop.example/thanks');

    expect(await shop.status(shopOrderId)).toBe(4);
    const info = sandbox.state.findInvoiceByOrder(shop.shopId, shopOrderId)?.clientInfo ?? {};
    expect(info).toMatchObject({
      browser_javascript_enabled: true,
      browser_user_agent: expect.stringContaining('Chrome'),
    });
  });

  it('wallet payment: GET redirect, Decline → invoice/check status 6', async () => {
    const shopOrderId = uniqueId('browser');
    const created = await shop.createInvoice({
      shop_order_id: shopOrderId,
      payway: PAYMENT.wallet,
      phone: '+79001234567',
    });
    expect(created.data.method).toBe('GET');
    const query = new URLSearchParams(created.data.data as Record<string, string>).toString();

    await page.goto(`${created.data.url as string}?${query}`);
    await page.click('#decline');
    await page.waitForSelector('#result');
    expect(await page.textContent('#result')).toBe('Payment declined');
    expect(await shop.status(shopOrderId)).toBe(6);
  });

  it('card data: the 3-D Secure page, Confirm → invoice/check status 4', async () => {
    const shopOrderId = uniqueId('browser');
    const created = await shop.createInvoice({
      shop_order_id: shopOrderId,
      card: {
        number: '4111111111111111',
        cardholder: 'TEST',
        expiry_month: '12',
        expiry_year: '30',
        cvv: '123',
      },
    });
    await page.setContent(
      autoSubmitForm(created.data.url as string, created.data.data as Record<string, string>),
    );
    await page.waitForURL(`${sandbox.origin}/sandbox/3ds/${asText(created.data.id)}`);
    await page.click('#confirm');
    await page.waitForSelector('#result');
    await waitFor(async () => (await shop.status(shopOrderId)) === 4, 3000, 'status 4');
  });
});
