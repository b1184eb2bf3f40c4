import type { SandboxHandle } from './sandbox.server';
import type { DeliveryLogEntry } from './sandbox.state';
import {
  asText,
  NotificationReceiver,
  notificationSignOk,
  sleep,
  startTestSandbox,
  TestShop,
  uniqueId,
  waitFor,
} from './testing/sandbox-test-kit';
import { PAYMENT } from '../../test/support/payways';

describe('sandbox: notifications', () => {
  let sandbox: SandboxHandle;
  let shop: TestShop;
  let receiver: NotificationReceiver;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    shop = new TestShop(sandbox);
  });
  afterAll(() => sandbox.close());
  beforeEach(async () => {
    await shop.control('POST', '/reset');
    receiver = await new NotificationReceiver().start();
  });
  afterEach(() => receiver.close());

  /** Creates an invoice notifying the receiver and acts as the payer. */
  async function paidInvoice(
    fields: Record<string, unknown> = {},
    action: 'pay' | 'decline' = 'pay',
  ): Promise<string> {
    const id = uniqueId('n');
    const c = await shop.createInvoice({
      shop_order_id: id,
      amount: '100.10',
      callback_url: receiver.url,
      ...fields,
    });
    expect(c.result).toBe(true);
    await shop.control('POST', `/invoices/${asText(c.data.id)}/${action}`);
    return id;
  }

  const deliveries = (): Promise<DeliveryLogEntry[]> =>
    shop.control<DeliveryLogEntry[]>('GET', '/notifications');

  it('sends a signed JSON payment notification with the spec’s fields, amounts written exactly', async () => {
    const id = await paidInvoice({
      description: 'Books',
      phone: '+79001234567',
      success_url: 'https://shop.test/ok',
    });
    const [n] = await waitFor(() => receiver.of('shop_order_id', id), 3000, 'the notification');
    expect(n.type).toBe('invoice');
    expect(n.contentType).toMatch(/^application\/json/);
    expect(notificationSignOk(n.fields)).toBe(true);
    expect(n.raw).toContain('"shop_amount":100.10');
    expect(n.raw).toContain('"client_price":102.60');
    expect(n.raw).toContain('"shop_refund":0.00');
    expect(n.fields).toMatchObject({
      status: 'success',
      payway: PAYMENT.card,
      description: 'Books',
    });
    for (const key of [
      'shop_id',
      'shop_currency',
      'payment_id',
      'ps_currency',
      'ps_data',
      'created',
      'updated',
      'addons',
      'sign',
    ]) {
      expect(n.fields).toHaveProperty(key);
    }
    expect(JSON.parse(String(n.fields.addons))).toMatchObject({
      callback_url: receiver.url,
      success_url: 'https://shop.test/ok',
      description: 'Books',
    });
    expect(notificationSignOk(n.fields, 'another-secret')).toBe(false);
  });

  it('sends a rejection to callback_rejected_url with status "rejected"', async () => {
    const rejected = await new NotificationReceiver().start();
    try {
      const id = await paidInvoice({ callback_rejected_url: rejected.url }, 'decline');
      const [n] = await waitFor(() => rejected.of('shop_order_id', id), 3000, 'the rejection');
      expect(n.fields.status).toBe('rejected');
      expect(notificationSignOk(n.fields)).toBe(true);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await rejected.close();
    }
  });

  it('re-sends until the reply is HTTP 200 with body OK: 500, 500, OK → exactly 3 attempts', async () => {
    receiver.replies = [
      { status: 500, body: 'error' },
      { status: 200, body: 'not ok' },
    ];
    const id = await paidInvoice();
    await waitFor(() => receiver.of('shop_order_id', id).length === 3, 5000, 'three attempts');
    await sleep(400); // more than the next retry gap at this time scale
    expect(receiver.of('shop_order_id', id)).toHaveLength(3);
    const log = await deliveries();
    expect(log.map((d) => [d.attempt, d.status, d.ok])).toEqual([
      [1, 500, false],
      [2, 200, false],
      [3, 200, true],
    ]);
  });

  it('gives up after 25 attempts', async () => {
    receiver.replies = Array.from({ length: 30 }, () => ({ status: 503, body: 'busy' }));
    await shop.control('POST', '/settings', { timeScale: 0.00001 });
    const id = await paidInvoice();
    await waitFor(() => receiver.of('shop_order_id', id).length === 25, 10_000, '25 attempts');
    await sleep(200);
    expect(receiver.of('shop_order_id', id)).toHaveLength(25);
  });

  it('a reset stops the retries under way', async () => {
    receiver.replies = Array.from({ length: 30 }, () => ({ status: 500, body: 'down' }));
    const id = await paidInvoice();
    await waitFor(() => receiver.of('shop_order_id', id).length >= 2, 5000, 'two attempts');
    await shop.control('POST', '/reset');
    await sleep(50);
    const seen = receiver.of('shop_order_id', id).length;
    await sleep(600); // longer than the next two retry gaps at this time scale
    expect(receiver.of('shop_order_id', id)).toHaveLength(seen);
    expect(await deliveries()).toEqual([]);
  });

  it('sends form-encoded notifications when set to, signed over the same text', async () => {
    await shop.control('POST', '/settings', { notifyFormat: 'form' });
    const id = await paidInvoice();
    const [n] = await waitFor(() => receiver.of('shop_order_id', id), 3000, 'the notification');
    expect(n.contentType).toMatch(/^application\/x-www-form-urlencoded/);
    expect(n.fields.shop_amount).toBe('100.10');
    expect(n.fields.ps_currency).toBe('643');
    expect(notificationSignOk(n.fields)).toBe(true);
  });

  it('also starts in form format by option', async () => {
    const formSandbox = await startTestSandbox({ notifyFormat: 'form' });
    try {
      const formShop = new TestShop(formSandbox);
      const c = await formShop.createInvoice({
        shop_order_id: uniqueId('f'),
        callback_url: receiver.url,
      });
      await formShop.control('POST', `/invoices/${asText(c.data.id)}/pay`);
      const [n] = await waitFor(() => receiver.received, 3000, 'the notification');
      expect(n.contentType).toMatch(/^application\/x-www-form-urlencoded/);
    } finally {
      await formSandbox.close();
    }
  });

  it('sends to the shop-level URL in preference to the request’s', async () => {
    const shopLevel = await new NotificationReceiver().start();
    try {
      await shop.control('POST', '/settings', { shopNotifyUrl: shopLevel.url });
      const id = await paidInvoice();
      await waitFor(() => shopLevel.of('shop_order_id', id), 3000, 'the notification');
      expect(receiver.received).toHaveLength(0);
    } finally {
      await shopLevel.close();
    }
  });

  it('includes the issued payment token in ps_data', async () => {
    const id = await paidInvoice({ issue_payment_token: true });
    const [n] = await waitFor(() => receiver.of('shop_order_id', id), 3000, 'the notification');
    expect(JSON.parse(String(n.fields.ps_data))).toMatchObject({
      payment_token: expect.stringMatching(/^tok_/),
    });
  });

  it('hold, then charge: a "hold" notification, then a "success" one', async () => {
    const id = uniqueId('h');
    const c = await shop.createInvoice(
      { shop_order_id: id, callback_url: receiver.url },
      'invoice/hold',
    );
    await shop.control('POST', `/invoices/${asText(c.data.id)}/pay`);
    await waitFor(
      () => receiver.of('shop_order_id', id).length === 1,
      3000,
      'the hold notification',
    );
    await shop.call('invoice/charge', {
      invoice_id: Number(asText(c.data.id)),
      now: '2024-01-01T10:00:00+03:00',
    });
    await waitFor(
      () => receiver.of('shop_order_id', id).length === 2,
      3000,
      'the charge notification',
    );
    expect(receiver.of('shop_order_id', id).map((n) => n.fields.status)).toEqual([
      'hold',
      'success',
    ]);
  });

  it('dup_notify: each notification is delivered twice', async () => {
    const id = await paidInvoice({ payway: PAYMENT.sandboxCard('dup_notify') });
    await waitFor(() => receiver.of('shop_order_id', id).length === 2, 3000, 'two deliveries');
    const [a, b] = receiver.of('shop_order_id', id);
    expect(a.raw).toBe(b.raw);
  });

  it('out_of_order: the older (hold) notification arrives after the newer (success)', async () => {
    const id = uniqueId('o');
    const c = await shop.createInvoice(
      {
        shop_order_id: id,
        callback_url: receiver.url,
        payway: PAYMENT.sandboxCard('out_of_order'),
      },
      'invoice/hold',
    );
    await shop.control('POST', `/invoices/${asText(c.data.id)}/pay`);
    await sleep(50);
    expect(receiver.of('shop_order_id', id)).toHaveLength(0);
    await shop.call('invoice/charge', {
      invoice_id: Number(asText(c.data.id)),
      now: '2024-01-01T10:00:00+03:00',
    });
    await waitFor(() => receiver.of('shop_order_id', id).length === 2, 3000, 'both notifications');
    expect(receiver.of('shop_order_id', id).map((n) => n.fields.status)).toEqual([
      'success',
      'hold',
    ]);
  });

  it('notify_none and the suppress setting send nothing', async () => {
    const none = await paidInvoice({ payway: PAYMENT.sandboxCard('notify_none') });
    await shop.control('POST', '/settings', { suppressNotifications: true });
    const suppressed = await paidInvoice();
    await sleep(100);
    expect(receiver.of('shop_order_id', none)).toHaveLength(0);
    expect(receiver.of('shop_order_id', suppressed)).toHaveLength(0);
  });

  it('re-sends the last notification of an invoice on request', async () => {
    const id = await paidInvoice();
    await waitFor(() => receiver.of('shop_order_id', id).length === 1, 3000, 'the notification');
    await shop.control('POST', '/notifications/resend', { shop_order_id: id, times: 2 });
    await waitFor(() => receiver.of('shop_order_id', id).length === 3, 3000, 'the re-sent ones');
    await expect(
      shop.control('POST', '/notifications/resend', { shop_order_id: 'unknown' }),
    ).rejects.toThrow('404');
  });
});
