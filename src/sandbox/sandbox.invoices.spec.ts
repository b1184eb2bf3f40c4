// Over 500 lines on purpose: one sandbox, started once, serves all its tests of the invoice
// operations.
import type { SandboxHandle } from './sandbox.server';
import {
  asText,
  nowText,
  postForm,
  signRequest,
  startTestSandbox,
  TestShop,
  uniqueId,
  waitFor,
} from './testing/sandbox-test-kit';
import { PAYMENT, PAYOUT } from '../../test/support/payways';

/** The sandbox's card payway that sends the payer by a POST form straight to its steps. */
const POST_CARD = PAYMENT.sandboxCard('post_redirect');

const CARD = {
  number: '4111111111111111',
  cardholder: 'TEST PAYER',
  expiry_month: '12',
  expiry_year: '30',
  cvv: '123',
};

describe('sandbox: payments', () => {
  let sandbox: SandboxHandle;
  let shop: TestShop;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    shop = new TestShop(sandbox);
  });
  afterAll(() => sandbox.close());

  describe('request checks', () => {
    it('rejects a wrong signature with result false, code 10, HTTP 400', async () => {
      const body = shop.signed('invoice/create', {
        shop_order_id: uniqueId('o'),
        amount: '100.00',
        currency: 643,
        payway: POST_CARD,
      });
      const r = await shop.post('invoice/create', JSON.stringify({ ...body, amount: '100.01' }));
      expect(r).toMatchObject({
        status: 400,
        result: false,
        error_code: 10,
        message: 'Incorrect values for parameters',
      });
      expect(sandbox.state.invoices.size).toBe(0);
    });

    it('signs values as transmitted: a shop_id sent as text is signed as that text', async () => {
      const fields = {
        shop_id: '1001',
        shop_order_id: uniqueId('o'),
        amount: '100.00',
        currency: 643,
        payway: POST_CARD,
      };
      const sign = signRequest(fields, [
        'amount',
        'currency',
        'payway',
        'shop_id',
        'shop_order_id',
      ]);
      const r = await shop.post('invoice/create', JSON.stringify({ ...fields, sign }));
      expect(r.result).toBe(true);
    });

    it('answers an unknown shop with code 11', async () => {
      const other = new TestShop(sandbox, 999);
      const r = await other.call('shop_balance', { now: nowText() });
      expect(r).toMatchObject({ result: false, error_code: 11 });
    });

    it('requires POST with Content-Type application/json', async () => {
      const body = JSON.stringify(shop.signed('shop_balance', { now: nowText() }));
      const asForm = await shop.post('shop_balance', body, { contentType: 'text/plain' });
      expect(asForm).toMatchObject({ status: 400, result: false, error_code: 10 });
      const get = await fetch(`${sandbox.baseUrl}shop_balance`);
      expect(get.status).toBe(405);
    });

    it.each([
      ['an inactive payway', { payway: PAYMENT.inactive }],
      ['an unknown payway', { payway: 'nothing_rub' }],
      ['a listed payway without its scenario suffix', { payway: 'card_core_payin_rub' }],
      [
        'a scenario the catalogue does not list',
        { payway: 'card_core_payin_rub[mock_server,fail]' },
      ],
      ['a payway outside its character set', { payway: 'card-rub' }],
      ['an amount below the minimum', { amount: '9.99' }],
      ['an amount above the maximum', { amount: '500000.01' }],
      ['an amount sent as a number', { amount: 100 }],
      ['an amount with three decimals', { amount: '100.001' }],
      ['a currency with no conversion rate', { currency: 978, payway: PAYMENT.cardUsd }],
      ['a description over 255 characters', { description: 'x'.repeat(256) }],
      ['a shop_order_id over 255 characters', { shop_order_id: 'x'.repeat(256) }],
      ['a payway over 150 characters', { payway: 'card_core_payin_rub[' + 'a'.repeat(150) + ']' }],
      ['a wallet payment without its phone add-on', { payway: PAYMENT.wallet }],
      [
        'a wallet phone that does not match the add-on pattern',
        { payway: PAYMENT.wallet, phone: '12345' },
      ],
      ['an invalid card number', { card: { ...CARD, number: '4111111111111112' } }],
    ])('rejects %s with code 10', async (_name, fields) => {
      const r = await shop.createInvoice({
        payway: POST_CARD,
        shop_order_id: uniqueId('o'),
        ...fields,
      });
      expect(r).toMatchObject({ status: 400, result: false, error_code: 10 });
    });

    it('rejects a reused shop_order_id with code 6 and keeps the first invoice', async () => {
      const id = uniqueId('dup');
      const first = await shop.createInvoice({ payway: POST_CARD, shop_order_id: id });
      const again = await shop.createInvoice({
        payway: POST_CARD,
        shop_order_id: id,
        amount: '200.00',
      });
      expect(first.result).toBe(true);
      expect(again).toMatchObject({ result: false, error_code: 6 });
      expect(again.message).toBe(`shop_order_id "${id}" is not unique`);
      expect(asText((await shop.check(id)).data.shop_amount)).toBe('100.00');
    });

    it('answers invoice/check of an unknown order with code 7', async () => {
      const r = await shop.check(uniqueId('none'));
      expect(r).toMatchObject({ result: false, error_code: 7 });
    });
  });

  describe('invoice/try', () => {
    it.each([
      [PAYMENT.card, '100.10', 643, '102.60'], // 100.10 + 2.5% = 102.6025
      [PAYMENT.card, '10.00', 643, '10.25'],
      [PAYMENT.card, '33.33', 643, '34.16'], // 34.16325
      [PAYMENT.card, '0.1', 643, null],
      [PAYMENT.cardUsd, '10.00', 840, '10.65'], // 3.5% + 0.30
      [PAYMENT.cardUsd, '1.30', 840, '1.65'], // 1.30 + 0.0455 + 0.30 = 1.6455 → 1.65 (half-up)
      [PAYMENT.wallet, '100.00', 643, '104.00'], // 1.5% + half of 5
      [PAYMENT.card, '100.00', 840, '9481.25'], // USD on a RUB payway: 9250.00 at 92.5, + 2.5%
      [PAYMENT.card, '0.10', 840, null], // 9.25 RUB: under the RUB payway's minimum
      [PAYMENT.cardUsd, '100.00', 643, '1.42'], // 1.08 USD at 0.0108, + 3.5% + 0.30
    ])(
      '%s %s: payer_price %s written with its decimals',
      async (payway, amount, currency, price) => {
        const r = await shop.call('invoice/try', {
          shop_order_id: uniqueId('t'),
          amount,
          currency,
          payway,
        });
        if (price === null) {
          expect(r.error_code).toBe(10);
          return;
        }
        expect(r.result).toBe(true);
        expect(r.text).toContain(`"payer_price":${price}`);
        expect(r.data).toMatchObject({
          paymethod_name: expect.any(String),
          info: expect.any(Object),
        });
      },
    );

    it('returns the add-on fields of a wallet', async () => {
      const r = await shop.call('invoice/try', {
        shop_order_id: uniqueId('t'),
        amount: '50.00',
        currency: 643,
        payway: PAYMENT.wallet,
      });
      expect(r.data.add_ons_config).toMatchObject({
        phone: { regex: '^\\+?7\\d{10}$', label: { en: 'Phone number', ru: expect.any(String) } },
      });
    });
  });

  describe('configuration calls', () => {
    it('lists payment payways as the test server does: suffixed aliases, JSON numbers, null add-ons', async () => {
      const r = await shop.call('shop_input_config/shop', { now: nowText() });
      expect(r.result).toBe(true);
      const payways = r.list.flatMap((g) => g.payways as Record<string, unknown>[]);
      const aliases = payways.map((p) => p.alias);
      expect(aliases).toEqual(
        expect.arrayContaining([
          PAYMENT.card,
          PAYMENT.cardSuccess,
          PAYMENT.wallet,
          PAYMENT.inactive,
        ]),
      );
      expect(new Set(payways.map((p) => asText(p.id))).size).toBe(payways.length);
      expect(payways.find((p) => p.alias === PAYMENT.inactive)?.is_active).toBe(false);
      expect(payways.find((p) => p.alias === PAYMENT.card)?.is_active).toBe(true);
      expect(r.text).toContain(
        `"alias":"${PAYMENT.card}","currency":643,"min_amount":10.0,"max_amount":500000.0,` +
          '"fee_config":{"percent":2.5,"fix":0.0},"fee_part_config":{"percent_part":"1.0","fix_part":1.0},' +
          '"is_active":true,"add_ons_config":null}',
      );
      // The sandbox's own behaviour settings are not part of the listing.
      expect(r.text).not.toContain('"kind"');
    });

    it('lists payout payways with their account_info_config', async () => {
      const r = await shop.call('shop_output_config/shop', { now: nowText() });
      const card = r.list
        .flatMap((g) => g.payways as Record<string, unknown>[])
        .find((p) => p.alias === PAYOUT.card);
      expect(card?.account_info_config).toEqual({
        account: { regex: '^\\d{16,19}$', title: 'Card number' },
      });
      expect(r.text).toContain('"min_amount":100.0');
    });
  });

  describe('the payer', () => {
    it('card payway answers like the real one: GET, a checkout URL, data.session_id; the checkout leads to the payer page', async () => {
      const id = uniqueId('checkout');
      const created = await shop.createInvoice({
        shop_order_id: id,
        payway: PAYMENT.card,
        client_info: { browser_language: 'en' },
      });
      expect(created.data).toMatchObject({
        method: 'GET',
        url: `${sandbox.origin}/sandbox/checkout`,
        data: { session_id: expect.stringMatching(/^cs_[0-9a-f]+$/) },
      });
      const query = new URLSearchParams(created.data.data as Record<string, string>).toString();
      const checkout = await fetch(`${created.data.url as string}?${query}`, {
        redirect: 'manual',
      });
      expect(checkout.status).toBe(303);
      expect(checkout.headers.get('location')).toBe(
        `${sandbox.origin}/sandbox/pay/${asText(created.data.id)}`,
      );
      const unknown = await fetch(`${created.data.url as string}?session_id=cs_nobody`);
      expect(unknown.status).toBe(404);
      await postForm(`${sandbox.origin}/sandbox/pay/${asText(created.data.id)}/complete`, {
        action: 'pay',
      });
      expect(await shop.status(id)).toBe(4);
    });

    it('card payway: POST redirect through browser-info collection, then the payer page, Pay → paid', async () => {
      const id = uniqueId('card');
      const created = await shop.createInvoice({
        payway: POST_CARD,
        shop_order_id: id,
        amount: '100.10',
        description: 'Tea & <cups>',
        success_url: 'https://shop.test/ok',
      });
      expect(created.data).toMatchObject({
        method: 'POST',
        url: expect.stringContaining('/sandbox/browser-info/'),
      });
      const data = created.data.data as Record<string, string>;
      expect(await shop.status(id)).toBe(2);

      const collect = await postForm(created.data.url as string, data);
      expect(collect.text).toContain('id="collect"');
      expect(collect.text).toContain(
        `action="/sandbox/browser-info/${asText(created.data.id)}/submit"`,
      );
      const after = await postForm(`${created.data.url as string}/submit`, {
        browser_language: 'en-GB',
        browser_tz: '0',
        browser_javascript_enabled: 'true',
      });
      expect(after.status).toBe(303);
      expect(after.location).toBe(`${sandbox.origin}/sandbox/pay/${asText(created.data.id)}`);

      const page = await fetch(after.location ?? '');
      const html = await page.text();
      expect(html).toContain('id="pay"');
      expect(html).toContain('id="decline"');
      expect(html).toContain('100.10 RUB');
      expect(html).toContain('Tea &#38; &#60;cups&#62;');

      const result = await postForm(
        `${sandbox.origin}/sandbox/pay/${asText(created.data.id)}/complete`,
        { action: 'pay' },
      );
      expect(result.text).toContain('Payment successful');
      expect(result.text).toContain('href="https://shop.test/ok"');
      expect(await shop.status(id)).toBe(4);
    });

    it('card payway with client_info: straight to the payer page; Decline → rejected', async () => {
      const id = uniqueId('card');
      const created = await shop.createInvoice({
        payway: POST_CARD,
        shop_order_id: id,
        client_info: { browser_language: 'en' },
        failed_url: 'https://shop.test/failed',
      });
      expect(created.data.url).toBe(`${sandbox.origin}/sandbox/pay/${asText(created.data.id)}`);
      const page = await postForm(
        created.data.url as string,
        created.data.data as Record<string, string>,
      );
      expect(page.text).toContain('id="pay"');
      const result = await postForm(`${created.data.url as string}/complete`, {
        action: 'decline',
      });
      expect(result.text).toContain('Payment declined');
      expect(result.text).toContain('href="https://shop.test/failed"');
      expect(await shop.status(id)).toBe(6);
    });

    it('wallet payway: GET redirect with the data as query', async () => {
      const id = uniqueId('wallet');
      const created = await shop.createInvoice({
        shop_order_id: id,
        payway: PAYMENT.wallet,
        phone: '+79001234567',
      });
      expect(created.data.method).toBe('GET');
      const query = new URLSearchParams(created.data.data as Record<string, string>).toString();
      const page = await fetch(`${created.data.url as string}?${query}`);
      expect(await page.text()).toContain('id="pay"');
    });

    it('card data: 3-D Secure page with Confirm; nothing of the card kept but its mask', async () => {
      const id = uniqueId('3ds');
      const created = await shop.createInvoice({
        payway: POST_CARD,
        shop_order_id: id,
        card: CARD,
        client_info: { browser_language: 'en' },
      });
      expect(created.data.url).toBe(`${sandbox.origin}/sandbox/3ds/${asText(created.data.id)}`);
      const page = await postForm(
        created.data.url as string,
        created.data.data as Record<string, string>,
      );
      expect(page.text).toContain('id="confirm"');
      expect(page.text).toContain('411111******1111');
      await postForm(`${created.data.url as string}/complete`, { action: 'confirm' });
      expect(await shop.status(id)).toBe(4);
      const stored = JSON.stringify(
        [...sandbox.state.invoices.values()].map((i) => ({ ...i, amount: '', clientPrice: '' })),
      );
      expect(stored).not.toContain('4111111111111111');
      expect(stored).not.toContain('"123"');
    });

    it('card data without client_info: browser information first, then 3-D Secure', async () => {
      const created = await shop.createInvoice({
        payway: POST_CARD,
        shop_order_id: uniqueId('3ds'),
        card: CARD,
      });
      expect(created.data.url).toContain('/sandbox/browser-info/');
      const after = await postForm(`${created.data.url as string}/submit`, {
        browser_language: 'en',
      });
      expect(after.location).toContain('/sandbox/3ds/');
    });

    it('the control API pays and declines on the payer’s behalf', async () => {
      const paid = uniqueId('ctl');
      const declined = uniqueId('ctl');
      const a = await shop.createInvoice({ payway: POST_CARD, shop_order_id: paid });
      const b = await shop.createInvoice({ payway: POST_CARD, shop_order_id: declined });
      await shop.control('POST', `/invoices/${asText(a.data.id)}/pay`);
      await shop.control('POST', `/invoices/${asText(b.data.id)}/decline`);
      expect(await shop.status(paid)).toBe(4);
      expect(await shop.status(declined)).toBe(6);
      await expect(shop.control('POST', `/invoices/${asText(a.data.id)}/decline`)).rejects.toThrow(
        '409',
      );
    });

    it('a completed invoice’s page shows its result and cannot be paid again', async () => {
      const id = uniqueId('done');
      const c = await shop.createInvoice({ payway: POST_CARD, shop_order_id: id });
      await shop.control('POST', `/invoices/${asText(c.data.id)}/decline`);
      const again = await postForm(`${sandbox.origin}/sandbox/pay/${asText(c.data.id)}/complete`, {
        action: 'pay',
      });
      expect(again.text).toContain('Payment declined');
      expect(await shop.status(id)).toBe(6);
    });
  });

  describe('invoice/check', () => {
    it('returns the full record with exact amounts', async () => {
      const id = uniqueId('chk');
      await shop.createInvoice({
        payway: POST_CARD,
        shop_order_id: id,
        amount: '100.10',
        description: 'Order',
      });
      const r = await shop.check(id);
      expect(r.text).toContain('"shop_amount":100.10');
      expect(r.text).toContain('"client_price":102.60');
      expect(r.text).toContain('"shop_refund":0.00');
      expect(r.data).toMatchObject({
        shop_order_id: id,
        payway: POST_CARD,
        description: 'Order',
        ps_data: '{}',
        is_unique: true,
        payment_token: null,
        expires_at: expect.stringMatching(/\+03:00$/),
        created: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+03:00$/),
      });
    });
  });

  describe('two-step payment', () => {
    async function held(): Promise<{ id: string; invoiceId: string }> {
      const id = uniqueId('hold');
      const c = await shop.createInvoice(
        { payway: POST_CARD, shop_order_id: id, amount: '300.00' },
        'invoice/hold',
      );
      expect(c.data.method).toBe('POST');
      await shop.control('POST', `/invoices/${asText(c.data.id)}/pay`);
      expect(await shop.status(id)).toBe(8);
      return { id, invoiceId: asText(c.data.id) };
    }

    async function rubBalance(): Promise<Record<string, string>> {
      const r = await shop.call('shop_balance', { now: nowText() });
      const rub = r.data.balances as Record<string, unknown>[];
      const b = rub.find((x) => asText(x.currency) === '643') ?? {};
      return { available: asText(b.available), hold: asText(b.hold) };
    }

    it('hold → charge → paid; the held amount moves from hold to available', async () => {
      const before = await rubBalance();
      const { id, invoiceId } = await held();
      expect((await rubBalance()).hold).not.toBe(before.hold);
      const charged = await shop.call('invoice/charge', {
        invoice_id: Number(invoiceId),
        now: nowText(),
      });
      expect(charged.result).toBe(true);
      expect(asText(charged.data.status)).toBe('4');
      expect(charged.data).not.toHaveProperty('expires_at');
      expect(await shop.status(id)).toBe(4);
      expect((await rubBalance()).hold).toBe(before.hold);
      const again = await shop.call('invoice/charge', {
        invoice_id: Number(invoiceId),
        now: nowText(),
      });
      expect(again).toMatchObject({ result: false, error_code: 10 });
    });

    it('hold → unhold → rejected; unhold of a non-held invoice is refused', async () => {
      const { id, invoiceId } = await held();
      const r = await shop.call('invoice/unhold', {
        invoice_id: Number(invoiceId),
        now: nowText(),
      });
      expect(r.result).toBe(true);
      expect(await shop.status(id)).toBe(6);
      const again = await shop.call('invoice/unhold', {
        invoice_id: Number(invoiceId),
        now: nowText(),
      });
      expect(again).toMatchObject({ result: false, error_code: 10 });
    });

    it('charge only after a hold', async () => {
      const id = uniqueId('one');
      const c = await shop.createInvoice({ payway: POST_CARD, shop_order_id: id });
      await shop.control('POST', `/invoices/${asText(c.data.id)}/pay`);
      const r = await shop.call('invoice/charge', {
        invoice_id: Number(asText(c.data.id)),
        now: nowText(),
      });
      expect(r).toMatchObject({ result: false, error_code: 10 });
    });

    it('a wallet payway does not do two-step payments', async () => {
      const r = await shop.createInvoice(
        { shop_order_id: uniqueId('w'), payway: PAYMENT.wallet, phone: '79001234567' },
        'invoice/hold',
      );
      expect(r).toMatchObject({ result: false, error_code: 10 });
    });
  });

  describe('payment tokens', () => {
    it('issues a token on success and charges with it without the payer', async () => {
      const first = uniqueId('tok');
      const c = await shop.createInvoice({
        payway: POST_CARD,
        shop_order_id: first,
        issue_payment_token: true,
        card: CARD,
        client_info: {},
      });
      await postForm(`${c.data.url as string}/complete`, { action: 'confirm' });
      const check = await shop.check(first);
      const token = check.data.payment_token as Record<string, unknown>;
      expect(token).toMatchObject({
        token: expect.stringMatching(/^tok_/),
        status: 'SUCCESS',
        account: '411111******1111',
        card_info: expect.objectContaining({ payment_system: 'VISA' }),
      });
      expect(JSON.parse(String(check.data.ps_data))).toMatchObject({ payment_token: token.token });

      const second = uniqueId('tok');
      const charge = await shop.createInvoice({
        payway: POST_CARD,
        shop_order_id: second,
        payment_token: token.token,
        amount: '55.00',
      });
      expect(charge.data).toMatchObject({ method: null, url: null });
      await waitFor(
        async () => (await shop.status(second)) === 4,
        3000,
        'the token charge to complete',
      );
    });

    it('refuses an unknown token', async () => {
      const r = await shop.createInvoice({
        payway: POST_CARD,
        shop_order_id: uniqueId('tok'),
        payment_token: 'tok_unknown',
      });
      expect(r).toMatchObject({ result: false, error_code: 10 });
    });
  });
});
