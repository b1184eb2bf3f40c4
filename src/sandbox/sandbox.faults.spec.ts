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
    it('success: completes at once without the payer and notifies', async () => {
      const { id, call } = create('card_rub[mock_server,success]');
      const r = await call;
      expect(r.data).toMatchObject({ method: null, url: null });
      expect(await shop.status(id)).toBe(4);
      const [n] = await waitFor(() => receiver.of('shop_order_id', id), 3000, 'the notification');
      expect(n.fields).toMatchObject({
        status: 'success',
        payway: 'card_rub[mock_server,success]',
      });
      expect(notificationSignOk(n.fields)).toBe(true);
    });

    it('decline: rejected at once and notified as rejected', async () => {
      const { id, call } = create('card_rub[mock_server,decline]');
      expect((await call).result).toBe(true);
      expect(await shop.status(id)).toBe(6);
      const [n] = await waitFor(() => receiver.of('shop_order_id', id), 3000, 'the notification');
      expect(n.fields.status).toBe('rejected');
    });

    it('pending: the payer’s Pay leaves it waiting, for ever', async () => {
      const { id, call } = create('card_rub[pending]', { client_info: {} });
      const r = await call;
      const page = await postForm(`${r.data.url as string}/complete`, { action: 'pay' });
      expect(page.text).toContain('being processed');
      expect(await shop.status(id)).toBe(2);
    });

    it('nonfatal: code 100 "Temporary error, try later", yet the invoice completes later and notifies', async () => {
      const { id, call } = create('card_rub[nonfatal]');
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
      const { id, call } = create('card_rub[fatal]');
      expect(await call).toMatchObject({ result: false, error_code: 10 });
      expect((await shop.check(id)).error_code).toBe(7);
    });

    it('server_error (http500 in a payway’s letters): an HTML 500 page, nothing created', async () => {
      const { id, call } = create('card_rub[server_error]');
      const r = await call;
      expect(r.status).toBe(500);
      expect(r.text).toContain('<html>');
      expect((await shop.check(id)).error_code).toBe(7);
    });

    it('reset: the connection is destroyed without an answer, nothing created', async () => {
      const { id, call } = create('card_rub[reset]');
      await noAnswer(call);
      expect((await shop.check(id)).error_code).toBe(7);
    });

    it('reset_done: the connection is destroyed, but the invoice exists', async () => {
      const { id, call } = create('card_rub[reset_done]');
      await noAnswer(call);
      expect(await shop.status(id)).toBe(2);
    });

    it('timeout_done: the answer comes after the set delay; the invoice was made at once', async () => {
      await shop.control('POST', '/settings', { timeoutDelayMs: 200 });
      try {
        const { id, call } = create('card_rub[timeout_done]');
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
        delayMs: 500,
      });
      const id = uniqueId('f');
      const started = Date.now();
      await noAnswer(
        shop.call(
          'invoice/create',
          { shop_order_id: id, amount: '100.00', currency: 643, payway: 'card_rub' },
          { signal: AbortSignal.timeout(100) },
        ),
      );
      expect(Date.now() - started).toBeLessThan(450);
      expect(await shop.status(id)).toBe(2);
    });

    it('timeout_not_done: a late 504 page, nothing created', async () => {
      await shop.control('POST', '/faults', {
        path: 'invoice/create',
        fault: 'timeout_not_done',
        delayMs: 150,
      });
      const { id, call } = create('card_rub');
      const started = Date.now();
      const r = await call;
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      expect(r.status).toBe(504);
      expect((await shop.check(id)).error_code).toBe(7);
    });
  });

  describe('queued faults', () => {
    it('hit the next N calls of the path, then calls are normal again', async () => {
      await shop.control('POST', '/faults', { path: 'invoice/check', fault: 'http500', times: 2 });
      const { id, call } = create('card_rub');
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
        payway: 'card_rub',
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
        payway: 'card_rub',
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
      expect(text).not.toContain('987');
      expect(text).not.toContain('"sign"');
      expect(asText((log[0].body as Record<string, unknown>).shop_order_id)).toBe(id);
    });
  });
});
