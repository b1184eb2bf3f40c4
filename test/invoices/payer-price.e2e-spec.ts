import { randomUUID } from 'node:crypto';
import { auth, startTestApp, type TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';

type Json = Record<string, unknown>;

async function eventually<T>(
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  ms = 10000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The payer's fee-inclusive price (`client_price` of the gateway's records and notifications)
 * is on the invoice, in its answers and in its events, also when the currencies match. The
 * sandbox's card payway takes 2.5 %: 1250.50 costs the payer 1281.76.
 */
describe('payerPrice and psCurrency from the gateway (sandbox)', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await startTestApp();
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const create = async (payway: string, amount: string): Promise<Json> => {
    const shopOrderId = `price-${randomUUID()}`;
    const res = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId, amount, currency: 643, payway, description: 'Books' });
    expect(res.status).toBe(201);
    return res.body as Json;
  };
  const get = async (shopOrderId: unknown, refresh = false): Promise<Json> =>
    (
      await ctx.http
        .get(`/api/v1/invoices/${String(shopOrderId)}${refresh ? '?refresh=true' : ''}`)
        .set(auth())
        .expect(200)
    ).body as Json;
  /** The sandbox's control route acting as the payer who presses Pay. */
  const pay = async (invoiceId: unknown): Promise<void> => {
    const res = await fetch(`${ctx.sandbox.origin}/sandbox/invoices/${String(invoiceId)}/pay`, {
      method: 'POST',
    });
    expect(res.status).toBe(200);
  };
  /** What the sandbox's payer page shows under "To pay". */
  const payerPagePrice = async (invoiceId: unknown): Promise<string> => {
    const html = await (
      await fetch(`${ctx.sandbox.origin}/sandbox/pay/${String(invoiceId)}`)
    ).text();
    return /<dd id="price">([\d.]+) /.exec(html)?.[1] ?? '(no price on the payer page)';
  };
  const eventsOf = async (shopOrderId: unknown): Promise<Json[]> =>
    (
      await ctx.http
        .get(`/api/v1/events?objectType=invoice&objectId=${String(shopOrderId)}`)
        .set(auth())
        .expect(200)
    ).body.items as Json[];

  it('a paid card invoice of 1250.50 shows the payer page’s 1281.76 in its GET and its succeeded event', async () => {
    const created = await create(PAYMENT.card, '1250.50');
    expect(created).toMatchObject({ payerPrice: null, psCurrency: null });
    const shown = await payerPagePrice(created.invoiceId);
    expect(shown).toBe('1281.76');
    await pay(created.invoiceId);
    const paid = await eventually(
      () => get(created.shopOrderId),
      (b) => b.status === 'succeeded',
    );
    expect(paid).toMatchObject({ status: 'succeeded', payerPrice: shown, psCurrency: 643 });
    const events = await eventsOf(created.shopOrderId);
    const succeeded = events.find((e) => e.type === 'invoice.succeeded');
    expect(succeeded?.data).toMatchObject({ payerPrice: '1281.76', psCurrency: 643 });
  });

  it('without a notification, invoice/check (refresh) brings the price, and the event carries it', async () => {
    const created = await create(PAYMENT.sandboxCard('notify_none'), '1250.50');
    await pay(created.invoiceId);
    const checked = await get(created.shopOrderId, true);
    expect(checked).toMatchObject({ status: 'succeeded', payerPrice: '1281.76', psCurrency: 643 });
    const succeeded = (await eventsOf(created.shopOrderId)).find(
      (e) => e.type === 'invoice.succeeded',
    );
    expect(succeeded?.data).toMatchObject({ payerPrice: '1281.76', psCurrency: 643 });
  });

  it('the price is the payer page’s to the cent on another amount (123.45 → 126.54)', async () => {
    // Paid at once without the payer and never notified: only invoice/check tells.
    const created = await create(PAYMENT.cardSuccess, '123.45');
    const checked = await get(created.shopOrderId, true);
    // 123.45 * 1.025 = 126.53625 → 126.54
    expect(checked).toMatchObject({ status: 'succeeded', payerPrice: '126.54', psCurrency: 643 });
    expect(checked.payerPrice).toBe(await payerPagePrice(created.invoiceId));
  });
});
