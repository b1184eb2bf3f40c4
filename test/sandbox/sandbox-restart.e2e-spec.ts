import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PAYMENT, PAYOUT } from '../support/payways';
import {
  spawnService,
  startEnv,
  startPorts,
  waitForStatus,
  type ServiceProcess,
} from '../support/process';

/**
 * A restart in sandbox mode changes nothing either side can see. The service as
 * `npm start` runs it (no settings but ports and DATA_DIR), stopped by SIGTERM and started again
 * on the same data directory: the development keys, the balance, the sandbox's invoices, tokens
 * and payer pages are all still there.
 */

type Json = Record<string, unknown>;

async function waitUntil<T>(
  get: () => Promise<T | undefined>,
  ms: number,
  what: string,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await get();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('sandbox mode: a restart remembers', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-restart-'));
  let env: Record<string, string>;
  let base = '';
  let sandboxOrigin = '';
  let svc: ServiceProcess | undefined;

  beforeAll(async () => {
    const ports = await startPorts();
    base = `http://127.0.0.1:${ports.port}`;
    sandboxOrigin = `http://127.0.0.1:${ports.sandboxPort}`;
    env = {
      ...startEnv(ports, dataDir),
      // Payouts are sent at once and succeed 15 ms later; the poller looks every second.
      SANDBOX_TIME_SCALE: '0.01',
      PAYOUT_POLL_INTERVAL_S: '1',
    };
  });

  afterAll(async () => {
    if (svc !== undefined && svc.child.exitCode === null) {
      svc.child.kill('SIGTERM');
      await svc.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Starts the service and reads the development keys off its banner. */
  async function start(): Promise<{ shop: string; admin: string }> {
    const proc = spawnService(env);
    svc = proc;
    const ready = await waitForStatus(`${base}/health/ready`, 200, 60_000, proc);
    expect({ ready, output: ready ? '' : proc.output() }).toEqual({ ready: true, output: '' });
    const output = await waitUntil(
      async () => (proc.output().includes('curl -X POST') ? proc.output() : undefined),
      15_000,
      'the banner',
    );
    const shop = /shop:\s+(\S+)/.exec(output)?.[1];
    const admin = /admin:\s+(\S+)/.exec(output)?.[1];
    expect(output).toContain(`kept in ${join(dataDir, 'development-api-keys')}`);
    return { shop: shop!, admin: admin! };
  }

  async function stop(): Promise<void> {
    svc!.child.kill('SIGTERM');
    expect(await svc!.exited).toBe(0);
  }

  async function call(
    key: string,
    method: string,
    path: string,
    body?: Json,
  ): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as Json };
  }

  it('keeps the keys, the balance, the invoices, the token and the pay link', async () => {
    const keys = await start();
    const order = `restart-${Date.now()}`;
    // Paid at once, with a recurrent token saved.
    const created = await call(keys.shop, 'POST', '/invoices', {
      shopOrderId: order,
      amount: '1250.50',
      currency: 643,
      payway: PAYMENT.cardSuccess,
      savePaymentToken: true,
    });
    expect(created.status).toBe(201);
    const paid = await waitUntil(
      async () => {
        const r = await call(keys.shop, 'GET', `/invoices/${order}?refresh=true`);
        return r.body.status === 'succeeded' && r.body.paymentToken !== null ? r.body : undefined;
      },
      15_000,
      'the invoice to succeed with a token',
    );
    // An invoice the payer has not paid yet: its pay link leads to the sandbox's payer page.
    const unpaid = await call(keys.shop, 'POST', '/invoices', {
      shopOrderId: `${order}-later`,
      amount: '10.00',
      currency: 643,
      payway: PAYMENT.card,
    });
    expect(unpaid.status).toBe(201);
    const payUrl = String(unpaid.body.payUrl);
    // A payout moves the balance.
    const payout = await call(keys.shop, 'POST', '/payouts', {
      shopPaymentId: `${order}-payout`,
      amount: '1000.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account: '4276380012345678',
    });
    expect(payout.status).toBe(202);
    await waitUntil(
      async () => {
        const r = await call(keys.shop, 'GET', `/payouts/${order}-payout`);
        return r.body.status === 'succeeded' ? r.body : undefined;
      },
      20_000,
      'the payout to succeed',
    );
    const balance = await call(keys.shop, 'GET', '/balance');
    expect(balance.status).toBe(200);
    expect(JSON.stringify(balance.body)).not.toContain('"available":"1000000.00"');

    await stop();
    const again = await start();

    expect(again).toEqual(keys);
    expect(await call(keys.shop, 'GET', '/balance')).toEqual(balance);
    const refreshed = await call(keys.shop, 'GET', `/invoices/${order}?refresh=true`);
    expect(refreshed.body).toMatchObject({ status: 'succeeded', needsAttention: false });
    // The sandbox itself still knows the payment (before, it answered "absent" and the service
    // kept its stored state silently).
    const known = await fetch(`${sandboxOrigin}/sandbox/invoices/${String(paid.invoiceId)}`);
    expect(known.status).toBe(200);
    expect(((await known.json()) as { data: Json }).data).toMatchObject({ status: 4 });

    const refund = await call(keys.shop, 'POST', `/invoices/${order}/refunds`, {
      shopRefundId: `${order}-refund`,
      amount: '250.50',
    });
    expect({ status: refund.status, body: refund.body }).toMatchObject({
      status: 201,
      body: { amount: '250.50' },
    });

    const recurrent = await call(keys.shop, 'POST', '/invoices', {
      shopOrderId: `${order}-again`,
      amount: '20.00',
      currency: 643,
      payway: PAYMENT.card,
      paymentTokenFrom: order,
    });
    expect(recurrent.status).toBe(201);
    await waitUntil(
      async () => {
        const r = await call(keys.shop, 'GET', `/invoices/${order}-again?refresh=true`);
        return r.body.status === 'succeeded' ? r.body : undefined;
      },
      15_000,
      'the token charge to succeed',
    );

    const page = await fetch(payUrl);
    const html = await page.text();
    expect({ status: page.status, notFound: html.includes('Payment not found') }).toEqual({
      status: 200,
      notFound: false,
    });

    await stop();
  }, 180_000);
});
