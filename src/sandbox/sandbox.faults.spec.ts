import type { SandboxHandle } from './sandbox.server';
import type { RequestLogEntry } from './sandbox.state';
import {
  asText,
  NotificationReceiver,
  notificationSignOk,
  postForm,
  SHOP_ID,
  startTestSandbox,
  TestShop,
  uniqueId,
  waitFor,
} from './testing/sandbox-test-kit';
import { PAYMENT, PAYOUT } from '../../test/support/payways';

describe('sandbox: scenarios and faults', () => {
  let sandbox: SandboxHandle;
  let shop: TestShop;
  let receiver: NotificationReceiver;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    shop = new TestShop(sandbox);
    receiver = await new NotificationReceiver().start();
  });
  afterAll(async () => {
    await receiver.close();
    await sandbox.close();
  });

  const create = (payway: string, fields: Record<string, unknown> = {}) => {
    const id = uniqueId('f');
    return {
      id,
      call: shop.createInvoice({
        shop_order_id: id,
        payway,
        callback_url: receiver.url,
        ...fields,
      }),
    };
  };

  /** Rejects the promise for a fetch that did not get an answer. */
  async function noAnswer(p: Promise<unknown>): Promise<void> {
    await expect(p).rejects.toThrow();
  }

  describe('payway scenarios', () => {
    it('success: paid at once without the payer, and not notified', async () => {
      const { id, call } = create(PAYMENT.cardSuccess);
      const r = await call;
      expect(r.data).toMatchObject({ method: null, url: null });
      expect(await shop.status(id)).toBe(4);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.of('shop_order_id', id)).toHaveLength(0);
    });

    it('success_with_callback: the payer pays on the page, and the success is notified', async () => {
      const { id, call } = create(PAYMENT.card, { client_info: {} });
      const r = await call;
      expect(r.data.method).toBe('GET');
      await postForm(`${sandbox.origin}/sandbox/pay/${asText(r.data.id)}/complete`, {
        action: 'pay',
      });
      const [n] = await waitFor(() => receiver.of('shop_order_id', id), 3000, 'the notification');
      expect(n.fields).toMatchObject({ status: 'success', payway: PAYMENT.card });
      expect(notificationSignOk(n.fields)).toBe(true);
    });

    it('rejected: rejected at once, not notified; rejected_with_callback: notified as rejected', async () => {
      const silent = create(PAYMENT.walletRejected, { phone: '+79001234567' });
      expect((await silent.call).result).toBe(true);
      expect(await shop.status(silent.id)).toBe(6);
      const { id, call } = create(PAYMENT.walletRejectedWithCallback, { phone: '+79001234567' });
      expect((await call).result).toBe(true);
      expect(await shop.status(id)).toBe(6);
      const [n] = await waitFor(() => receiver.of('shop_order_id', id), 3000, 'the notification');
      expect(n.fields.status).toBe('rejected');
      expect(receiver.of('shop_order_id', silent.id)).toHaveLength(0);
    });

    it('create_declined_with_callback: the create is refused (code 10), the rejection notified', async () => {
      const { id, call } = create(PAYMENT.cardCreateDeclined);
      expect(await call).toMatchObject({ result: false, error_code: 10 });
      expect(await shop.status(id)).toBe(6);
      const [n] = await waitFor(() => receiver.of('shop_order_id', id), 3000, 'the notification');
      expect(n.fields.status).toBe('rejected');
    });

    it('pending: the payer’s Pay leaves it waiting, for ever', async () => {
      const { id, call } = create(PAYMENT.sandboxCard('pending'), { client_info: {} });
      const r = await call;
      const page = await postForm(`${sandbox.origin}/sandbox/pay/${asText(r.data.id)}/complete`, {
        action: 'pay',
      });
      expect(page.text).toContain('being processed');
      expect(await shop.status(id)).toBe(2);
    });

    it('nonfatal: code 100 "Temporary error, try later", yet the invoice completes later and notifies', async () => {
      const { id, call } = create(PAYMENT.sandboxCard('nonfatal'));
      const r = await call;
      expect(r).toMatchObject({
        status: 200,
        result: false,
        error_code: 100,
        message: 'Temporary error, try later',
      });
      const [n] = await waitFor(() => receiver.of('shop_order_id', id), 3000, 'the notification');
      expect(n.fields.status).toBe('success');
      expect(await shop.status(id)).toBe(4);
    });

    it('fatal: code 10, nothing created', async () => {
      const { id, call } = create(PAYMENT.sandboxCard('fatal'));
      expect(await call).toMatchObject({ result: false, error_code: 10 });
      expect((await shop.check(id)).error_code).toBe(7);
    });

    it('internal_server_error: an HTML 500 page, nothing created', async () => {
      const { id, call } = create(PAYMENT.cardServerError);
      const r = await call;
      expect(r.status).toBe(500);
      expect(r.text).toContain('<html>');
      expect((await shop.check(id)).error_code).toBe(7);
    });

    it('reset: the connection is destroyed without an answer, nothing created', async () => {
      const { id, call } = create(PAYMENT.sandboxCard('reset'));
      await noAnswer(call);
      expect((await shop.check(id)).error_code).toBe(7);
    });

    it('reset_done: the connection is destroyed, but the invoice exists', async () => {
      const { id, call } = create(PAYMENT.sandboxCard('reset_done'));
      await noAnswer(call);
      expect(await shop.status(id)).toBe(2);
    });

    it('timeout_done: the answer comes after the set delay; the invoice was made at once', async () => {
      await shop.control('POST', '/settings', { timeoutDelayMs: 200 });
      try {
        const { id, call } = create(PAYMENT.sandboxCard('timeout_done'));
        const started = Date.now();
        await waitFor(
          () => sandbox.state.findInvoiceByOrder(SHOP_ID, id),
          150,
          'the invoice before the answer',
        );
        const r = await call;
        expect(Date.now() - started).toBeGreaterThanOrEqual(190);
        expect(r.result).toBe(true);
      } finally {
        await shop.control('POST', '/settings', { timeoutDelayMs: null });
      }
    });

    it('timeout_done with a client time-out: no answer for the client, the invoice exists', async () => {
      await shop.control('POST', '/faults', {
        path: 'invoice/create',
        fault: 'timeout_done',
        delayMs: 2000,
      });
      const id = uniqueId('f');
      const started = Date.now();
      await noAnswer(
        shop.call(
          'invoice/create',
          { shop_order_id: id, amount: '100.00', currency: 643, payway: PAYMENT.card },
          { signal: AbortSignal.timeout(100) },
        ),
      );
      // The client gave up at its 100 ms time-out, not at the 2 s answer: ten times the time-out
      // as margin, half the delay.
      expect(Date.now() - started).toBeLessThan(1000);
      expect(await shop.status(id)).toBe(2);
    });

    it('timeout_not_done: a late 504 page, nothing created', async () => {
      await shop.control('POST', '/faults', {
        path: 'invoice/create',
        fault: 'timeout_not_done',
        delayMs: 150,
      });
      const { id, call } = create(PAYMENT.card);
      const started = Date.now();
      const r = await call;
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      expect(r.status).toBe(504);
      expect((await shop.check(id)).error_code).toBe(7);
    });
  });

  it('timeout_error: a late 504 page, nothing created', async () => {
    await shop.control('POST', '/settings', { timeoutDelayMs: 150 });
    try {
      const { id, call } = create(PAYMENT.cardTimeout);
      const r = await call;
      expect(r.status).toBe(504);
      expect((await shop.check(id)).error_code).toBe(7);
    } finally {
      await shop.control('POST', '/settings', { timeoutDelayMs: null });
    }
  });

  describe('latency setting', () => {
    it('latencyMs delays every gateway answer, the call is logged on arrival, 0 ends it', async () => {
      await shop.control('POST', '/settings', { latencyMs: 1000 });
      try {
        const id = uniqueId('f');
        const started = Date.now();
        const call = shop.check(id);
        await waitFor(
          () =>
            sandbox.state.requests.find(
              (r) =>
                r.path === 'invoice/check' &&
                (r.body as Record<string, unknown>).shop_order_id === id,
            ),
          900,
          'the logged call before its answer',
        );
        expect((await call).error_code).toBe(7);
        expect(Date.now() - started).toBeGreaterThanOrEqual(990);
      } finally {
        await shop.control('POST', '/settings', { latencyMs: 0 });
      }
      const started = Date.now();
      await shop.check(uniqueId('f'));
      // Not delayed any more: a check takes milliseconds, the bound is the 1 s it was delayed by.
      expect(Date.now() - started).toBeLessThan(990);
    });

    it('refuses a latency that is not a number of 0 or more', async () => {
      for (const latencyMs of [-1, '200', null]) {
        await expect(shop.control('POST', '/settings', { latencyMs })).rejects.toThrow(
          'latencyMs must be a number of 0 or more',
        );
      }
      expect(sandbox.state.settings.latencyMs).toBe(0);
    });
  });

  describe('queued faults', () => {
    it('hit the next N calls of the path, then calls are normal again', async () => {
      await shop.control('POST', '/faults', { path: 'invoice/check', fault: 'http500', times: 2 });
      const { id, call } = create(PAYMENT.card);
      await call;
      expect((await shop.check(id)).status).toBe(500);
      expect((await shop.check(id)).status).toBe(500);
      expect((await shop.check(id)).result).toBe(true);
    });

    it('nonfatal on withdraw/create: code 100, and the payout exists', async () => {
      await shop.control('POST', '/faults', { path: 'withdraw/create', fault: 'nonfatal' });
      const shopPaymentId = uniqueId('p');
      const r = await shop.call('withdraw/create', {
        shop_payment_id: shopPaymentId,
        amount: '500.00',
        amount_type: 'ps_amount',
        shop_currency: 643,
        payway: PAYOUT.card,
        account: '4111111111111111',
      });
      expect(r).toMatchObject({ result: false, error_code: 100 });
      const status = await shop.call('withdraw/shop_payment_status', {
        shop_payment_id: shopPaymentId,
        now: '2024-01-01T10:00:00+03:00',
      });
      expect(status.result).toBe(true);
    });

    it('fatal on withdraw/create: nothing created, the payout is absent', async () => {
      await shop.control('POST', '/faults', { path: 'withdraw/create', fault: 'fatal' });
      const shopPaymentId = uniqueId('p');
      const r = await shop.call('withdraw/create', {
        shop_payment_id: shopPaymentId,
        amount: '500.00',
        amount_type: 'ps_amount',
        shop_currency: 643,
        payway: PAYOUT.card,
        account: '4111111111111111',
      });
      expect(r).toMatchObject({ result: false, error_code: 10 });
      const status = await shop.call('withdraw/shop_payment_status', {
        shop_payment_id: shopPaymentId,
        now: '2024-01-01T10:00:00+03:00',
      });
      expect(status).toMatchObject({ result: false, error_code: 7, message: 'Payout is absent' });
    });

    it('answers a malformed control request with 400', async () => {
      const res = await fetch(`${sandbox.origin}/sandbox/faults`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{not json',
      });
      expect(res.status).toBe(400);
    });

    it('refuses an unknown fault or path', async () => {
      await expect(
        shop.control('POST', '/faults', { path: 'invoice/create', fault: 'explode' }),
      ).rejects.toThrow('400');
      await expect(
        shop.control('POST', '/faults', { path: 'nowhere', fault: 'reset' }),
      ).rejects.toThrow('400');
    });
  });

  describe('request log', () => {
    it('records every call with its outcome, the card number masked, cvv and sign removed', async () => {
      await shop.control('DELETE', '/requests');
      const id = uniqueId('log');
      await shop.createInvoice({
        shop_order_id: id,
        card: {
          number: '4111111111111111',
          cardholder: 'A B',
          expiry_month: '01',
          expiry_year: '30',
          cvv: '987',
        },
      });
      await shop.createInvoice({ shop_order_id: id });
      const log = await shop.control<RequestLogEntry[]>('GET', '/requests');
      expect(log.map((e) => [e.path, e.result, e.error_code])).toEqual([
        ['invoice/create', true, 0],
        ['invoice/create', false, 6],
      ]);
      const text = JSON.stringify(log);
      expect(text).toContain('411111******1111');
      expect(text).not.toContain('4111111111111111');
      expect(text).not.toContain('"cvv"');
      // The cvv's three digits may occur in the clock-made order id or a time stamp: those
      // are taken out before looking for them.
      let rest = text.replaceAll(id, '');
      for (const entry of log) rest = rest.replaceAll(entry.time, '');
      expect(rest).not.toContain('987');
      expect(text).not.toContain('"sign"');
      expect(asText((log[0].body as Record<string, unknown>).shop_order_id)).toBe(id);
    });
  });
});
