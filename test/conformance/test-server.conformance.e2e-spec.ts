import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { admin, auth, SECRET, startTestApp, TestContext } from '../support/app';

/**
 * Conformance with the gateway's test server. A small fake gateway answers every call with a
 * fixed text written from `shared/spec/gateway-facts.md` ("What the test server's answers look
 * like"): the shapes and number formats as recorded there (Python-style JSON with `: ` and `, `,
 * suffixed aliases each a payway of its own, money as JSON numbers such as `100000.0` and `5.0`,
 * `percent_part` once as the text "1.0", `is_active` as JSON true, `add_ons_config` null, offset-less
 * times, a card payway's GET checkout redirect with `session_id`, payout status 3 with
 * `payee_receive` and `shop_write_off`, the two error answers), with our own values. The service
 * is driven through every call over real HTTP against it.
 */

const CARD = 'card_core_payin_rub[mock_server,success_with_callback]';
const CARD_TIMEOUT = 'card_core_payin_rub[mock_server,timeout_error]';
const WALLET = 'qiwi_wallet_rub[mock_server,success]';
const TO_WALLET = 'qiwi_topup_rub_to_wallet[mock_server,success]';
const TO_WALLET_FAIL = 'qiwi_topup_rub_to_wallet[mock_server,fail]';

const INPUT_CONFIG = `{"data": [{"id": 1, "name": "Bank cards", "payways": [{"add_ons_config": null, "alias": "${CARD}", "currency": 643, "fee_config": {"fix": 0.0, "percent": 5.0}, "fee_part_config": {"fix_part": 0.0, "percent_part": "1.0"}, "id": 201, "is_active": true, "max_amount": 100000.0, "min_amount": 10.0}, {"add_ons_config": null, "alias": "${CARD_TIMEOUT}", "currency": 643, "fee_config": {"fix": 0.0, "percent": 5.0}, "fee_part_config": {"fix_part": 0.0, "percent_part": 1.0}, "id": 204, "is_active": true, "max_amount": 100000.0, "min_amount": 10.0}], "rating": 1}, {"id": 2, "name": "QIWI", "payways": [{"add_ons_config": {}, "alias": "${WALLET}", "currency": 643, "fee_config": {"fix": 0.0, "percent": 0.0}, "fee_part_config": {"fix_part": 0.0, "percent_part": 0.0}, "id": 301, "is_active": true, "max_amount": 15000.0, "min_amount": 1.0}], "rating": 2}], "error_code": 0, "message": "Ok", "result": true}`;

const OUTPUT_CONFIG = `{"data": [{"id": 3, "name": "QIWI", "payways": [{"account_info_config": {"account": {"regex": "^\\\\+?7\\\\d{10}$", "title": "Phone number"}}, "alias": "${TO_WALLET}", "currency": 643, "fee_config": {"fix": 5.0, "percent": 0.0}, "max_amount": 15000.0, "min_amount": 10.0, "paysystem_data": {}}, {"account_info_config": {"account": {"regex": "^\\\\+?7\\\\d{10}$", "title": "Phone number"}}, "alias": "${TO_WALLET_FAIL}", "currency": 643, "fee_config": {"fix": 5.0, "percent": 0.0}, "max_amount": 15000.0, "min_amount": 10.0, "paysystem_data": {}}], "rating": 1}], "error_code": 0, "message": "Ok", "result": true}`;

/** invoice/try of 100.00 USD on the RUB card payway, priced in roubles as the test server did. */
const INVOICE_TRY = `{"data": {"add_ons_config": {}, "info": {}, "manual": {}, "payer_price": 27051.71, "paymethod_id": 1, "paymethod_name": "Bank card", "ps_currency": 643, "warning": {}}, "error_code": 0, "message": "Ok", "result": true}`;

const INVOICE_CREATE = `{"data": {"data": {"session_id": "cs_4f1e2d3c"}, "id": 71234567, "method": "GET", "url": "https://checkout.test-server.example/pay"}, "error_code": 0, "message": "Ok", "result": true}`;

// As on the test server (gateway-facts.md), the check's payment_id is the create answer's id.
const INVOICE_CHECK = `{"data": {"client_price": 105.0, "created": "2023-07-18T13:20:02", "description": "Conformance", "error_code": 0, "expires_at": "2023-07-19T13:20:02", "is_unique": true, "payment_id": 71234567, "payment_token": null, "payway": "${CARD}", "processed": "2023-07-18T13:23:41", "ps_currency": 643, "ps_data": "{}", "settlement_currency": 643, "settlement_rate": null, "shop_amount": 100.0, "shop_currency": 643, "shop_id": 356, "shop_order_id": "{{shop_order_id}}", "shop_refund": 0.0, "status": 4, "updated": "2023-07-18T13:23:41"}, "error_code": 0, "message": "Ok", "result": true}`;

const SHOP_BALANCE = `{"data": {"balances": [{"available": 1000.5, "currency": 643, "frozen": 0.0, "hold": 0.0}], "shop_id": 357}, "error_code": 0, "message": "Ok", "result": true}`;

const WITHDRAW_TRY = `{"data": {"account_info_config": {"account": {"regex": "^\\\\+?7\\\\d{10}$", "title": "Phone number"}}, "payee_receive": 100.0, "ps_currency": 643, "shop_currency": 643, "shop_write_off": 105.0}, "error_code": 0, "message": "Ok", "result": true}`;

const CHECK_ACCOUNT = `{"data": {"account_info": {"name": "Ivan I."}, "result": true}, "error_code": 0, "message": "Ok", "result": true}`;

const WITHDRAW_CREATE = `{"data": {"balance": 895.5, "id": 5551234, "payee_receive": 100.0, "ps_currency": 643, "shop_currency": 643, "shop_payment_id": "{{shop_payment_id}}", "shop_write_off": 105.0, "status": 3}, "error_code": 0, "message": "Ok", "result": true}`;

const WITHDRAW_STATUS = `{"data": {"bank_transaction_id": "bt-1", "error_code": 0, "id": 5551234, "payee_receive": 100.0, "ps_currency": 643, "rrn": "123456789012", "shop_currency": 643, "shop_payment_id": "{{shop_payment_id}}", "shop_write_off": 105.0, "status": 5}, "error_code": 0, "message": "Ok", "result": true}`;

const SHOP_NOT_FOUND = `{"data": null, "error_code": 11, "message": "Shop (id = 1001) is not found", "result": false}`;

/** A wrong secret: error 10 quoting the string the server signed (ours, with its secret). */
function badSignature(body: Record<string, unknown>): string {
  const signed = `${String(body.amount)}:${String(body.currency)}:${String(body.payway)}:${String(body.shop_id)}:${String(body.shop_order_id)}`;
  return JSON.stringify({
    data: null,
    error_code: 10,
    message: `Incorrect values for parameters. Sign string: ${signed}${SECRET}`,
    result: false,
  });
}

const ANSWERS: Record<string, string> = {
  'shop_input_config/shop': INPUT_CONFIG,
  'shop_output_config/shop': OUTPUT_CONFIG,
  'invoice/try': INVOICE_TRY,
  'invoice/create': INVOICE_CREATE,
  'invoice/check': INVOICE_CHECK,
  shop_balance: SHOP_BALANCE,
  'withdraw/try': WITHDRAW_TRY,
  check_account: CHECK_ACCOUNT,
  'withdraw/create': WITHDRAW_CREATE,
  'withdraw/status': WITHDRAW_STATUS,
  'withdraw/shop_payment_status': WITHDRAW_STATUS,
};

interface Received {
  path: string;
  body: Record<string, unknown>;
}

/** The fake test server: fixed answers by path, placeholders filled from the request. */
class FakeTestServer {
  readonly received: Received[] = [];
  /** Paths answered with one of the error texts instead. */
  readonly failing = new Map<string, (body: Record<string, unknown>) => string>();
  private server!: Server;
  baseUrl = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}/gateway/v1/`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  calls(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      const path = (req.url ?? '').replace(/^\/gateway\/v1\//, '');
      const body = JSON.parse(text) as Record<string, unknown>;
      this.received.push({ path, body });
      const failure = this.failing.get(path);
      const template = failure ? failure(body) : ANSWERS[path];
      if (template === undefined) {
        res.writeHead(404).end();
        return;
      }
      const answer = template.replace(/\{\{(\w+)\}\}/g, (_m, field: string) =>
        JSON.stringify(String(body[field] ?? '')).slice(1, -1),
      );
      // The test server answers errors with HTTP 400 as often as with 200.
      res.writeHead(failure ? 400 : 200, { 'Content-Type': 'application/json' });
      res.end(answer);
    });
  }
}

describe('conformance with the test server’s recorded answers', () => {
  const fake = new FakeTestServer();
  let ctx: TestContext;

  beforeAll(async () => {
    await fake.start();
    ctx = await startTestApp({ env: { GATEWAY_BASE_URL: fake.baseUrl } });
  });
  afterAll(async () => {
    await ctx?.close();
    await fake.close();
  });
  beforeEach(() => fake.failing.clear());

  it('parses the payment and payout lists exactly: suffixed aliases, JSON-number money, "1.0", true, null', async () => {
    const pay = await ctx.http.get('/api/v1/payways?direction=payment').set(auth()).expect(200);
    const payways = (pay.body.groups as Array<{ payways: Array<Record<string, unknown>> }>).flatMap(
      (g) => g.payways,
    );
    expect(payways.map((p) => p.alias)).toEqual([CARD, CARD_TIMEOUT, WALLET]);
    // In camelCase like every answer; the money exact, never a float's, written with the
    // currency's minor-unit digits (a percentage or a fee share as the gateway sent it).
    expect(payways[0]).toEqual({
      id: 201,
      alias: CARD,
      currency: 643,
      minAmount: '10.00',
      maxAmount: '100000.00',
      feeConfig: { fix: '0.00', percent: '5.0' },
      feePartConfig: { fixPart: '0.0', percentPart: '1.0' },
      isActive: true,
      addOnsConfig: {},
    });
    expect(payways[2]).toMatchObject({ minAmount: '1.00', feePartConfig: { percentPart: '0.0' } });
    const out = await ctx.http.get('/api/v1/payways?direction=payout').set(auth()).expect(200);
    const outways = (out.body.groups as Array<{ payways: Array<Record<string, unknown>> }>).flatMap(
      (g) => g.payways,
    );
    expect(outways.map((p) => p.alias)).toEqual([TO_WALLET, TO_WALLET_FAIL]);
    expect(outways[0]).toEqual({
      alias: TO_WALLET,
      currency: 643,
      minAmount: '10.00',
      maxAmount: '15000.00',
      feeConfig: { fix: '5.00', percent: '0.0' },
      accountInfoConfig: { account: { regex: '^\\+?7\\d{10}$', title: 'Phone number' } },
      paysystemData: {},
    });
  });

  it('quotes USD on the RUB payway at the gateway’s price, the payway matched exactly', async () => {
    const res = await ctx.http
      .post('/api/v1/invoices/quote')
      .set(auth())
      .send({ shopOrderId: 'conf-quote', amount: '100.00', currency: 840, payway: CARD })
      .expect(200);
    expect(res.body).toMatchObject({ payerPrice: '27051.71', psCurrency: 643 });
    expect(fake.calls('invoice/try').at(-1)?.body).toMatchObject({ payway: CARD, currency: 840 });
    const bare = await ctx.http
      .post('/api/v1/invoices/quote')
      .set(auth())
      .send({
        shopOrderId: 'conf-quote-2',
        amount: '100.00',
        currency: 643,
        payway: 'card_core_payin_rub',
      });
    expect(bare.status).toBe(400);
    expect(bare.body.errors[0].field).toBe('payway');
  });

  it('creates an invoice answered with a GET checkout redirect, then takes the check’s word', async () => {
    const created = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId: 'conf-inv-1',
        amount: '100.00',
        currency: 643,
        payway: CARD,
        description: 'Conformance',
      })
      .expect(201);
    expect(created.body).toMatchObject({
      status: 'awaiting_payer',
      invoiceId: '71234567',
      redirect: {
        method: 'GET',
        url: 'https://checkout.test-server.example/pay',
        params: { session_id: 'cs_4f1e2d3c' },
      },
    });
    const payUrl = new URL(String(created.body.payUrl));
    const page = await ctx.http
      .get(payUrl.pathname + payUrl.search)
      .redirects(0)
      .expect(302);
    expect(page.headers.location).toBe(
      'https://checkout.test-server.example/pay?session_id=cs_4f1e2d3c',
    );

    const checked = await ctx.http
      .get('/api/v1/invoices/conf-inv-1?refresh=true')
      .set(auth())
      .expect(200);
    expect(checked.body).toMatchObject({
      status: 'succeeded',
      gatewayStatus: 4,
      paymentId: '71234567',
      refundedAmount: '0.00',
      // "2023-07-18T13:23:41" carries no offset: the gateway's +03:00.
      processedAt: '2023-07-18T10:23:41.000Z',
    });
    expect(fake.calls('invoice/check').at(-1)?.body.shop_order_id).toBe('conf-inv-1');
  });

  it('reads the balance with its amounts exactly', async () => {
    const res = await ctx.http.get('/api/v1/balance').set(auth()).expect(200);
    expect(res.body.balances).toEqual([
      { currency: 643, available: '1000.50', hold: '0.00', frozen: '0.00', total: '1000.50' },
    ]);
  });

  it('quotes, checks the account, creates a payout (status 3) and follows it to success', async () => {
    const quote = await ctx.http
      .post('/api/v1/payouts/quote')
      .set(auth())
      .send({ amount: '100.00', amountType: 'ps_amount', shopCurrency: 643, payway: TO_WALLET })
      .expect(200);
    expect(quote.body).toMatchObject({
      payeeReceive: '100.00',
      shopWriteOff: '105.00',
      psCurrency: 643,
    });

    const account = await ctx.http
      .post('/api/v1/payouts/check-account')
      .set(auth())
      .send({ payway: TO_WALLET, amount: '100.00', account: '+79001234567' })
      .expect(200);
    expect(account.body).toEqual({ exists: true, accountInfo: { name: 'Ivan I.' } });

    const created = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({
        shopPaymentId: 'conf-po-1',
        amount: '100.00',
        amountType: 'ps_amount',
        shopCurrency: 643,
        payway: TO_WALLET,
        account: '+79001234567',
      })
      .expect(202);
    expect(created.body).toMatchObject({
      status: 'processing',
      gatewayStatus: 3,
      withdrawId: '5551234',
      payeeReceive: '100.00',
      shopWriteOff: '105.00',
    });
    expect(fake.calls('withdraw/create').at(-1)?.body).toMatchObject({
      payway: TO_WALLET,
      shop_payment_id: 'conf-po-1',
    });

    const settled = await ctx.http
      .post('/api/v1/admin/payouts/conf-po-1/reconcile')
      .set(admin())
      .expect((r) => expect(r.status).toBeLessThan(300));
    expect(settled.body).toMatchObject({ status: 'succeeded', gatewayStatus: 5 });
  });

  it('surfaces "shop not found" as problem+json with the gateway’s code', async () => {
    fake.failing.set('shop_balance', () => SHOP_NOT_FOUND);
    const res = await ctx.http.get('/api/v1/balance').set(auth());
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.body).toMatchObject({ gatewayErrorCode: 11, fatal: true });
  });

  it('surfaces a bad signature as problem+json with code 10, without the quoted string-to-sign', async () => {
    fake.failing.set('invoice/try', badSignature);
    const res = await ctx.http
      .post('/api/v1/invoices/quote')
      .set(auth())
      .send({ shopOrderId: 'conf-sig', amount: '100.00', currency: 643, payway: CARD });
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.body).toMatchObject({ gatewayErrorCode: 10, fatal: true });
    expect(res.body.gatewayMessage).toContain('Incorrect values for parameters');
    const text = JSON.stringify(res.body);
    for (const leak of [
      SECRET,
      `100.00:643:${CARD}`,
      String(fake.calls('invoice/try').at(-1)?.body.sign),
    ])
      expect(text).not.toContain(leak);
  });
});
