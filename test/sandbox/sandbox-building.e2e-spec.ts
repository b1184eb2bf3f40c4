import { auth, SECRET, SHOP_ID, PAYOUT_SECRET, PAYOUT_SHOP_ID, startTestApp, TestContext } from '../support/app';
import { startSandbox } from '../../src/sandbox/sandbox.server';
import { INVOICE_STATUS } from '../../src/sandbox/sandbox.state';
import { PAYMENT } from '../support/payways';
import { eventually } from '../support/webhook-receiver';

/**
 * The sandbox for building against: its pay helper takes the shop's order id (the id the shop
 * knows) as well as the gateway's; a hold carries `expires_at` as SANDBOX_HOLD_TTL_S sets it.
 */
const HOLD_TTL_S = 3600;
let ctx: TestContext;

beforeAll(async () => {
  const sandbox = await startSandbox({
    port: 0,
    shopId: SHOP_ID,
    secretKey: SECRET,
    payoutShopId: PAYOUT_SHOP_ID,
    payoutSecretKey: PAYOUT_SECRET,
    timeScale: 0.001,
    holdLifetimeS: HOLD_TTL_S,
  });
  ctx = await startTestApp({ sandbox });
  (ctx as { sandboxClose?: () => Promise<void> }).sandboxClose = () => sandbox.close();
}, 120000);

afterAll(async () => {
  await ctx?.close();
  await (ctx as { sandboxClose?: () => Promise<void> } | undefined)?.sandboxClose?.();
});

const control = (path: string, method = 'POST'): Promise<Response> =>
  fetch(`${ctx.sandbox.origin}/sandbox/${path}`, { method, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined });

async function createInvoice(shopOrderId: string, twoStep = false): Promise<{ invoiceId: string }> {
  const res = await ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({ shopOrderId, amount: '150.00', currency: 643, payway: PAYMENT.card, ...(twoStep ? { twoStep: true } : {}) });
  expect(res.status).toBe(201);
  return res.body as { invoiceId: string };
}

it('pays an invoice named by the shop order id; the gateway id still works', async () => {
  const byOrder = `sb-order-${Date.now()}`;
  await createInvoice(byOrder);
  const paid = await control(`invoices/${encodeURIComponent(byOrder)}/pay`);
  expect(paid.status).toBe(200);
  expect(((await paid.json()) as { data: { status: number } }).data.status).toBe(INVOICE_STATUS.PAID);
  await eventually(async () => {
    const inv = await ctx.http.get(`/api/v1/invoices/${byOrder}`).set(auth());
    expect(inv.body.status).toBe('succeeded');
  }, 20000);

  const byId = `sb-id-${Date.now()}`;
  const { invoiceId } = await createInvoice(byId);
  const again = await control(`invoices/${invoiceId}/pay`);
  expect(again.status).toBe(200);
  // Paid once: a second pay by either name is refused, not paid twice.
  expect((await control(`invoices/${encodeURIComponent(byId)}/pay`)).status).toBe(409);
});

it("an order id made of digits is the shop's order id first, even where it is also another invoice's gateway id", async () => {
  const firstOrder = `sb-first-${Date.now()}`;
  const first = await createInvoice(firstOrder);
  // The next invoice's shop order id is the first one's gateway id.
  const digits = String(first.invoiceId);
  await createInvoice(digits);
  const paid = await control(`invoices/${digits}/pay`);
  expect(paid.status).toBe(200);
  const data = ((await paid.json()) as { data: { shop_order_id: string; status: number } }).data;
  expect(data).toMatchObject({ shop_order_id: digits, status: INVOICE_STATUS.PAID });
  // The invoice whose gateway id those digits are is left alone.
  const untouched = ((await (await control(`invoices/${firstOrder}`, 'GET')).json()) as { data: { status: number } }).data;
  expect(untouched.status).toBe(INVOICE_STATUS.AWAITING_PAYER);
});

it('an order id made of digits that names no invoice, or an unknown order id, is a 404 naming both ways', async () => {
  for (const id of ['999999999', 'no-such-order', '%E2%80%AE']) {
    const res = await control(`invoices/${id}/pay`);
    expect(res.status).toBe(404);
    expect(await res.text()).toMatch(/shop_order_id or invoice id/);
  }
});

it('a paid hold carries expires_at SANDBOX_HOLD_TTL_S after the payment, and the service shows it', async () => {
  const shopOrderId = `sb-hold-${Date.now()}`;
  await createInvoice(shopOrderId, true);
  const before = Date.now();
  expect((await control(`invoices/${shopOrderId}/pay`)).status).toBe(200);
  const record = ((await (await control(`invoices/${shopOrderId}`, 'GET')).json()) as { data: { status: number; expires_at: string } }).data;
  expect(record.status).toBe(INVOICE_STATUS.HELD);
  const expires = Date.parse(record.expires_at);
  expect(expires).toBeGreaterThanOrEqual(before + HOLD_TTL_S * 1000 - 2000);
  expect(expires).toBeLessThanOrEqual(Date.now() + HOLD_TTL_S * 1000 + 2000);
  await eventually(async () => {
    const inv = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
    expect(inv.body.status).toBe('held');
    expect(Date.parse(inv.body.holdExpiresAt as string)).toBe(expires);
  }, 20000);
});
