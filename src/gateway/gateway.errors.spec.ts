import { createServer } from 'node:net';
import { AddressInfo } from 'node:net';
import { GatewayError, GatewayTransportError, isOutcomeUnknown } from './gateway.errors';
import { GatewayService } from './gateway.service';
import { answer, FakeGateway, gatewayTestConfig, TEST_SECRET } from './testing/fake-gateway';
import { PAYMENT } from '../../test/support/payways';

let fake: FakeGateway;
let gateway: GatewayService;

// The fake answers at once; a time-out that short would take a loaded machine's slow answer
// for no answer (seen in a full run: a known-fatal code read as an open outcome). The time-out
// test below makes its own, short one.
const gatewayWithTimeout = (timeoutMs: number): GatewayService =>
  new GatewayService(
    gatewayTestConfig(fake.baseUrl, {
      GATEWAY_TIMEOUT_MS: String(timeoutMs),
      GATEWAY_FATAL_ERROR_CODES: '10,11',
      GATEWAY_NONFATAL_ERROR_CODES: '3',
    }),
  );

beforeEach(async () => {
  fake = await FakeGateway.start();
  gateway = gatewayWithTimeout(10_000);
});

afterEach(async () => {
  gateway.onModuleDestroy();
  await fake.stop();
});

const errorEnvelope = (code: number, message: string) =>
  JSON.stringify({ result: false, message, error_code: code, data: null });

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('gateway errors (result: false)', () => {
  it.each([
    [200, 10, true],
    [400, 10, true],
    [400, 3, false],
    [200, 99, null],
  ])('HTTP %i, code %i -> GatewayError with fatal %p', async (status, code, fatal) => {
    fake.respond = (_req, res) => answer(res, status, errorEnvelope(code, 'Something failed'));
    const err = await failure(gateway.checkInvoice('order-1'));
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({
      call: 'invoice/check',
      errorCode: code,
      gatewayMessage: 'Something failed',
      fatal,
      httpStatus: status,
      isDuplicate: false,
      isAbsent: false,
    });
  });

  it('carries the data of a failed refund, money as exact text', async () => {
    fake.respond = (_req, res) =>
      answer(
        res,
        200,
        '{"result":false,"message":"Refund failed","error_code":10,' +
          '"data":{"shop_refund_id":"r-1","status":"FAILED","amount":10.50}}',
      );
    const err = await failure(
      gateway.createRefund({ invoice_id: 5, amount: '10.50', shop_refund_id: 'r-1' }),
    );
    expect(err).toMatchObject({
      fatal: true,
      data: { shop_refund_id: 'r-1', status: 'FAILED', amount: '10.50' },
    });
  });

  it('flags duplicates and absent objects by the configured codes', async () => {
    fake.respond = (_req, res) =>
      answer(res, 200, errorEnvelope(6, 'shop_payment_id p-1 is not unique'));
    expect(await failure(gateway.withdrawShopPaymentStatus('p-1'))).toMatchObject({
      isDuplicate: true,
      isAbsent: false,
    });
    fake.respond = (_req, res) => answer(res, 200, errorEnvelope(7, 'Payout not found'));
    expect(await failure(gateway.withdrawShopPaymentStatus('p-1'))).toMatchObject({
      isDuplicate: false,
      isAbsent: true,
    });
  });

  it('leaves the outcome open only for money-moving calls whose code is not known fatal', async () => {
    fake.respond = (_req, res) => answer(res, 200, errorEnvelope(99, 'Unknown'));
    expect(isOutcomeUnknown(await failure(gateway.createWithdraw(payout)))).toBe(true);
    expect(isOutcomeUnknown(await failure(gateway.withdrawStatus(1)))).toBe(false);
    fake.respond = (_req, res) => answer(res, 200, errorEnvelope(10, 'Incorrect values'));
    expect(isOutcomeUnknown(await failure(gateway.createWithdraw(payout)))).toBe(false);
  });

  it('never carries the secret, the sign or an echoed string-to-sign', async () => {
    fake.respond = (req, res) =>
      answer(
        res,
        200,
        errorEnvelope(
          10,
          `Incorrect values for parameters. Sign string: 250.00:shop_amount:${PAYMENT.card}:643:1001:p-1${TEST_SECRET} sign ${String(req.body.sign)}`,
        ),
      );
    const err = await failure(gateway.createWithdraw(payout));
    const sent = fake.last().body;
    expect(err).toBeInstanceOf(GatewayError);
    const text = `${(err as GatewayError).message} ${(err as GatewayError).gatewayMessage} ${JSON.stringify(err)}`;
    expect(text).toContain('Incorrect values for parameters');
    for (const leak of [TEST_SECRET, String(sent.sign), '250.00:shop_amount', '4111111111111111']) {
      expect(text).not.toContain(leak);
    }
  });
});

describe('transport failures', () => {
  it('time-out after sending: kind timeout, outcome unknown', async () => {
    fake.respond = () => undefined; // never answers
    const short = gatewayWithTimeout(200);
    const err = await failure(short.createWithdraw(payout));
    short.onModuleDestroy();
    expect(err).toBeInstanceOf(GatewayTransportError);
    expect(err).toMatchObject({ call: 'withdraw/create', kind: 'timeout', outcomeUnknown: true });
    expect(fake.requests).toHaveLength(1);
  });

  it('connection refused: kind connect, outcome known (not processed)', async () => {
    const port = await closedPort();
    const g = new GatewayService(gatewayTestConfig(`http://127.0.0.1:${port}/gateway/v1/`));
    const err = await failure(g.createWithdraw(payout));
    g.onModuleDestroy();
    expect(err).toMatchObject({ kind: 'connect', outcomeUnknown: false, code: 'ECONNREFUSED' });
    expect(isOutcomeUnknown(err)).toBe(false);
  });

  it('socket destroyed after the request was read: kind reset, outcome unknown', async () => {
    fake.respond = (_req, _res, raw) => raw.socket.destroy();
    const err = await failure(gateway.createInvoice(invoice));
    expect(err).toMatchObject({ kind: 'reset', outcomeUnknown: true });
    expect(isOutcomeUnknown(err)).toBe(true);
  });

  it.each([
    ['an HTML 500 page', 500, '<html><body>Internal Server Error</body></html>', 'text/html'],
    ['truncated JSON', 200, '{"result":true,"data":{', 'application/json'],
    ['JSON without an envelope', 200, '{"id":1}', 'application/json'],
    [
      'result:false without an error code',
      400,
      '{"result":false,"message":"x"}',
      'application/json',
    ],
  ])('%s: kind bad_response, outcome unknown', async (_name, status, text, type) => {
    fake.respond = (_req, res) => answer(res, status, text, type);
    const err = await failure(gateway.createInvoice(invoice));
    expect(err).toBeInstanceOf(GatewayTransportError);
    expect(err).toMatchObject({ kind: 'bad_response', outcomeUnknown: true, httpStatus: status });
  });
});

const invoice = { shop_order_id: 'order-1', amount: '100.00', currency: 643, payway: PAYMENT.card };
const payout = {
  shop_payment_id: 'p-1',
  amount: '250.00',
  amount_type: 'shop_amount' as const,
  shop_currency: 643,
  payway: PAYMENT.card,
  account: '4111111111111111',
};
