// Over 500 lines on purpose: one app and database, started once in its beforeAll, serve all its
// tests; a split would start another.
import { Client } from 'pg';
import { Amount } from '../../src/common/money';
import { GatewayService } from '../../src/gateway';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { admin, auth, PAYOUT_SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYOUT } from '../support/payways';

/**
 * Payouts against the sandbox and a real PostgreSQL: the create answer, fatal and non-fatal
 * errors, time-outs with and without the payout created, duplicates, polling to a final status
 * and to needs_attention, idempotent replays, and the balance.
 */
const CARD = '4111111111111111';
const ENV = { PAYOUT_POLL_INTERVAL_S: '0.2', PAYOUT_POLL_MAX_S: '3', WATCH_INTERVAL_S: '1' };

let ctx: TestContext;
let db: Client;
let seq = 0;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const newId = (): string => `po-${Date.now()}-${++seq}`;

function payoutBody(
  shopPaymentId: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    shopPaymentId,
    amount: '1000.00',
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway: PAYOUT.card,
    account: CARD,
    ...overrides,
  };
}

/** Gateway calls the sandbox received about one payout (by shop_payment_id or its withdraw id). */
function callsFor(shopPaymentId: string, path: string): number {
  const withdrawIds = new Set(
    [...ctx.sandbox.state.payouts.values()]
      .filter((p) => p.shopPaymentId === shopPaymentId)
      .map((p) => String(p.id)),
  );
  return ctx.sandbox.state.requests.filter((r) => {
    if (r.path !== path) return false;
    const body = r.body as Record<string, unknown>;
    return body.shop_payment_id === shopPaymentId || withdrawIds.has(String(body.withdraw_id));
  }).length;
}

function gatewayPayoutsWith(shopPaymentId: string): number {
  return [...ctx.sandbox.state.payouts.values()].filter((p) => p.shopPaymentId === shopPaymentId)
    .length;
}

async function fault(body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/faults`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

async function getPayout(shopPaymentId: string): Promise<Record<string, unknown>> {
  const res = await ctx.http.get(`/api/v1/payouts/${shopPaymentId}`).set(auth());
  expect(res.status).toBe(200);
  return res.body as Record<string, unknown>;
}

/** Runs the poller by hand until the payout's status satisfies `done` (or the time is up). */
async function pollUntil(
  shopPaymentId: string,
  done: (status: string) => boolean,
  maxMs = 8000,
): Promise<Record<string, unknown>> {
  const poller = ctx.service.app.get(PayoutPoller);
  const until = Date.now() + maxMs;
  for (;;) {
    await poller.runOnce();
    const p = await getPayout(shopPaymentId);
    if (done(p.status as string) || Date.now() > until) return p;
    await sleep(100);
  }
}

async function auditTrail(
  shopPaymentId: string,
): Promise<Array<{ from_status: string | null; to_status: string; cause: string }>> {
  const r = await db.query(
    `SELECT from_status, to_status, cause FROM events WHERE entity_type = 'payout' AND entity_id = $1 ORDER BY id`,
    [shopPaymentId],
  );
  return r.rows as Array<{ from_status: string | null; to_status: string; cause: string }>;
}

beforeAll(async () => {
  ctx = await startTestApp({ env: ENV });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

afterEach(() => {
  ctx.sandbox.state.faults.clear();
  ctx.sandbox.state.settings.timeScale = 0.001;
});

describe('POST /api/v1/payouts', () => {
  it('creates the payout, polls it to success over several polls, and keeps the account only masked and sealed', async () => {
    ctx.sandbox.state.settings.timeScale = 0.5; // each sandbox step ~750 ms: several 200 ms polls
    const id = newId();
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(id));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      shopPaymentId: id,
      status: 'processing',
      gatewayStatus: 3,
      amount: '1000.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      psCurrency: 643,
      payway: PAYOUT.card,
      account: '411111******1111',
      errorCode: null,
    });
    expect(res.body.withdrawId).toMatch(/^\d+$/);
    expect(res.body.payeeReceive).toBe('1000.00');
    expect(res.body.shopWriteOff).toBe('1040.00');
    expect(JSON.stringify(res.body)).not.toContain(CARD);

    const final = await pollUntil(id, (s) => s === 'succeeded');
    expect(final).toMatchObject({ status: 'succeeded', gatewayStatus: 5, nextPollAt: null });
    expect(callsFor(id, 'withdraw/status')).toBeGreaterThanOrEqual(2);
    expect(callsFor(id, 'withdraw/create')).toBe(1);

    const row = await db.query(
      `SELECT account_sealed, account_masked, poll_count, lease_until FROM payouts WHERE shop_payment_id = $1`,
      [id],
    );
    expect(row.rows[0].account_sealed).not.toContain(CARD);
    expect(row.rows[0].account_masked).toBe('411111******1111');
    expect(row.rows[0].poll_count).toBeGreaterThanOrEqual(2);
    expect(row.rows[0].lease_until).toBeNull();

    const trail = await auditTrail(id);
    expect(trail[0]).toMatchObject({
      from_status: 'pending',
      to_status: 'processing',
      cause: 'api',
    });
    expect(trail[trail.length - 1]).toMatchObject({
      to_status: 'succeeded',
      cause: 'reconciliation',
    });

    // A final payout is not polled again.
    const statusCalls = callsFor(id, 'withdraw/status');
    await sleep(300);
    await ctx.service.app.get(PayoutPoller).runOnce();
    expect(callsFor(id, 'withdraw/status')).toBe(statusCalls);
  });

  it('replays the stored answer for the same body, 409 for another, one gateway call for concurrent repeats', async () => {
    const id = newId();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(id)),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(202));
    for (const r of responses) expect(r.body).toEqual(responses[0].body);
    expect(callsFor(id, 'withdraw/create')).toBe(1);

    const replay = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(id));
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual(responses[0].body);

    const conflict = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(payoutBody(id, { amount: '1000.01' }));
    expect(conflict.status).toBe(409);
    expect(conflict.headers['content-type']).toMatch(/application\/problem\+json/);
    const otherAccount = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(payoutBody(id, { account: '4111111111111112' }));
    expect(otherAccount.status).toBe(409);
    expect(callsFor(id, 'withdraw/create')).toBe(1);
  });

  it('ends at once on a rejection in the create answer: no status call', async () => {
    const id = newId();
    const res = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(payoutBody(id, { payway: PAYOUT.sandboxCard('reject') }));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'rejected', gatewayStatus: 6, nextPollAt: null });
    await sleep(400);
    await ctx.service.app.get(PayoutPoller).runOnce();
    expect(callsFor(id, 'withdraw/status')).toBe(0);
    expect(callsFor(id, 'withdraw/shop_payment_status')).toBe(0);
    expect((await getPayout(id)).status).toBe('rejected');
  });

  it('fails on a fatal error, without polling', async () => {
    await fault({ path: 'withdraw/create', fault: 'fatal' });
    const id = newId();
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(id));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: 'failed',
      errorCode: 10,
      withdrawId: null,
      nextPollAt: null,
    });
    await sleep(400);
    await ctx.service.app.get(PayoutPoller).runOnce();
    expect(callsFor(id, 'withdraw/shop_payment_status')).toBe(0);
    expect(gatewayPayoutsWith(id)).toBe(0);
  });

  it('keeps polling after a non-fatal error and finds the payout by shop_payment_id', async () => {
    await fault({ path: 'withdraw/create', fault: 'nonfatal' });
    const id = newId();
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(id));
    expect(res.body).toMatchObject({ status: 'processing', errorCode: 100, withdrawId: null });
    const final = await pollUntil(id, (s) => s === 'succeeded');
    expect(final.status).toBe('succeeded');
    expect(final.withdrawId).toMatch(/^\d+$/);
    expect(callsFor(id, 'withdraw/create')).toBe(1);
    expect(gatewayPayoutsWith(id)).toBe(1);
  });

  it('after a time-out with the payout created, finds it by shop_payment_status and never creates again', async () => {
    await fault({ path: 'withdraw/create', fault: 'timeout_done', delayMs: 3000 });
    const id = newId();
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(id));
    expect(res.status).toBe(202);
    // The first status question waits a poll interval: the create may still be in flight.
    expect(res.body).toMatchObject({ status: 'unknown', withdrawId: null });
    expect(callsFor(id, 'withdraw/shop_payment_status')).toBe(0);
    const final = await pollUntil(id, (s) => s === 'succeeded');
    expect(final.withdrawId).toMatch(/^\d+$/);
    expect(callsFor(id, 'withdraw/shop_payment_status')).toBeGreaterThanOrEqual(1);
    expect(final.status).toBe('succeeded');
    expect(callsFor(id, 'withdraw/create')).toBe(1);
    expect(gatewayPayoutsWith(id)).toBe(1);
    const trail = await auditTrail(id);
    expect(trail.map((e) => e.to_status)).toContain('unknown');
  });

  it('after a time-out without the payout, hears "absent" and creates it once more with the same id', async () => {
    await fault({ path: 'withdraw/create', fault: 'timeout_not_done', delayMs: 3000 });
    const id = newId();
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(id));
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('unknown');
    // Two gateway time-outs (4 s here) must pass before a second create: longer than this
    // file's 3 s poll deadline, which is not what this test is about.
    await db.query(
      `UPDATE payouts SET poll_deadline = now() + interval '60 seconds' WHERE shop_payment_id = $1`,
      [id],
    );
    const final = await pollUntil(id, (s) => s === 'succeeded', 15000);
    const creates = ctx.sandbox.state.requests.filter(
      (r) =>
        r.path === 'withdraw/create' && (r.body as Record<string, unknown>).shop_payment_id === id,
    );
    expect(creates).toHaveLength(2);
    // Measured from the service's own claim of the first call (its row, written just before the
    // call went out) to the sandbox's receipt of the second: the sandbox stamps a request when its
    // event loop gets to it, late by any lag of this busy process, so two sandbox stamps could be
    // closer together than the two sends were.
    const [{ created_at: claimedAt }] = (
      await db.query(`SELECT created_at FROM payouts WHERE shop_payment_id = $1`, [id])
    ).rows as Array<{ created_at: Date }>;
    expect(Date.parse(creates[1].time) - claimedAt.getTime()).toBeGreaterThanOrEqual(4000);
    const absentAnswers = ctx.sandbox.state.requests.filter(
      (r) =>
        r.path === 'withdraw/shop_payment_status' &&
        (r.body as Record<string, unknown>).shop_payment_id === id &&
        r.error_code === 7,
    );
    expect(absentAnswers.length).toBeGreaterThanOrEqual(1);
    expect(final.status).toBe('succeeded');
    expect(gatewayPayoutsWith(id)).toBe(1);
    const row = await db.query(`SELECT create_attempts FROM payouts WHERE shop_payment_id = $1`, [
      id,
    ]);
    expect(row.rows[0].create_attempts).toBe(2);
  });

  it('treats the duplicate error as "exists": looks the payout up, never creates another', async () => {
    const id = newId();
    const created = await ctx.service.app.get(GatewayService).createWithdraw({
      shop_payment_id: id,
      amount: '1000.00',
      amount_type: 'ps_amount',
      shop_currency: 643,
      payway: PAYOUT.card,
      account: CARD,
    });
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(id));
    expect(res.status).toBe(202);
    // It exists: its status is asked on the next poll, never a second create.
    expect(res.body.status).toBe('unknown');
    const found = await pollUntil(id, (s) => s !== 'unknown');
    expect(found.withdrawId).toBe(String(created.id));
    expect(['processing', 'succeeded']).toContain(found.status);
    const creates = ctx.sandbox.state.requests.filter(
      (r) =>
        r.path === 'withdraw/create' && (r.body as Record<string, unknown>).shop_payment_id === id,
    );
    expect(creates).toHaveLength(2);
    expect(creates[1].error_code).toBe(6);
    expect(gatewayPayoutsWith(id)).toBe(1);
    expect((await pollUntil(id, (s) => s === 'succeeded')).status).toBe('succeeded');
  });

  it("moves a polled payout's next poll an interval ahead, so the ticks in between ask nothing", async () => {
    const id = newId();
    const res = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(payoutBody(id, { payway: PAYOUT.sandboxCard('never_final') }));
    expect(res.body.status).toBe('processing');
    const db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    try {
      await db.query(
        `UPDATE payouts SET next_poll_at = now() - interval '1 second' WHERE shop_payment_id = $1`,
        [id],
      );
      const started = Date.now();
      await ctx.service.app.get(PayoutPoller).runOnce();
      const row = await db.query(
        `SELECT next_poll_at, poll_count FROM payouts WHERE shop_payment_id = $1`,
        [id],
      );
      expect(row.rows[0].poll_count).toBeGreaterThanOrEqual(1);
      // Not the past due time that made this round due (that would poll it again at every tick).
      expect((row.rows[0].next_poll_at as Date).getTime()).toBeGreaterThan(started);
    } finally {
      await db.end();
    }
  });

  it('flags a payout that never finishes as needs_attention at the deadline, and keeps polling it every WATCH_INTERVAL_S', async () => {
    const id = newId();
    const res = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(payoutBody(id, { payway: PAYOUT.sandboxCard('never_final') }));
    expect(res.body.status).toBe('processing');
    const final = await pollUntil(id, (s) => s === 'needs_attention', 10000);
    expect(final).toMatchObject({ status: 'needs_attention', needsAttention: true });
    expect(final.nextPollAt).not.toBeNull();
    expect(final.attentionReason).toMatch(/^deadline:/);
    // updated_at is the flagging transaction's start, which may precede the deadline check by
    // a few milliseconds.
    expect(Date.parse(final.updatedAt as string)).toBeGreaterThanOrEqual(
      Date.parse(final.pollDeadline as string) - 1000,
    );
    // Asked repeatedly until the deadline; how many times depends on the machine's speed.
    expect(callsFor(id, 'withdraw/status')).toBeGreaterThanOrEqual(2);

    const calls = callsFor(id, 'withdraw/status');
    await sleep(300);
    await ctx.service.app.get(PayoutPoller).runOnce();
    expect(callsFor(id, 'withdraw/status')).toBe(calls);
    // A watch interval (1 s here) later it is asked again: the flag did not stop the watch.
    await sleep(1000);
    await ctx.service.app.get(PayoutPoller).runOnce();
    expect(callsFor(id, 'withdraw/status')).toBe(calls + 1);

    const listed = await ctx.http.get('/api/v1/admin/payouts?status=needs_attention').set(admin());
    expect(listed.status).toBe(200);
    expect(
      (listed.body.items as Array<{ shopPaymentId: string }>).map((p) => p.shopPaymentId),
    ).toContain(id);
    expect((await ctx.http.get('/api/v1/admin/payouts').set(auth())).status).toBe(403);

    const reconciled = await ctx.http.post(`/api/v1/admin/payouts/${id}/reconcile`).set(admin());
    expect(reconciled.status).toBe(200);
    expect(reconciled.body.status).toBe('needs_attention');
    expect(callsFor(id, 'withdraw/status')).toBe(calls + 2);
  });

  it('a payout flagged at its deadline, rechecked while still sent, settles by itself when the gateway pays it', async () => {
    const id = newId();
    await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(payoutBody(id, { payway: PAYOUT.sandboxCard('never_final') }));
    expect((await pollUntil(id, (s) => s === 'needs_attention', 10000)).status).toBe(
      'needs_attention',
    );
    // The operator rechecks: the gateway still says 3 (sent).
    const before = callsFor(id, 'withdraw/status');
    const rechecked = await ctx.http
      .post(`/api/v1/admin/payouts/${id}/resolve`)
      .set(admin())
      .send({ action: 'recheck' });
    expect(rechecked.status).toBe(200);
    expect(callsFor(id, 'withdraw/status')).toBe(before + 1);
    expect(rechecked.body).toMatchObject({
      status: 'needs_attention',
      gatewayStatus: 3,
      needsAttention: true,
    });
    expect(rechecked.body.nextPollAt).not.toBeNull();
    const queue = await ctx.http.get('/api/v1/admin/attention').set(admin());
    expect(
      (queue.body.items as Array<{ objectType: string; id: string }>).filter(
        (i) => i.objectType === 'payout' && i.id === id,
      ),
    ).toHaveLength(1);

    // The gateway pays it later (as finishPayout does: status 5, the write-off debited).
    const gp = [...ctx.sandbox.state.payouts.values()].find((p) => p.shopPaymentId === id)!;
    gp.status = 5;
    gp.updated = new Date();
    ctx.sandbox.state.unfreeze(gp.shopId, gp.shopCurrency, gp.shopWriteOff, true);
    await db.query(`UPDATE payouts SET next_poll_at = now() WHERE shop_payment_id = $1`, [id]);
    await ctx.service.app.get(PayoutPoller).runOnce();

    const settled = await getPayout(id);
    expect(settled).toMatchObject({
      status: 'succeeded',
      gatewayStatus: 5,
      needsAttention: false,
      attentionReason: null,
      nextPollAt: null,
    });
    const events = await db.query(
      `SELECT type, cause FROM events WHERE entity_type = 'payout' AND entity_id = $1 AND type IS NOT NULL ORDER BY id`,
      [id],
    );
    const tail = events.rows.slice(-2) as Array<{ type: string; cause: string }>;
    expect(tail).toEqual([
      { type: 'payout.succeeded', cause: 'reconciliation' },
      { type: 'payout.attention_resolved', cause: 'gateway' },
    ]);
    const queueAfter = await ctx.http.get('/api/v1/admin/attention').set(admin());
    expect((queueAfter.body.items as Array<{ id: string }>).map((i) => i.id)).not.toContain(id);
  });

  it('a fatal answer to a repeated create leaves the payout unknown, flagged and polled', async () => {
    const id = newId();
    // The first create's connection is reset without an answer (its outcome unknown); the
    // gateway then says absent, so it is sent again, and that repeat is refused as fatal.
    await fault({ path: 'withdraw/create', fault: 'reset' });
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(id));
    expect(res.body.status).toBe('unknown');
    await fault({ path: 'withdraw/create', fault: 'fatal' });
    await db.query(
      `UPDATE payouts SET last_create_at = now() - interval '1 hour', next_poll_at = now(),
              poll_deadline = now() + interval '60 seconds' WHERE shop_payment_id = $1`,
      [id],
    );
    await ctx.service.app.get(PayoutPoller).runOnce();
    expect(callsFor(id, 'withdraw/create')).toBe(2);
    const p = await getPayout(id);
    expect(p).toMatchObject({ status: 'unknown', needsAttention: true });
    expect(p.attentionReason).toMatch(/^unsettled_recreate:/);
    expect(p.nextPollAt).not.toBeNull();
  });

  it('rejects bad input before writing or calling the gateway, naming the field', async () => {
    const before = ctx.sandbox.state.requests.filter((r) => r.path === 'withdraw/create').length;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ account: '4111' }, 'account'],
      [{ amount: '99.99' }, 'amount'],
      [{ amount: '100000.01' }, 'amount'],
      [{ amount: 1000 }, 'amount'],
      [{ payway: 'nope_rub' }, 'payway'],
      [{ payway: 'qiwi_topup_rub_to_card' }, 'payway'], // listed only with its scenario suffix
      [{ amountType: 'other' }, 'amountType'],
      [{ accountDetails: { bik: '1' } }, 'accountDetails.bik'],
    ];
    for (const [overrides, field] of cases) {
      const id = newId();
      const res = await ctx.http
        .post('/api/v1/payouts')
        .set(auth())
        .send(payoutBody(id, overrides));
      expect(res.status).toBe(400);
      expect((res.body.errors as Array<{ field: string }>).map((e) => e.field)).toContain(field);
      expect(JSON.stringify(res.body)).not.toContain(CARD);
      const rows = await db.query(`SELECT 1 FROM payouts WHERE shop_payment_id = $1`, [id]);
      expect(rows.rowCount).toBe(0);
    }
    expect(ctx.sandbox.state.requests.filter((r) => r.path === 'withdraw/create').length).toBe(
      before,
    );
    expect((await ctx.http.post('/api/v1/payouts').send(payoutBody(newId()))).status).toBe(401);
  });
});

describe('payout reads, quote, account check and balance', () => {
  it('lists payouts by status with a cursor', async () => {
    const ids = [newId(), newId(), newId()];
    for (const id of ids) {
      await ctx.http
        .post('/api/v1/payouts')
        .set(auth())
        .send(payoutBody(id, { payway: PAYOUT.sandboxCard('reject') }));
    }
    const first = await ctx.http.get('/api/v1/payouts?status=rejected&limit=2').set(auth());
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await ctx.http
      .get(`/api/v1/payouts?status=rejected&limit=2&cursor=${first.body.nextCursor as string}`)
      .set(auth());
    const seen = [...first.body.items, ...second.body.items].map(
      (p: { shopPaymentId: string }) => p.shopPaymentId,
    );
    for (const id of ids) expect(seen).toContain(id);
    expect(new Set(seen).size).toBe(seen.length);
    for (const p of [...first.body.items, ...second.body.items] as Array<{
      status: string;
      account: string;
    }>) {
      expect(p.status).toBe('rejected');
      expect(p.account).toBe('411111******1111');
    }
    expect((await ctx.http.get('/api/v1/payouts/no-such-payout').set(auth())).status).toBe(404);
  });

  it('quotes with withdraw/try and checks an account with check_account', async () => {
    const quote = await ctx.http
      .post('/api/v1/payouts/quote')
      .set(auth())
      .send({ amount: '1000.00', amountType: 'ps_amount', shopCurrency: 643, payway: PAYOUT.card });
    expect(quote.status).toBe(200);
    expect(quote.body).toMatchObject({
      payeeReceive: '1000.00',
      shopWriteOff: '1040.00',
      psCurrency: 643,
      shopCurrency: 643,
    });
    expect(quote.body.accountInfoConfig.account.regex).toBe('^\\d{16,19}$');

    const ok = await ctx.http
      .post('/api/v1/payouts/check-account')
      .set(auth())
      .send({ payway: PAYOUT.card, amount: '1000.00', account: CARD });
    expect(ok.status).toBe(200);
    expect(ok.body.exists).toBe(true);
    const missing = await ctx.http
      .post('/api/v1/payouts/check-account')
      .set(auth())
      .send({ payway: PAYOUT.card, amount: '1000.00', account: '4111111111110000' });
    expect(missing.body.exists).toBe(false);
  });

  it('another shop currency: quoted and created through withdraw/try, bounds held in the payway’s currency', async () => {
    // 100.00 USD written off at 92.5 = 9250.00 RUB; fee 1% + 30 = 122.50; the payee gets 9127.50.
    const fx = { amount: '100.00', amountType: 'shop_amount', shopCurrency: 840 };
    const quote = await ctx.http
      .post('/api/v1/payouts/quote')
      .set(auth())
      .send({ ...fx, payway: PAYOUT.card });
    expect(quote.status).toBe(200);
    expect(quote.body).toMatchObject({
      payeeReceive: '9127.50',
      psCurrency: 643,
      shopCurrency: 840,
    });

    const id = newId();
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(id, fx));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ shopCurrency: 840, psCurrency: 643, payeeReceive: '9127.50' });
    expect(callsFor(id, 'withdraw/create')).toBe(1);

    // 1.20 USD = 111.00 RUB, minus the fee (31.11): the payee would get 79.89, under 100.0.
    const small = newId();
    const refused = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(payoutBody(small, { ...fx, amount: '1.20' }));
    expect(refused.status).toBe(400);
    expect(refused.body.errors.map((e: { field: string }) => e.field)).toEqual(['amount']);
    expect(callsFor(small, 'withdraw/create')).toBe(0);
    const rows = await db.query('SELECT 1 FROM payouts WHERE shop_payment_id = $1', [small]);
    expect(rows.rowCount).toBe(0);
  });

  it('returns the balance with exact totals', async () => {
    const res = await ctx.http.get('/api/v1/balance').set(auth());
    expect(res.status).toBe(200);
    expect(res.body.shopId).toBe(PAYOUT_SHOP_ID);
    const rub = (res.body.balances as Array<Record<string, unknown>>).find(
      (b) => b.currency === 643,
    )!;
    for (const k of ['available', 'hold', 'frozen', 'total']) expect(typeof rub[k]).toBe('string');
    const sandboxRub = ctx.sandbox.state.balance(PAYOUT_SHOP_ID, 643);
    const expected = Amount.fromText(
      sandboxRub.available.plus(sandboxRub.hold).plus(sandboxRub.frozen).toString(),
    );
    expect(Amount.fromText(rub.total as string).eq(expected)).toBe(true);
    expect(
      Amount.fromText(rub.total as string).eq(
        Amount.fromText(rub.available as string)
          .plus(Amount.fromText(rub.hold as string))
          .plus(Amount.fromText(rub.frozen as string)),
      ),
    ).toBe(true);
  });
});
