import type { ChildProcess } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import type { Client } from 'pg';
import type { SandboxHandle } from '../../src/sandbox/sandbox.server';
import { SHOP_ID } from '../support/app';
import {
  CRASH_SHOP_KEY as SHOP_KEY,
  CrashWorld,
  killHard,
  sleep,
  waitFor,
} from '../support/crash-service';
import { PAYMENT, PAYOUT } from '../support/payways';

/**
 * A stop signal to the compiled service (src/main.ts, src/common/graceful-stop.ts): the first
 * lets the request in flight finish (its gateway call, its answer) and exits 0; a second one
 * exits at once with 1, and what it cut short is what a crash leaves: the next process settles
 * it, and the gateway still has exactly one invoice.
 */
let world: CrashWorld;
let sandbox: SandboxHandle;
let db: Client;

beforeAll(async () => {
  world = await CrashWorld.open('graceful-shutdown');
  ({ sandbox, db } = world);
}, 180000);

afterAll(async () => {
  await world?.close();
});

afterEach(() => {
  sandbox.state.settings.latencyMs = 0;
});

const exited = (child: {
  exitCode: number | null;
  once: (e: 'exit', f: (code: number | null) => void) => void;
}) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
  });

function create(url: string, shopOrderId: string): Promise<{ status: number } | 'no answer'> {
  return fetch(`${url}/api/v1/invoices`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${SHOP_KEY}` },
    body: JSON.stringify({ shopOrderId, amount: '250.00', currency: 643, payway: PAYMENT.card }),
  }).then(
    (r) => ({ status: r.status }),
    () => 'no answer' as const,
  );
}

const createsAtGateway = (shopOrderId: string) =>
  sandbox.state.requests.filter(
    (r) => r.path === 'invoice/create' && JSON.stringify(r).includes(shopOrderId),
  ).length;

async function untilAtGateway(shopOrderId: string): Promise<void> {
  await waitFor(
    'invoice/create at the gateway',
    async () => (createsAtGateway(shopOrderId) > 0 ? true : undefined),
    15000,
  );
}

/** A create on a kept-alive connection (an agent of its own): its status and Connection header. */
function createOn(
  agent: Agent,
  url: string,
  shopOrderId: string,
): Promise<{ status: number; connection: string }> {
  const body = JSON.stringify({
    shopOrderId,
    amount: '250.00',
    currency: 643,
    payway: PAYMENT.card,
  });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/api/v1/invoices`,
      {
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          Authorization: `Bearer ${SHOP_KEY}`,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, connection: String(res.headers.connection) }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

it('SIGTERM lets the create in flight finish, tells its client to close, refuses new connections, then exits 0', async () => {
  const svc = await world.start({ LOG_LEVEL: 'info' });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  // Before the signal, answers keep the connection.
  expect(await createOn(agent, svc.url, `keep-${Date.now()}`)).toEqual({
    status: 201,
    connection: 'keep-alive',
  });
  sandbox.state.settings.latencyMs = 1500;
  const shopOrderId = `term-${Date.now()}`;
  const answer = createOn(agent, svc.url, shopOrderId);
  await untilAtGateway(shopOrderId);
  const code = exited(svc.child);
  svc.child.kill('SIGTERM');
  await sleep(200);
  expect(
    await fetch(`${svc.url}/health`).then(
      () => 'answered',
      () => 'refused',
    ),
  ).toBe('refused');
  expect({
    answer: await answer,
    code: await code,
    output: svc.output().slice(-3000),
  }).toMatchObject({
    answer: { status: 201, connection: 'close' },
    code: 0,
  });
  agent.destroy();
  const row = await db.query(
    `SELECT status, response_code, invoice_id FROM invoices WHERE shop_order_id = $1`,
    [shopOrderId],
  );
  // The gateway's answer was had and written, not cut short by the shutdown.
  const onGateway = sandbox.state.findInvoiceByOrder(SHOP_ID, shopOrderId);
  expect({ ...row.rows[0], output: svc.output().slice(-2000) }).toMatchObject({
    response_code: 201,
    invoice_id: String(onGateway?.id),
  });
}, 60000);

it('a second signal exits at once with 1; the next process settles the create it cut short, created once', async () => {
  // GATEWAY_TIMEOUT_MS above the gateway's 15 s: only the second signal can end the wait early.
  const svc = await world.start({ INVOICE_RECONCILE_GRACE_S: '0.1', GATEWAY_TIMEOUT_MS: '20000' });
  // The gateway holds the create for 15 s: a second signal that waited for it would take that long.
  sandbox.state.settings.latencyMs = 15_000;
  const shopOrderId = `twice-${Date.now()}`;
  const answer = create(svc.url, shopOrderId);
  await untilAtGateway(shopOrderId);
  const code = exited(svc.child);
  svc.child.kill('SIGTERM');
  // Past the repeat window: a signal within a second of the first is the same stop delivered
  // twice (process group and npm), not a second Ctrl-C (src/common/graceful-stop.ts).
  await sleep(1300);
  expect(svc.child.exitCode).toBeNull(); // still closing: the create waits for the gateway
  const signalled = Date.now();
  svc.child.kill('SIGINT');
  expect({
    code: await code,
    signal: svc.child.signalCode,
    output: svc.output().slice(-1500),
  }).toMatchObject({ code: 1 });
  // At once: a few hundred milliseconds, five times that as margin, far below the 15 s wait.
  expect(Date.now() - signalled).toBeLessThan(5000);
  expect(await answer).toBe('no answer');
  expect(svc.output()).toContain('second stop signal');
  const left = await db.query(
    `SELECT status, response_code FROM invoices WHERE shop_order_id = $1`,
    [shopOrderId],
  );
  expect(left.rows[0]).toMatchObject({ response_code: null });

  sandbox.state.settings.latencyMs = 0; // the gateway answers again (its checks included)
  const next = await world.start({ INVOICE_RECONCILE_GRACE_S: '0.1', LOG_LEVEL: 'info' });
  try {
    const settled = await waitFor(
      'the interrupted create settled by reconciliation',
      async () => {
        const r = await db.query(
          `SELECT status, invoice_id FROM invoices WHERE shop_order_id = $1`,
          [shopOrderId],
        );
        const row = r.rows[0] as { status: string; invoice_id: string | null };
        return row.invoice_id !== null ? row : undefined;
      },
      30000,
    ).catch(async (e: Error) => {
      const r = await db.query(`SELECT * FROM invoices WHERE shop_order_id = $1`, [shopOrderId]);
      throw new Error(`${e.message}: ${JSON.stringify(r.rows[0])}\n${next.output().slice(-4000)}`);
    });
    const onGateway = sandbox.state.findInvoiceByOrder(SHOP_ID, shopOrderId);
    expect(onGateway).toBeDefined();
    expect(settled.invoice_id).toBe(String(onGateway!.id));
    expect(createsAtGateway(shopOrderId)).toBe(1);
  } finally {
    await killHard(next.child);
  }
}, 90000);

it("SIGTERM lets a job's round in flight (a payout status poll) finish before the gateway client and the pool close", async () => {
  const svc = await world.start({ LOG_LEVEL: 'info' });
  const shopPaymentId = `poll-${Date.now()}`;
  // A slow gateway from the start: the create still answers within GATEWAY_TIMEOUT_MS (3 s), and
  // the first status poll, which follows at once (PAYOUT_POLL_INTERVAL_S 0.5), is slow too.
  sandbox.state.settings.latencyMs = 1500;
  const polls = () => sandbox.state.requests.filter((r) => r.path === 'withdraw/status').length;
  const before = polls();
  const created = await fetch(`${svc.url}/api/v1/payouts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${SHOP_KEY}` },
    body: JSON.stringify({
      shopPaymentId,
      amount: '100.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account: '4111111111111111',
    }),
  });
  expect(created.status).toBeLessThan(300);
  const createdBody = await created.text();
  await waitFor(
    'a status poll at the gateway',
    async () => (polls() > before ? true : undefined),
    15000,
  ).catch((e: Error) => {
    throw new Error(
      `${e.message} (created: ${createdBody}; calls: ${sandbox.state.requests.map((r) => r.path).join(',')}; ${svc.output().slice(-2500)})`,
    );
  });
  const code = exited(svc.child);
  svc.child.kill('SIGTERM');
  expect({ code: await code, output: svc.output().slice(-3000) }).toMatchObject({ code: 0 });
  const after = svc.output().slice(svc.output().indexOf('"shutting down"'));
  const statusCalls = after
    .split('\n')
    .filter((l) => l.includes('"path":"withdraw/status"'))
    .map((l) => (JSON.parse(l) as { result: string }).result);
  expect(statusCalls.length).toBeGreaterThan(0);
  expect(statusCalls.every((r) => r === 'ok')).toBe(true);
  expect(svc.output()).not.toContain('scheduled job failed');
}, 60000);

/**
 * A reconciler's batch at SIGTERM: once `wave` calls to `path` are in flight (each slow, 2.5 s),
 * the signal; the process exits 0 once that wave ends, with no call started after the signal
 * (the next wave would have taken 2.5 s more), and no row of `table` among `orders` still leased.
 */
async function stopMidRound(
  svc: { child: ChildProcess; output: () => string },
  path: string,
  wave: number,
  table: 'invoices' | 'refunds',
  orders: string[],
): Promise<void> {
  const calls = () => sandbox.state.requests.filter((r) => r.path === path).length;
  const before = calls();
  sandbox.state.settings.latencyMs = 2500;
  await waitFor(
    `a wave of ${path}`,
    async () => (calls() - before >= wave ? true : undefined),
    15000,
  );
  const atSignal = calls();
  const code = exited(svc.child);
  const signalled = Date.now();
  svc.child.kill('SIGTERM');
  expect({ code: await code, output: svc.output().slice(-2000) }).toMatchObject({ code: 0 });
  // The wave in flight finishes (2.5 s at the gateway) and nothing else is waited for: five times
  // that as margin for a busy machine, still below the forced exit's GATEWAY_TIMEOUT_MS + 10 s.
  expect(Date.now() - signalled).toBeLessThan(5 * 2500);
  expect(calls()).toBe(atSignal);
  const leased = await db.query(
    `SELECT count(*)::int AS n FROM ${table} WHERE shop_order_id = ANY($1) AND lease_until > now()`,
    [orders],
  );
  expect(leased.rows[0]).toEqual({ n: 0 });
}

it("SIGTERM mid-round: the reconciler's checks in flight finish, the rest are not started and their leases handed back", async () => {
  const svc = await world.start({ INVOICE_RECONCILE_GRACE_S: '3600' });
  const ids = Array.from({ length: 24 }, (_, i) => `round-${Date.now()}-${i}`);
  for (const id of ids) expect(await create(svc.url, id)).toEqual({ status: 201 });
  // All due now; the reconciler checks 8 at a time.
  await db.query(`UPDATE invoices SET next_check_at = now() WHERE shop_order_id = ANY($1)`, [ids]);
  await stopMidRound(svc, 'invoice/check', 8, 'invoices', ids);
}, 90000);

it("SIGTERM mid-round, refunds: the reconciler's listings in flight finish, the rest are not started and their leases handed back", async () => {
  const svc = await world.start({ INVOICE_RECONCILE_GRACE_S: '3600' });
  const orders = Array.from({ length: 12 }, (_, i) => `refund-round-${Date.now()}-${i}`);
  for (const id of orders) expect(await create(svc.url, id)).toEqual({ status: 201 });
  // Refunds the reconciler must list at the gateway now (as a crash before their call leaves
  // them); it lists 4 at a time.
  await db.query(
    `INSERT INTO refunds (shop_id, shop_refund_id, invoice_pk, shop_order_id, gateway_invoice_id,
                          request_fingerprint, amount, currency, status, submit_state, next_check_at, check_deadline)
     SELECT shop_id, 'r-' || shop_order_id, id, shop_order_id, invoice_id, repeat('0', 64), '10.00', 643,
            'WAITING', 'pending', now(), now() + interval '1 hour'
       FROM invoices WHERE shop_order_id = ANY($1)`,
    [orders],
  );
  await stopMidRound(svc, 'invoice/get-refunds', 4, 'refunds', orders);
}, 90000);
