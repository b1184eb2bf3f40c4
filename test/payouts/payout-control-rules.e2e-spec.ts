import { Client } from 'pg';
import { GatewayService } from '../../src/gateway';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { admin, ADMIN_KEY, auth, startTestApp, type TestContext } from '../support/app';
import { createTestDatabase } from '../support/database';
import { PAYOUT } from '../support/payways';
import { ADMIN_KEY_2, bearer, callsFor, payoutBody, TEST_CARD, uniqueId } from '../support/payouts';

/**
 * The payout control rules (docs/api.md, "Control rules"; src/payouts/payout.rules.ts) on every
 * path, against the running service, the sandbox and a real PostgreSQL: a gateway record that is
 * not ours is no agreement for Accept; a payout counts on the day it is sent and the final
 * approval checks the caps; its watch runs from its send; approvals count only while their key
 * is configured, and never the creating key's.
 */
const ADMIN_KEY_3 = 'test-admin-key-third-01234567890';
const CARD = TEST_CARD;

const newId = uniqueId;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
type Row = Record<string, unknown>;

const body = payoutBody;
const createsSent = (ctx: TestContext, id: string): number => callsFor(ctx, 'withdraw/create', id);

async function payoutRow(db: Client, shopPaymentId: string): Promise<Row> {
  const r = await db.query(`SELECT * FROM payouts WHERE shop_payment_id = $1`, [shopPaymentId]);
  return r.rows[0] as Row;
}

async function pollUntil(
  ctx: TestContext,
  db: Client,
  shopPaymentId: string,
  done: (r: Row) => boolean,
  maxMs = 15000,
): Promise<Row> {
  const poller = ctx.service.app.get(PayoutPoller);
  const until = Date.now() + maxMs;
  for (;;) {
    await poller.runOnce();
    const r = await payoutRow(db, shopPaymentId);
    if (done(r) || Date.now() > until) return r;
    await sleep(100);
  }
}

async function eventTypes(db: Client, shopPaymentId: string): Promise<Array<string | null>> {
  const r = await db.query(
    `SELECT type FROM events WHERE entity_type = 'payout' AND entity_id = $1 ORDER BY id`,
    [shopPaymentId],
  );
  return r.rows.map((e: { type: string | null }) => e.type);
}

describe('one app: approvals at 5000.00, two admin keys', () => {
  let ctx: TestContext;
  let db: Client;
  beforeAll(async () => {
    ctx = await startTestApp({
      env: {
        PAYOUT_POLL_INTERVAL_S: '0.2',
        ADMIN_API_KEYS: `${ADMIN_KEY},${ADMIN_KEY_2}`,
        PAYOUT_APPROVAL_THRESHOLD: '643:5000.00',
      },
    });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  }, 120000);
  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  it('a foreign record under our id (another payout, 100.00, succeeded) is proof ours was never created: Accept succeeded is 409, failed is allowed with the note', async () => {
    const id = newId('foreign');
    // The gateway holds another payout under this id: 100.00, which succeeds.
    await ctx.service.app.get(GatewayService).createWithdraw({
      shop_payment_id: id,
      amount: '100.00',
      amount_type: 'shop_amount',
      shop_currency: 643,
      payway: PAYOUT.card,
      account: CARD,
    });
    const until = Date.now() + 10000;
    const theirs = () =>
      [...ctx.sandbox.state.payouts.values()].find((p) => p.shopPaymentId === id);
    while (theirs()?.status !== 5 && Date.now() < until) await sleep(100);
    expect(theirs()?.status).toBe(5);

    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '250.00'));
    expect(res.status).toBe(202);
    const flagged = await pollUntil(ctx, db, id, (r) => r.status === 'needs_attention');
    expect(flagged).toMatchObject({ status: 'needs_attention', needs_attention: true });
    expect(String(flagged.attention_reason)).toMatch(/^mismatch: .*amount 100/);
    // Recheck flags it again, never adopts it.
    await ctx.http
      .post(`/api/v1/admin/payouts/${id}/resolve`)
      .set(admin())
      .send({ action: 'recheck' })
      .expect(200);
    expect(await payoutRow(db, id)).toMatchObject({ status: 'needs_attention' });

    const claimed = await ctx.http
      .post(`/api/v1/admin/payouts/${id}/resolve`)
      .set(admin())
      .send({ action: 'accept', status: 'succeeded', note: 'the gateway says succeeded' });
    expect(claimed.status).toBe(409);
    expect(String(claimed.body.detail)).toContain("not this payout's");
    expect(await payoutRow(db, id)).toMatchObject({ status: 'needs_attention', finished_at: null });

    const truth = await ctx.http
      .post(`/api/v1/admin/payouts/${id}/resolve`)
      .set(admin())
      .send({ action: 'accept', status: 'failed', note: 'the record is another payout; ours was never made' });
    expect(truth.status).toBe(200);
    expect(truth.body).toMatchObject({ status: 'failed', needsAttention: false });
    const types = await eventTypes(db, id);
    expect(types).toContain('payout.failed');
    expect(types).not.toContain('payout.succeeded');
  });

  it('a payout approved long after its creation (past WATCH_MAX_S) is watched from its send and polled till final', async () => {
    const id = newId('late');
    const created = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '6000.00'));
    expect(created.body.status).toBe('awaiting_approval');
    // It waited eight days for approval (WATCH_MAX_S is seven).
    await db.query(
      `UPDATE payouts SET created_at = now() - interval '8 days' WHERE shop_payment_id = $1`,
      [id],
    );
    // The gateway takes a while to pay it: its first status rounds see it sent (3).
    ctx.sandbox.state.settings.timeScale = 5;
    const approved = await ctx.http
      .post(`/api/v1/admin/payouts/${id}/approve`)
      .set(admin())
      .send({});
    expect(approved.status).toBe(200);
    expect(createsSent(ctx, id)).toBe(1);
    // The first status round (the gateway says sent, 3): still watched, not `watch_ended`.
    await sleep(300);
    await ctx.service.app.get(PayoutPoller).runOnce();
    const first = await payoutRow(db, id);
    expect(first).toMatchObject({ status: 'processing', needs_attention: false, last_error: null });
    expect(first.next_poll_at).not.toBeNull();
    expect(first.sent_at).not.toBeNull();
    ctx.sandbox.state.settings.timeScale = 1;
    const final = await pollUntil(ctx, db, id, (r) => r.status === 'succeeded', 30000);
    expect(final).toMatchObject({ status: 'succeeded', needs_attention: false });
  });

  it('the admin key that created a payout never approves it (403 self-approval); another admin key does', async () => {
    const id = newId('self');
    const created = await ctx.http
      .post('/api/v1/payouts')
      .set(admin())
      .send(body(id, '7000.00'));
    expect(created.status).toBe(202);
    expect(created.body.status).toBe('awaiting_approval');
    const self = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin()).send({});
    expect(self.status).toBe(403);
    expect(self.body.type).toMatch(/\/self-approval$/);
    expect(createsSent(ctx, id)).toBe(0);
    const none = await db.query(
      `SELECT count(*)::int AS n FROM payout_approvals a JOIN payouts p ON p.id = a.payout_id WHERE p.shop_payment_id = $1`,
      [id],
    );
    expect((none.rows[0] as { n: number }).n).toBe(0);
    const other = await ctx.http
      .post(`/api/v1/admin/payouts/${id}/approve`)
      .set(bearer(ADMIN_KEY_2))
      .send({});
    expect(other.status).toBe(200);
    expect(createsSent(ctx, id)).toBe(1);
  });
});

describe('a payout counts against the daily caps of the day it is sent', () => {
  let ctx: TestContext;
  let db: Client;
  beforeAll(async () => {
    ctx = await startTestApp({
      env: {
        PAYOUT_POLL_INTERVAL_S: '0.2',
        PAYOUT_DAILY_CAP: '643:1000.00',
        PAYOUT_APPROVAL_THRESHOLD: '643:950.00',
      },
    });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  }, 120000);
  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  it('960.00 created yesterday and approved today counts today: the approval re-checks the cap (422, still awaiting); once the day has room it is sent and counts', async () => {
    const big = newId('mid');
    const created = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(big, '960.00'));
    expect(created.body.status).toBe('awaiting_approval');
    await db.query(
      `UPDATE payouts SET created_at = now() - interval '1 day' WHERE shop_payment_id = $1`,
      [big],
    );
    // Waiting for approval, it holds no share: 900.00 + 100.00 fill today's cap.
    const a = newId('mid');
    const b = newId('mid');
    expect((await ctx.http.post('/api/v1/payouts').set(auth()).send(body(a, '900.00'))).status).toBe(202);
    expect((await ctx.http.post('/api/v1/payouts').set(auth()).send(body(b, '100.00'))).status).toBe(202);

    const refused = await ctx.http.post(`/api/v1/admin/payouts/${big}/approve`).set(admin()).send({});
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ cap: 'daily', remaining: '0.00', requested: '960.00' });
    expect(await payoutRow(db, big)).toMatchObject({ status: 'awaiting_approval', sent_at: null });
    expect(createsSent(ctx, big)).toBe(0);
    const approvals = await db.query(
      `SELECT count(*)::int AS n FROM payout_approvals a JOIN payouts p ON p.id = a.payout_id WHERE p.shop_payment_id = $1`,
      [big],
    );
    expect((approvals.rows[0] as { n: number }).n).toBe(0);

    // The two were sent yesterday (their day is over): today has room, the approval sends it.
    await db.query(
      `UPDATE payouts SET sent_at = sent_at - interval '1 day', created_at = created_at - interval '1 day'
        WHERE shop_payment_id = ANY($1)`,
      [[a, b]],
    );
    const ok = await ctx.http.post(`/api/v1/admin/payouts/${big}/approve`).set(admin()).send({});
    expect(ok.status).toBe(200);
    expect(createsSent(ctx, big)).toBe(1);
    // It counts today, although it was created yesterday: 960.00 + 50.00 > 1000.00.
    const over = newId('mid');
    const after = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(over, '100.00'));
    expect(after.status).toBe(422);
    expect(after.body).toMatchObject({ cap: 'daily', used: '960.00', remaining: '40.00' });
    expect(createsSent(ctx, over)).toBe(0);
  });
});

describe('approvals count only while their key is configured', () => {
  it("a removed key's approval no longer counts after a restart; the creating key's never did", async () => {
    const database = await createTestDatabase();
    const env = (keys: string[]): Record<string, string> => ({
      PAYOUT_POLL_INTERVAL_S: '0.2',
      ADMIN_API_KEYS: keys.join(','),
      PAYOUT_APPROVAL_THRESHOLD: '643:5000.00',
      PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:20000.00',
    });
    let ctx = await startTestApp({
      env: env([ADMIN_KEY, ADMIN_KEY_2, ADMIN_KEY_3]),
      databaseUrl: database.url,
    });
    const sandbox = ctx.sandbox;
    const db = new Client({ connectionString: database.url });
    await db.connect();
    try {
      const id = newId('rot');
      const created = await ctx.http
        .post('/api/v1/payouts')
        .set(auth())
        .send(body(id, '25000.00'));
      expect(created.body.status).toBe('awaiting_approval');
      const first = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin()).send({});
      expect(first.status).toBe(200);
      expect(first.body.status).toBe('awaiting_approval');

      // ADMIN_KEY is removed (rotated or compromised) and the service restarted.
      await ctx.service.close();
      ctx = await startTestApp({
        env: env([ADMIN_KEY_2, ADMIN_KEY_3]),
        databaseUrl: database.url,
        sandbox,
      });
      const second = await ctx.http
        .post(`/api/v1/admin/payouts/${id}/approve`)
        .set(bearer(ADMIN_KEY_2))
        .send({});
      expect(second.status).toBe(200);
      expect(second.body.status).toBe('awaiting_approval');
      expect(createsSent(ctx, id)).toBe(0);
      const third = await ctx.http
        .post(`/api/v1/admin/payouts/${id}/approve`)
        .set(bearer(ADMIN_KEY_3))
        .send({});
      expect(third.status).toBe(200);
      expect(third.body.status).not.toBe('awaiting_approval');
      expect(createsSent(ctx, id)).toBe(1);

      // An admin key's own payout: its approval never counts, even as one of two.
      const own = newId('rot');
      const mine = await ctx.http
        .post('/api/v1/payouts')
        .set(bearer(ADMIN_KEY_2))
        .send(body(own, '21000.00'));
      expect(mine.body.status).toBe('awaiting_approval');
      const selfApproval = await ctx.http
        .post(`/api/v1/admin/payouts/${own}/approve`)
        .set(bearer(ADMIN_KEY_2))
        .send({});
      expect(selfApproval.status).toBe(403);
      const one = await ctx.http
        .post(`/api/v1/admin/payouts/${own}/approve`)
        .set(bearer(ADMIN_KEY_3))
        .send({});
      expect(one.body.status).toBe('awaiting_approval');
      expect(createsSent(ctx, own)).toBe(0);
    } finally {
      await db.end();
      await ctx.service.close();
      await sandbox.close();
      await database.drop();
    }
  });
});
