import { jest } from '@jest/globals';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { claimDue } from '../../src/jobs/claim';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { PayoutProcessor } from '../../src/payouts/payout-processor';
import { auth, PAYOUT_SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYOUT } from '../support/payways';
import { statusCallsOf } from '../support/payout-rows';

/**
 * The poller's batch path: a round whose answer changes nothing is finished with its
 * batch by one statement; everything else goes through the per-row path. Attacked here on the
 * real database: the batch statement against the per-row path on the same rows, two instances
 * racing, rows changed between the claim and the batch write, a deadline reached in a batch.
 */
const INTERVAL_S = 1;
const WATCH_INTERVAL_S = 5;
const ENV = {
  PAYOUT_POLL_INTERVAL_S: String(INTERVAL_S),
  PAYOUT_POLL_MAX_S: '3600',
  PAYOUT_POLL_CONCURRENCY: '8',
  WATCH_INTERVAL_S: String(WATCH_INTERVAL_S),
};
const NEVER_FINAL = PAYOUT.sandboxCard('never_final');
const DEADLINE_FLAG =
  'deadline: no final status by the poll deadline; still polled until the watch ends';

let a: TestContext;
let b: TestContext;
let db: Client;
let seq = 0;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Row {
  id: string;
  shop_payment_id: string;
  status: string;
  gateway_status: number | null;
  withdraw_id: string | null;
  ps_currency: number | null;
  payee_receive: string | null;
  shop_write_off: string | null;
  error_code: number | null;
  gateway_message: string | null;
  last_error: string | null;
  needs_attention: boolean;
  attention_reason: string | null;
  poll_count: number;
  next_poll_at: Date | null;
  lease_until: Date | null;
  lease_owner: string | null;
  finished_at: Date | null;
}

/** Payouts created through the API (their rows as the create's answer left them), due now. */
async function createDue(n: number): Promise<Row[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const shopPaymentId = `quiet-${process.pid}-${++seq}`;
    const res = await a.http.post('/api/v1/payouts').set(auth()).send({
      shopPaymentId,
      amount: '100.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: NEVER_FINAL,
      account: '4111111111111111',
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'processing', gatewayStatus: 3 });
    ids.push(shopPaymentId);
  }
  await db.query(
    `UPDATE payouts SET next_poll_at = now() - interval '1 second' WHERE shop_payment_id = ANY($1)`,
    [ids],
  );
  return rows(ids);
}

async function rows(shopPaymentIds: string[]): Promise<Row[]> {
  const res = await db.query<Row>(
    `SELECT id, shop_payment_id, status, gateway_status, withdraw_id::text, ps_currency,
            payee_receive::text, shop_write_off::text, error_code, gateway_message, last_error,
            needs_attention, attention_reason, poll_count, next_poll_at, lease_until, lease_owner,
            finished_at
       FROM payouts WHERE shop_payment_id = ANY($1) ORDER BY shop_payment_id`,
    [shopPaymentIds],
  );
  return res.rows;
}

async function row(shopPaymentId: string): Promise<Row> {
  return (await rows([shopPaymentId]))[0];
}

/** Audit entries (the shop's events) of one payout. */
async function eventCount(shopPaymentId: string): Promise<number> {
  const res = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM events WHERE entity_type = 'payout' AND entity_id = $1`,
    [shopPaymentId],
  );
  return res.rows[0].n;
}

/** withdraw/status calls per withdraw id, with their times, from the sandbox's log. */
const statusCalls = (): Map<string, number[]> => statusCallsOf(a.sandbox.state.requests);

const pollerOf = (ctx: TestContext): PayoutPoller => ctx.service.app.get(PayoutPoller);
const processorOf = (ctx: TestContext): PayoutProcessor => ctx.service.app.get(PayoutProcessor);

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

beforeEach(async () => {
  // Earlier tests' payouts wait: each test polls its own rows only.
  await db.query(
    `UPDATE payouts SET next_poll_at = now() + interval '1 day' WHERE next_poll_at IS NOT NULL`,
  );
  a.sandbox.state.requests = [];
  a.sandbox.state.settings.latencyMs = 0;
});

afterEach(() => {
  jest.restoreAllMocks();
});

describe.each<[string, (shopPaymentIds: string[]) => Promise<void>]>([
  ['processing, an hour before its deadline', async () => {}],
  [
    'flagged at its deadline, polled by the watch',
    async (ids) => {
      await db.query(
        `UPDATE payouts SET status = 'needs_attention', needs_attention = true,
                attention_reason = $2, attention_at = now(), poll_deadline = now() - interval '1 minute'
          WHERE shop_payment_id = ANY($1)`,
        [ids, DEADLINE_FLAG],
      );
    },
  ],
  [
    'its deadline within the interval',
    async (ids) => {
      await db.query(
        `UPDATE payouts SET poll_deadline = now() + interval '800 milliseconds'
          WHERE shop_payment_id = ANY($1)`,
        [ids],
      );
    },
  ],
])('a quiet round (%s)', (_name, shape) => {
  it('is finished by the batch statement exactly as the per-row path finishes it', async () => {
    const [viaBatch, viaRow] = await createDue(2);
    await shape([viaBatch.shop_payment_id, viaRow.shop_payment_id]);
    const before = await Promise.all([viaBatch, viaRow].map((r) => row(r.shop_payment_id)));
    const events = await Promise.all([viaBatch, viaRow].map((r) => eventCount(r.shop_payment_id)));
    const processor = processorOf(a);
    const perRow = jest.spyOn(processor, 'recordStatus');
    const batch = jest.spyOn(processor, 'finishQuietRounds');

    // The per-row path on one row (claimed by an owner of its own, as the poller claims).
    await db.query(`UPDATE payouts SET next_poll_at = now() + interval '1 day' WHERE id = $1`, [
      viaBatch.id,
    ]);
    const dataSource = a.service.app.get(DataSource);
    const claimed = await claimDue(dataSource, {
      table: 'payouts',
      dueColumn: 'next_poll_at',
      limit: 10,
      leaseSeconds: 30,
      owner: 'per-row',
      shopId: PAYOUT_SHOP_ID,
    });
    expect(claimed).toEqual([viaRow.id]);
    const rowStarted = Date.now();
    await processor.checkOnce(dataSource, viaRow.id, 'reconciliation', {
      owner: 'per-row',
      mayCreate: true,
      by: undefined,
    });
    const rowDone = Date.now();
    expect(perRow).toHaveBeenCalledTimes(1);
    perRow.mockClear();

    // The poller's batch path on the other.
    await db.query(`UPDATE payouts SET next_poll_at = now() - interval '1 second' WHERE id = $1`, [
      viaBatch.id,
    ]);
    const batchStarted = Date.now();
    expect(await pollerOf(a).runOnce()).toBe(1);
    const batchDone = Date.now();
    expect(perRow).not.toHaveBeenCalled();
    expect(batch).toHaveBeenCalledTimes(1);
    expect(await batch.mock.results[0].value).toEqual(new Set());

    const [afterBatch, afterRow] = await Promise.all(
      [viaBatch, viaRow].map((r) => row(r.shop_payment_id)),
    );
    const comparable = (r: Row, b: Row) => ({
      ...r,
      id: undefined,
      shop_payment_id: undefined,
      withdraw_id: r.withdraw_id === b.withdraw_id ? 'same' : r.withdraw_id,
      next_poll_at: undefined,
    });
    expect(comparable(afterBatch, before[0])).toEqual(comparable(afterRow, before[1]));
    expect(afterBatch).toMatchObject({
      poll_count: before[0].poll_count + 1,
      lease_until: null,
      lease_owner: null,
    });
    expect(afterBatch.status).toBe(before[0].status);
    expect(afterBatch.attention_reason).toBe(before[0].attention_reason);
    // The same next poll, relative to when each round ran.
    const nextOf = (r: Row, from: number, to: number) => [
      r.next_poll_at!.getTime() - to,
      r.next_poll_at!.getTime() - from,
    ];
    const [batchMin, batchMax] = nextOf(afterBatch, batchStarted, batchDone);
    const [rowMin, rowMax] = nextOf(afterRow, rowStarted, rowDone);
    expect(batchMax).toBeGreaterThanOrEqual(rowMin - 1500);
    expect(batchMin).toBeLessThanOrEqual(rowMax + 1500);
    // No event for either: nothing changed.
    expect(await eventCount(viaBatch.shop_payment_id)).toBe(events[0]);
    expect(await eventCount(viaRow.shop_payment_id)).toBe(events[1]);
  }, 60000);
});

it('a quiet round sets its next poll one interval on, or at the deadline when that is sooner', async () => {
  const [plain, nearDeadline] = await createDue(2);
  await db.query(
    `UPDATE payouts SET poll_deadline = now() + interval '600 milliseconds' WHERE id = $1`,
    [nearDeadline.id],
  );
  const { rows: deadline } = await db.query<{ at: Date }>(
    `SELECT poll_deadline AS at FROM payouts WHERE id = $1`,
    [nearDeadline.id],
  );
  const started = Date.now();
  await pollerOf(a).runOnce();
  const done = Date.now();
  const [p, d] = await Promise.all([plain, nearDeadline].map((r) => row(r.shop_payment_id)));
  expect(p.next_poll_at!.getTime()).toBeGreaterThanOrEqual(started + INTERVAL_S * 1000 - 50);
  expect(p.next_poll_at!.getTime()).toBeLessThanOrEqual(done + INTERVAL_S * 1000 + 50);
  expect(d.next_poll_at).toEqual(deadline[0].at);
  expect([p.poll_count, d.poll_count]).toEqual([1, 1]);
});

it('two instances racing over the same rows poll each at most once per interval, all quiet', async () => {
  const created = await createDue(40);
  const ids = created.map((r) => r.shop_payment_id);
  const pollers = [pollerOf(a), pollerOf(b)];
  const perRow = [processorOf(a), processorOf(b)].map((p) => jest.spyOn(p, 'recordStatus'));
  const events = await Promise.all(ids.map(eventCount));
  const polledBy = [0, 0];
  const until = Date.now() + 3.5 * INTERVAL_S * 1000;
  while (Date.now() < until) {
    const counts = await Promise.all(pollers.map((p) => p.runOnce()));
    counts.forEach((c, i) => (polledBy[i] += c));
    await sleep(10);
  }

  const calls = statusCalls();
  const after = await rows(ids);
  let total = 0;
  for (const r of after) {
    const times = (calls.get(r.withdraw_id!) ?? []).sort((x, y) => x - y);
    expect(times.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < times.length; i++)
      expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(INTERVAL_S * 1000 - 50);
    // Each call counted once on its row: no round lost, none written twice.
    expect(r.poll_count).toBe(times.length);
    expect(r).toMatchObject({ status: 'processing', lease_owner: null, lease_until: null });
    total += times.length;
  }
  expect(polledBy[0] + polledBy[1]).toBe(total);
  expect(polledBy[0]).toBeGreaterThan(0);
  expect(polledBy[1]).toBeGreaterThan(0);
  for (const spy of perRow) expect(spy).not.toHaveBeenCalled();
  expect(await Promise.all(ids.map(eventCount))).toEqual(events);
}, 60000);

it('a row changed between the claim and the batch write is neither lost nor overwritten', async () => {
  const [settled, flagged, takenOver, untouched] = await createDue(4);
  const processor = processorOf(a);
  const perRow = jest.spyOn(processor, 'recordStatus');
  a.sandbox.state.settings.latencyMs = 500;
  const tick = pollerOf(a).runOnce();
  // Every row claimed and asked; the answers are on their way.
  for (let i = 0; statusCalls().size < 4; i++) {
    if (i > 200) throw new Error('the rows were not asked');
    await sleep(10);
  }
  const claimed = await rows([untouched.shop_payment_id]);
  expect(claimed[0].lease_owner).toBe(pollerOf(a).instanceId);
  // Meanwhile other writers: an operator settles one and flags another; a third row's lease is
  // taken over by another instance (as after an expired lease).
  await db.query(
    `UPDATE payouts SET status = 'succeeded', finished_at = now(), next_poll_at = NULL WHERE id = $1`,
    [settled.id],
  );
  await db.query(
    `UPDATE payouts SET status = 'needs_attention', needs_attention = true,
            attention_reason = 'mismatch: an operator looks', attention_at = now() WHERE id = $1`,
    [flagged.id],
  );
  await db.query(
    `UPDATE payouts SET lease_owner = 'other', lease_until = now() + interval '1 minute' WHERE id = $1`,
    [takenOver.id],
  );
  expect(await tick).toBe(4);
  a.sandbox.state.settings.latencyMs = 0;

  const [s, f, t, u] = await Promise.all(
    [settled, flagged, takenOver, untouched].map((r) => row(r.shop_payment_id)),
  );
  // The settled row keeps its final status and is no longer scheduled (a blind batch write
  // would have set a next poll); its round is counted and its lease released.
  expect(s).toMatchObject({ status: 'succeeded', next_poll_at: null, poll_count: 1 });
  expect(s).toMatchObject({ lease_owner: null, lease_until: null });
  // The flagged row keeps its flag and status; its round is counted and the next poll set.
  expect(f).toMatchObject({
    status: 'needs_attention',
    needs_attention: true,
    attention_reason: 'mismatch: an operator looks',
    poll_count: 1,
    lease_owner: null,
  });
  expect(f.next_poll_at!.getTime()).toBeGreaterThan(Date.now());
  // The row another instance holds now is left to it: nothing written by this one.
  expect(t).toMatchObject({ lease_owner: 'other', poll_count: 0 });
  // The untouched row went the batch way.
  expect(u).toMatchObject({ status: 'processing', poll_count: 1, lease_owner: null });
  // The changed rows took the per-row path with the answer in hand: asked once each.
  expect(perRow.mock.calls.map((c) => c[1]).sort()).toEqual(
    [settled.id, flagged.id, takenOver.id].sort(),
  );
  const calls = statusCalls();
  for (const r of [s, f, t, u]) expect(calls.get(r.withdraw_id!)).toHaveLength(1);
}, 60000);

it('a row that reaches its deadline in a batch takes the per-row path and is flagged', async () => {
  const [reaching, other] = await createDue(2);
  await db.query(`UPDATE payouts SET poll_deadline = now() WHERE id = $1`, [reaching.id]);
  const events = await eventCount(reaching.shop_payment_id);
  const processor = processorOf(a);
  const perRow = jest.spyOn(processor, 'recordStatus');

  const started = Date.now();
  expect(await pollerOf(a).runOnce()).toBe(2);
  expect(perRow.mock.calls.map((c) => c[1])).toEqual([reaching.id]);
  const flagged = await row(reaching.shop_payment_id);
  expect(flagged).toMatchObject({
    status: 'needs_attention',
    needs_attention: true,
    attention_reason: DEADLINE_FLAG,
    poll_count: 1,
    lease_owner: null,
  });
  // Still watched, every WATCH_INTERVAL_S.
  expect(flagged.next_poll_at!.getTime()).toBeGreaterThanOrEqual(
    started + WATCH_INTERVAL_S * 1000 - 100,
  );
  // The status change and the flag are events.
  expect(await eventCount(reaching.shop_payment_id)).toBe(events + 2);
  expect(await row(other.shop_payment_id)).toMatchObject({ status: 'processing', poll_count: 1 });

  // Its next watch round changes nothing: quiet, flag and events as they were.
  perRow.mockClear();
  await db.query(`UPDATE payouts SET next_poll_at = now() - interval '1 second' WHERE id = $1`, [
    reaching.id,
  ]);
  expect(await pollerOf(a).runOnce()).toBe(1);
  expect(perRow).not.toHaveBeenCalled();
  expect(await row(reaching.shop_payment_id)).toMatchObject({
    status: 'needs_attention',
    attention_reason: DEADLINE_FLAG,
    poll_count: 2,
  });
  expect(await eventCount(reaching.shop_payment_id)).toBe(events + 2);
}, 60000);
