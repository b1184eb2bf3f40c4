import type { Client } from 'pg';
import type { SandboxHandle } from '../src/sandbox/sandbox.server';
import { PAYOUT_SHOP_ID } from './support/app';
import { CRASH_SHOP_KEY as SHOP_KEY, CrashWorld, killHard, waitFor } from './support/crash-service';
import { PAYOUT } from './support/payways';

/**
 * The compiled service is killed (SIGKILL) after it committed the payout row and sent
 * withdraw/create, before the gateway answered. A new process must finish the payout from the
 * database alone, and the gateway must end with exactly one payout.
 */

let world: CrashWorld;
let sandbox: SandboxHandle;
let db: Client;
const startChild = () => world.start();

beforeAll(async () => {
  world = await CrashWorld.open('payouts-crash');
  ({ sandbox, db } = world);
}, 180000);

afterAll(async () => {
  await world?.close();
});

it('a payout whose process was killed mid-create is finished by the restarted service, paid exactly once', async () => {
  const first = await startChild();
  // The create is done on the gateway, but its answer is held past the time-out and the crash.
  sandbox.state.faults.add({
    path: 'withdraw/create',
    fault: 'timeout_done',
    remaining: 1,
    delayMs: 6000,
  });
  const shopPaymentId = `crash-${Date.now()}`;
  const body = {
    shopPaymentId,
    amount: '1000.00',
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway: PAYOUT.card,
    account: '4111111111111111',
  };
  const post = fetch(`${first.url}/api/v1/payouts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${SHOP_KEY}` },
    body: JSON.stringify(body),
  }).then(
    () => 'answered',
    () => 'no answer',
  );

  await waitFor(
    'the committed payout row',
    async () =>
      (await db.query(`SELECT status FROM payouts WHERE shop_payment_id = $1`, [shopPaymentId]))
        .rowCount === 1
        ? true
        : undefined,
    15000,
  );
  await waitFor(
    'withdraw/create at the gateway',
    async () =>
      sandbox.state.requests.some((r) => r.path === 'withdraw/create') ? true : undefined,
    15000,
  );
  await killHard(first.child);
  expect(await post).toBe('no answer');
  const left = await db.query(
    `SELECT status, withdraw_id, create_attempts FROM payouts WHERE shop_payment_id = $1`,
    [shopPaymentId],
  );
  // The attempt is counted when it is claimed, before the call: a crash cannot hide a sent create.
  expect(left.rows[0]).toMatchObject({ status: 'pending', withdraw_id: null, create_attempts: 1 });

  const second = await startChild();
  const final = await waitFor(
    `the payout to finish (service output: ${second.output()})`,
    async () => {
      const r = await db.query(
        `SELECT status, withdraw_id FROM payouts WHERE shop_payment_id = $1`,
        [shopPaymentId],
      );
      return r.rows[0].status === 'succeeded'
        ? (r.rows[0] as { status: string; withdraw_id: string })
        : undefined;
    },
    30000,
  );
  const onGateway = [...sandbox.state.payouts.values()].filter(
    (p) => p.shopPaymentId === shopPaymentId,
  );
  expect(onGateway).toHaveLength(1);
  expect(onGateway[0].shopId).toBe(PAYOUT_SHOP_ID);
  expect(final.withdraw_id).toBe(String(onGateway[0].id));
  expect(sandbox.state.requests.filter((r) => r.path === 'withdraw/create')).toHaveLength(1);
  expect(sandbox.state.requests.some((r) => r.path === 'withdraw/shop_payment_status')).toBe(true);

  const replay = await fetch(`${second.url}/api/v1/payouts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${SHOP_KEY}` },
    body: JSON.stringify(body),
  });
  expect(replay.status).toBe(202);
  expect(((await replay.json()) as { status: string }).status).toBe('succeeded');
  expect(sandbox.state.requests.filter((r) => r.path === 'withdraw/create')).toHaveLength(1);
}, 120000);
