import { newTracked, reconcile, type Tracked } from './support/ledger';
import { recordRow } from './support/results';
import { createPayout, payoutOrder } from './support/shop';
import { ADMIN_KEY, SHOP_ID, sleep, waitUntil, World } from './support/world';

/**
 * "Watch until final", as a scenario against the compiled service and the sandbox:
 * every payout is finished by the gateway between 2 hours and 2 days after its creation (the
 * sandbox's `slow_final`), long after the service's 2-hour poll deadline flagged it. Time is
 * compressed: one sandbox hour is one real second, and the service's deadline is 2 s.
 *
 * - Group `alone`: nobody touches them. Every one must reach the gateway's final status in the
 *   service by the watch alone, its flag cleared by the gateway's answer, with no admin entry in
 *   its audit trail.
 * - Group `operated`: an operator script presses Recheck and Accept (a random final status) at
 *   random on them while they are flagged. No answer may make the service's money state differ
 *   from the gateway's: an accept that the gateway contradicts is refused, and every payout ends
 *   in the gateway's final status.
 */

const PER_GROUP = 8;
/** One sandbox hour in real milliseconds. */
const HOUR_MS = 1000;

const WATCH_ENV: Record<string, string> = {
  PAYOUT_POLL_INTERVAL_S: '1',
  // The mission's 2-hour deadline, compressed like the sandbox's time.
  PAYOUT_POLL_MAX_S: String((2 * HOUR_MS) / 1000),
  WATCH_INTERVAL_S: '1',
  // Long enough to see the 2-day finals (48 s here) and more.
  WATCH_MAX_S: '300',
};

let world: World;

beforeAll(async () => {
  world = await World.create('watch', process.env.CHAOS_PG_URL!, WATCH_ENV);
  // One sandbox hour (3,600,000 ms of sandbox time) takes HOUR_MS of real time.
  world.sandbox.state.settings.timeScale = HOUR_MS / 3_600_000;
  await world.start();
});

afterAll(async () => {
  await world?.close();
});

interface OperatorTally {
  rechecks: number;
  acceptsApplied: number;
  acceptsRefused: number;
  other: string[];
}

/** Presses Recheck or Accept at random on the flagged payouts of `ids` until `done()`. */
async function operator(ids: Set<string>, done: () => boolean): Promise<OperatorTally> {
  const tally: OperatorTally = { rechecks: 0, acceptsApplied: 0, acceptsRefused: 0, other: [] };
  while (!done()) {
    const list = await world.api('GET', '/api/v1/admin/attention?limit=200', undefined, ADMIN_KEY);
    const items = ((list.body.items as Array<Record<string, unknown>>) ?? []).filter(
      (i) => i.objectType === 'payout' && ids.has(String(i.id)),
    );
    if (items.length > 0) {
      const pick = items[Math.floor(Math.random() * items.length)];
      const id = encodeURIComponent(String(pick.id));
      const accept = Math.random() < 0.5;
      const body = accept
        ? {
            action: 'accept',
            status: ['succeeded', 'failed', 'rejected'][Math.floor(Math.random() * 3)],
            note: 'chaos operator: pressed at random',
          }
        : { action: 'recheck' };
      const r = await world.api('POST', `/api/v1/admin/payouts/${id}/resolve`, body, ADMIN_KEY);
      if (!accept && r.status === 200) tally.rechecks += 1;
      else if (accept && r.status === 200) tally.acceptsApplied += 1;
      else if (accept && r.status === 409) tally.acceptsRefused += 1;
      else tally.other.push(`${body.action} ${r.status}`);
    }
    await sleep(150 + Math.floor(Math.random() * 250));
  }
  return tally;
}

/** The gateway's final statuses as the service names them (PAYOUT_STATUS_* defaults). */
const SERVICE_NAME: Record<number, string> = { 5: 'succeeded', 6: 'rejected', 8: 'failed' };

it(`payouts final 2 h to 2 days after creation: ${PER_GROUP} watched alone, ${PER_GROUP} under a random operator; every one ends as the gateway says`, async () => {
  const tracked: Tracked = newTracked();
  const alone = Array.from({ length: PER_GROUP }, () => payoutOrder('slow_final'));
  const operated = Array.from({ length: PER_GROUP }, () => payoutOrder('slow_final'));
  for (const o of [...alone, ...operated]) {
    const r = await createPayout(world, tracked, o);
    expect(r.status).toBe(202);
  }
  const all = [...alone, ...operated].map((o) => o.shopPaymentId);
  const finalCount = async (): Promise<number> =>
    (
      await world.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM payouts
          WHERE shop_payment_id = ANY($1) AND status IN ('succeeded','failed','rejected')`,
        [all],
      )
    )[0].n;

  let finished = false;
  let unfinished: Error | null = null;
  const operatorRun = operator(new Set(operated.map((o) => o.shopPaymentId)), () => finished);
  try {
    // The deadline (2 s) passes long before most finals (2 to 48 s): the watch must carry them.
    await waitUntil(
      async () => (await finalCount()) === all.length,
      120_000,
      'every payout final in the service',
      500,
    );
  } catch (e) {
    // Still recorded below: the table says which payouts the service stopped watching.
    unfinished = e as Error;
  } finally {
    finished = true;
  }
  const tally = await operatorRun;

  const rows = await world.query<{
    shop_payment_id: string;
    status: string;
    needs_attention: boolean;
    ever_flagged: boolean;
    admin_entries: number;
  }>(
    `SELECT p.shop_payment_id, p.status, p.needs_attention,
            EXISTS (SELECT 1 FROM events e WHERE e.entity_type = 'payout'
                      AND e.entity_id = p.shop_payment_id AND e.type = 'payout.attention_raised') AS ever_flagged,
            (SELECT count(*)::int FROM events e WHERE e.entity_type = 'payout'
               AND e.entity_id = p.shop_payment_id AND e.cause = 'admin') AS admin_entries
       FROM payouts p WHERE p.shop_payment_id = ANY($1)`,
    [all],
  );
  const byId = new Map(rows.map((r) => [r.shop_payment_id, r]));
  const apart: string[] = [];
  for (const id of all) {
    const gw = world.sandbox.state.findPayoutByShopPaymentId(SHOP_ID, id);
    const row = byId.get(id)!;
    const expected =
      gw === undefined ? 'absent' : (SERVICE_NAME[gw.status] ?? `gateway ${gw.status}`);
    if (row.status !== expected) apart.push(`${id}: service ${row.status}, gateway ${expected}`);
  }
  const aloneRows = alone.map((o) => byId.get(o.shopPaymentId)!);
  const flaggedAlone = aloneRows.filter((r) => r.ever_flagged).length;
  const books = await reconcile(world, tracked);

  const notes =
    `alone: ${flaggedAlone}/${PER_GROUP} flagged at the deadline, all final by the watch; ` +
    `operator: ${tally.rechecks} rechecks, ${tally.acceptsApplied} accepts applied, ` +
    `${tally.acceptsRefused} refused (gateway disagreed)` +
    (apart.length > 0 ? `; APART: ${apart.join('; ')}` : '');
  const ok =
    unfinished === null &&
    apart.length === 0 &&
    tally.other.length === 0 &&
    aloneRows.every((r) => !r.needs_attention && r.admin_entries === 0) &&
    books.createdTwice === 0 &&
    books.lost === 0 &&
    books.wrong === 0 &&
    books.booksEqual;
  recordRow({
    scenario: 'watch until final: payouts final 2 h-2 days late, random operator',
    runs: all.length,
    twice: books.createdTwice,
    lost: books.lost,
    unsettled: books.unsettled,
    flagged: books.flagged,
    verdict: ok ? 'ok' : 'FAIL',
    notes,
  });

  expect(unfinished).toBeNull();
  expect(apart).toEqual([]);
  expect(tally.other).toEqual([]);
  // The deadline really came first for the lone ones (else this scenario proves nothing).
  expect(flaggedAlone).toBeGreaterThan(0);
  // Watched alone: settled by the gateway's answer, flag cleared, no operator anywhere.
  for (const r of aloneRows) {
    expect({ id: r.shop_payment_id, flagged: r.needs_attention, admin: r.admin_entries }).toEqual({
      id: r.shop_payment_id,
      flagged: false,
      admin: 0,
    });
  }
  expect(books.createdTwice).toBe(0);
  expect(books.lost).toBe(0);
  expect(books.wrong).toBe(0);
  expect(books.booksEqual).toBe(true);
});
