import type { Page } from 'playwright-core';
import { ADMIN_KEY, auth, startTestApp, TestContext } from '../support/app';
import { launchBrowser, LaunchedBrowser } from '../support/browser';
import { PAYMENT } from '../support/payways';

type Json = Record<string, unknown>;

/**
 * Payment links in a real browser (headless Chromium): an operator makes a link with the
 * console's form (a wrong field first, named as the API names it), then a payer opens the link,
 * chooses a payway, fills its add-on field wrongly (the API's message) and rightly, lands on
 * the gateway's payer page and pays; the link is then paid and its page a receipt.
 */
describe('payment links in a browser', () => {
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

  /** Clicks a submit button and waits for the page its form leads to. */
  async function submit(page: Page, selector: string): Promise<void> {
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click(selector)]);
  }

  async function waitForLink(id: string, status: string): Promise<Json> {
    let last: Json = {};
    for (let i = 0; i < 100; i++) {
      last = (await ctx.http.get(`/api/v1/payment-links/${id}`).set(auth()).expect(200)).body as Json;
      if (last.status === status) return last;
      await new Promise((r) => setTimeout(r, 100));
    }
    return last;
  }

  it('an operator makes a link in the console; a payer chooses, fills, pays; the link is paid and shows its receipt', async () => {
    const desk = await browser.context.newPage();
    await desk.goto(`${ctx.url}/admin/login`);
    await desk.fill('#key', ADMIN_KEY);
    await Promise.all([desk.waitForURL(`${ctx.url}/admin`), desk.click('button[type=submit]')]);
    await desk.goto(`${ctx.url}/admin/ui/payment-links`);

    // A wrong amount: refused, naming the field as the API does, nothing made.
    await desk.fill('#link-amount', '150.001');
    await desk.fill('#link-description', 'Piano lesson <b>1</b>');
    await desk.fill('#link-payways', `${PAYMENT.card}\n${PAYMENT.wallet}`);
    await submit(desk, '#create-link');
    expect(await desk.textContent('.flash.error')).toContain('amount:');
    expect((await ctx.http.get('/api/v1/payment-links').set(auth()).expect(200)).body.items).toEqual([]);
    // The form kept what was typed.
    expect(await desk.inputValue('#link-description')).toBe('Piano lesson <b>1</b>');

    await desk.fill('#link-amount', '150.00');
    await submit(desk, '#create-link');
    expect(await desk.textContent('.flash.ok')).toContain('Payment link plink_');
    const url = String(await desk.getAttribute('#link-url', 'href'));
    const id = url.split('/').pop()!;
    expect(await desk.textContent('#link-description')).toBe('Piano lesson <b>1</b>');

    const payer = await browser.context.newPage();
    await payer.goto(url);
    expect(await payer.textContent('#description')).toBe('Piano lesson <b>1</b>');
    expect(await payer.textContent('#amount')).toBe('150.00 RUB');
    await payer.check(`input[value="${PAYMENT.wallet}"]`);
    await submit(payer, '#next');
    expect(await payer.textContent('#chosen')).toBe(PAYMENT.wallet);

    await payer.fill('input[name="extras.phone"]', '12345');
    await submit(payer, '#submit');
    const api = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId: `api-${Date.now()}`, amount: '150.00', currency: 643, payway: PAYMENT.wallet, extras: { phone: '12345' } })
      .expect(400);
    const message = (api.body as { errors: Array<{ field: string; message: string }> }).errors.find(
      (e) => e.field === 'extras.phone',
    )!.message;
    expect(await payer.textContent('#errors [data-field="extras.phone"]')).toBe(`extras.phone: ${message}`);
    expect(await payer.inputValue('input[name="extras.phone"]')).toBe('12345');

    await payer.fill('input[name="extras.phone"]', '+79001234567');
    await Promise.all([payer.waitForURL(/\/sandbox\/pay\//, { timeout: 10000 }), payer.click('#submit')]);
    expect(await payer.textContent('#order')).toBe(`${id}-1`);
    expect(await payer.textContent('#amount')).toContain('150.00');
    await payer.click('#pay');
    await payer.waitForLoadState();

    const paid = await waitForLink(id, 'paid');
    expect(paid).toMatchObject({ status: 'paid', invoices: [`${id}-1`] });
    await payer.goto(url);
    expect(await payer.textContent('h1')).toBe('Payment received');
    expect(await payer.textContent('#receipt-order')).toBe(`${id}-1`);
    expect(await payer.textContent('#receipt-amount')).toBe('150.00 RUB');

    // The console's link page lists its invoice, paid.
    await desk.goto(`${ctx.url}/admin/ui/payment-links/${id}`);
    expect(await desk.textContent('#link-status')).toBe('paid');
    expect(await desk.textContent('#link-invoices tbody')).toContain(`${id}-1`);
    expect(await desk.textContent('#link-invoices tbody')).toContain('succeeded');
  });

  it('an operator deactivates a link from its page; the payer then sees it is no longer active', async () => {
    const made = (
      await ctx.http
        .post('/api/v1/payment-links')
        .set(auth())
        .send({ amount: '20.00', currency: 'RUB', description: 'Deposit', payways: [PAYMENT.card] })
        .expect(201)
    ).body as Json;
    const desk = await browser.context.newPage();
    await desk.goto(`${ctx.url}/admin/ui/payment-links/${String(made.id)}`);
    await submit(desk, '#deactivate');
    expect(await desk.textContent('.flash.ok')).toContain('deactivated');
    expect(await desk.textContent('#link-status')).toBe('deactivated');
    const payer = await browser.context.newPage();
    const res = await payer.goto(String(made.url));
    expect(res?.status()).toBe(410);
    expect(await payer.textContent('#gone')).toContain('deactivated');
  });
});
