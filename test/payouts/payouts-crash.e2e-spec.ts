import type { Client } from 'pg';
import type { SandboxHandle } from '../../src/sandbox/sandbox.server';
import { PAYOUT_SHOP_ID } from '../support/app';
import { CRASH_SHOP_KEY as SHOP_KEY, CrashWorld, killHard, waitFor } from '../support/crash-service';
import { PAYOUT } from '../support/payways';

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
  await killHard(second.child);
}, 120000);

/**
 * The poller killed after it leased a batch (before asking), and after the gateway answered the
 * batch (before writing it): the rows stay leased to the dead instance until the lease runs
 * out, then another instance polls each once, never within an interval of the dead one's call.
 */
it.each(['payout.poll.after_claim', 'payout.poll.after_answers'])(
  'killed at %s: the batch waits for its lease, then another instance polls it',
  async (point) => {
    const env = { PAYOUT_POLL_INTERVAL_S: '1', PAYOUT_LEASE_S: '3' };
    const creator = await world.start({ ...env, SCHEDULER_ENABLED: 'false' });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const shopPaymentId = `poll-crash-${point}-${i}`;
      const res = await fetch(`${creator.url}/api/v1/payouts`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${SHOP_KEY}` },
        body: JSON.stringify({
          shopPaymentId,
          amount: '100.00',
          amountType: 'ps_amount',
          shopCurrency: 643,
          payway: PAYOUT.sandboxCard('never_final'),
          account: '4111111111111111',
        }),
      });
      expect(res.status).toBe(202);
      ids.push(shopPaymentId);
    }
    await killHard(creator.child);
    // All due when the next instance starts: its first claim takes the whole batch.
    await db.query(`UPDATE payouts SET next_poll_at = now() WHERE shop_payment_id = ANY($1)`, [
      ids,
    ]);
    sandbox.state.requests = [];

    const dying = await world.start({ ...env, CHAOS_CRASH_AT: point });
    await waitFor(
      `the crash at ${point} (output: ${dying.output()})`,
      async () =>
        dying.child.exitCode !== null || dying.child.signalCode !== null ? true : undefined,
      20000,
    );
    const left = await db.query<{
      lease_owner: string | null;
      lease_until: Date | null;
      poll_count: number;
      withdraw_id: string;
    }>(
      `SELECT lease_owner, lease_until, poll_count, withdraw_id::text FROM payouts WHERE shop_payment_id = ANY($1)`,
      [ids],
    );
    const owners = new Set(left.rows.map((r) => r.lease_owner));
    expect(owners.size).toBe(1);
    expect([...owners][0]).not.toBeNull();
    expect(left.rows.map((r) => r.poll_count)).toEqual([0, 0, 0, 0, 0]);
    const leaseEnd = Math.max(...left.rows.map((r) => r.lease_until!.getTime()));
    const asked = (): Map<string, number[]> => {
      const calls = new Map<string, number[]>();
      for (const r of sandbox.state.requests) {
        if (r.path !== 'withdraw/status') continue;
        const id = String((r.body as Record<string, unknown>).withdraw_id);
        calls.set(id, [...(calls.get(id) ?? []), Date.parse(r.time)]);
      }
      return calls;
    };
    const askedByDead = point === 'payout.poll.after_answers' ? 1 : 0;
    for (const r of left.rows) expect(asked().get(r.withdraw_id) ?? []).toHaveLength(askedByDead);

    const survivor = await world.start(env);
    await waitFor(
      `the survivor's rounds (output: ${survivor.output()})`,
      async () => {
        const r = await db.query(
          `SELECT count(*)::int AS n FROM payouts
            WHERE shop_payment_id = ANY($1) AND poll_count >= 1 AND lease_owner IS NULL`,
          [ids],
        );
        return r.rows[0].n === ids.length ? true : undefined;
      },
      20000,
    );
    await killHard(survivor.child);
    await db.query(
      `UPDATE payouts SET next_poll_at = now() + interval '1 day' WHERE shop_payment_id = ANY($1)`,
      [ids],
    );
    const calls = asked();
    for (const r of left.rows) {
      const times = (calls.get(r.withdraw_id) ?? []).sort((x, y) => x - y);
      expect(times.length).toBeGreaterThan(askedByDead);
      // The survivor's first call came once the dead instance's lease had run out.
      expect(times[askedByDead]).toBeGreaterThanOrEqual(leaseEnd - 50);
      for (let i = 1; i < times.length; i++)
        expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(1000 - 50);
    }
  },
  120000,
);
