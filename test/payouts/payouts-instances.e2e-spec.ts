import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { GatewayService } from '../../src/gateway';
import { claimDue } from '../../src/jobs/claim';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { PAYOUT_SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYOUT } from '../support/payways';
import { statusCallsOf } from '../support/payout-rows';

const NEVER_FINAL = PAYOUT.sandboxCard('never_final');

/**
 * Two service instances on one database and one gateway: each payout is polled at most once
 * per interval however the instances' ticks interleave, and rows claimed by an instance that
 * died are polled by the other once the lease has run out.
 */
const INTERVAL_S = 1;
const ENV = {
  PAYOUT_POLL_INTERVAL_S: String(INTERVAL_S),
  PAYOUT_POLL_MAX_S: '3600',
  PAYOUT_POLL_CONCURRENCY: '16',
};
const COUNT = 300;

let a: TestContext;
let b: TestContext;
let db: Client;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Creates `n` never-finishing payouts on the sandbox and inserts their rows directly, due now. */
async function seedPayouts(n: number, prefix: string): Promise<string[]> {
  const gateway = a.service.app.get(GatewayService);
  const withdrawIds: string[] = [];
  for (let i = 0; i < n; i++) {
    const shopPaymentId = `${prefix}-${i}`;
    const created = await gateway.createWithdraw({
      shop_payment_id: shopPaymentId,
      amount: '100',
      amount_type: 'ps_amount',
      shop_currency: 643,
      payway: NEVER_FINAL,
      account: '4111111111111111',
    });
    withdrawIds.push(String(created.id));
    await db.query(
      `INSERT INTO payouts (shop_id, shop_payment_id, request_fingerprint, status, gateway_status, withdraw_id, amount,
         amount_type, shop_currency, payway, account_masked, account_sealed, create_attempts, next_poll_at, poll_deadline)
       VALUES ($5, $1, $2, 'processing', 1, $3, '100', 'ps_amount', 643, $4,
         '411111******1111', 'not-used', 1, now() - interval '1 second', now() + interval '1 hour')`,
      [shopPaymentId, randomBytes(32).toString('hex'), created.id, NEVER_FINAL, PAYOUT_SHOP_ID],
    );
  }
  return withdrawIds;
}

/** withdraw/status calls per withdraw id, with their times, from the sandbox's log. */
const statusCalls = (): Map<string, number[]> => statusCallsOf(a.sandbox.state.requests);

beforeAll(async () => {
  a = await startTestApp({ env: ENV });
  b = await startTestApp({ databaseUrl: a.databaseUrl, sandbox: a.sandbox, env: ENV });
  db = new Client({ connectionString: a.databaseUrl });
  await db.connect();
}, 120000);

afterAll(async () => {
  await db?.end();
  await b?.close();
  await a?.close();
});

it('two instances polling together ask about each payout at most once per interval', async () => {
  const withdrawIds = await seedPayouts(COUNT, 'many');
  a.sandbox.state.requests = [];
  const pollers = [a.service.app.get(PayoutPoller), b.service.app.get(PayoutPoller)];
  expect(pollers[0].instanceId).not.toBe(pollers[1].instanceId);

  const polledBy = [0, 0];
  const until = Date.now() + 2.6 * INTERVAL_S * 1000;
  while (Date.now() < until) {
    const counts = await Promise.all(pollers.map((p) => p.runOnce()));
    counts.forEach((c, i) => (polledBy[i] += c));
    await sleep(20);
  }

  const calls = statusCalls();
  for (const id of withdrawIds) {
    const times = (calls.get(id) ?? []).sort((x, y) => x - y);
    expect(times.length).toBeGreaterThanOrEqual(1);
    expect(times.length).toBeLessThanOrEqual(3);
    for (let i = 1; i < times.length; i++) {
      // The next poll is due an interval after the previous one finished.
      expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(INTERVAL_S * 1000 - 50);
    }
  }
  const total = [...calls.values()].reduce((s, t) => s + t.length, 0);
  expect(polledBy[0] + polledBy[1]).toBe(total);
  const leased = await db.query(
    `SELECT count(*)::int AS n FROM payouts WHERE lease_until IS NOT NULL AND shop_payment_id LIKE 'many-%'`,
  );
  expect(leased.rows[0].n).toBe(0);
}, 120000);

it('takes over the rows of an instance that claimed them and died, once the lease runs out', async () => {
  const withdrawIds = await seedPayouts(40, 'orphan');
  // A third instance claims every due row with a 2 s lease, then dies without processing them.
  const claimed = await claimDue(a.service.app.get(DataSource), {
    table: 'payouts',
    dueColumn: 'next_poll_at',
    limit: 1000,
    leaseSeconds: 2,
    owner: 'dead',
    shopId: PAYOUT_SHOP_ID,
  });
  expect(claimed.length).toBeGreaterThanOrEqual(40);
  a.sandbox.state.requests = [];
  const survivor = b.service.app.get(PayoutPoller);

  await survivor.runOnce();
  const early = statusCalls();
  for (const id of withdrawIds) expect(early.get(id)).toBeUndefined();

  await sleep(2200);
  await survivor.runOnce();
  const late = statusCalls();
  for (const id of withdrawIds) expect(late.get(id)).toHaveLength(1);
  const rows = await db.query(
    `SELECT count(*)::int AS n FROM payouts WHERE shop_payment_id LIKE 'orphan-%' AND lease_owner IS NULL AND lease_until IS NULL AND poll_count = 1`,
  );
  expect(rows.rows[0].n).toBe(40);
}, 60000);
