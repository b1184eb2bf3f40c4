import { Client } from 'pg';
import { PayoutBatchRunner } from '../../src/payouts/payout-batch-runner';
import { Decimal } from '../../src/sandbox/decimal';
import { admin, ADMIN_KEY, auth, PAYOUT_SHOP_ID, startTestApp, TestContext } from '../support/app';
import { ADMIN_KEY_2, admin2, callsFor, payoutBody, uniqueId } from '../support/payouts';

/**
 * One figure for the approval thresholds, the daily caps and the balance check: the write-off.
 * A `shop_amount` is its own write-off; a `ps_amount` is weighed by the write-off withdraw/try
 * quotes (the card payway's fee is 1% + 30.00: 49,990.00 writes off 50,519.90), whether or not
 * the balance check is on, at create, in batches (dry run and runner) and at approval. When the
 * quote cannot be had, the create is refused (503, retryable), never weighed by its amount.
 */
const CARD_B = '5555555555554444';

const newId = uniqueId;

/** A create's body as `ps_amount`, weighed by the write-off withdraw/try quotes. */
const body = (
  shopPaymentId: string,
  amount: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> => payoutBody(shopPaymentId, amount, { amountType: 'ps_amount', ...overrides });

const callsOf = callsFor;

async function fault(ctx: TestContext, path: string, fault: string, times = 1): Promise<void> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/faults`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ path, fault, times }),
  });
  expect(res.status).toBe(200);
}

async function open(env: Record<string, string>): Promise<{ ctx: TestContext; db: Client }> {
  const ctx = await startTestApp({ env: { ADMIN_API_KEYS: `${ADMIN_KEY},${ADMIN_KEY_2}`, ...env } });
  ctx.sandbox.state.balance(PAYOUT_SHOP_ID, 643).available = Decimal.parse('10000000.00');
  const db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  return { ctx, db };
}

async function rowOf(
  db: Client,
  id: string,
): Promise<{ status: string; approvals_required: number; shop_write_off: string | null } | null> {
  const r = await db.query(
    `SELECT status, approvals_required, shop_write_off::text FROM payouts WHERE shop_payment_id = $1`,
    [id],
  );
  return (r.rows[0] as { status: string; approvals_required: number; shop_write_off: string | null }) ?? null;
}

describe('the approval thresholds weigh the write-off (balance check off)', () => {
  let ctx: TestContext;
  let db: Client;
  beforeAll(async () => {
    ({ ctx, db } = await open({
      PAYOUT_APPROVAL_THRESHOLD: '643:50000.00',
      PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:90000.00',
      BALANCE_CACHE_S: '0',
    }));
  });
  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });
  afterEach(() => ctx.sandbox.state.faults.clear());

  it('a ps_amount of 49,990.00 writes off 50,519.90: it waits for approval and nothing is sent; the same shop_amount is sent at once', async () => {
    const id = newId('ps');
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '49990.00'));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'awaiting_approval', shopWriteOff: '50519.90' });
    expect(callsOf(ctx, 'withdraw/create', id)).toBe(0);
    expect(await rowOf(db, id)).toMatchObject({ approvals_required: 1, shop_write_off: '50519.90' });

    const plain = newId('shop');
    const sent = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(plain, '49990.00', { amountType: 'shop_amount' }));
    expect(sent.status).toBe(202);
    expect(sent.body.status).not.toBe('awaiting_approval');
    expect(callsOf(ctx, 'withdraw/create', plain)).toBe(1);
  });

  it('the dual threshold too: 89,200.00 writes off 90,122.00 and needs two distinct keys; the second approval sends it once', async () => {
    const id = newId('dual');
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '89200.00'));
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('awaiting_approval');
    expect(await rowOf(db, id)).toMatchObject({ approvals_required: 2, shop_write_off: '90122.00' });
    const first = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin()).send({});
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('awaiting_approval');
    expect(callsOf(ctx, 'withdraw/create', id)).toBe(0);
    const second = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin2()).send({});
    expect(second.status).toBe(200);
    expect(callsOf(ctx, 'withdraw/create', id)).toBe(1);
  });

  it('a payout held before its write-off was quoted: the approval that would send it quotes it and, over the dual threshold, waits for a second key', async () => {
    const id = newId('legacy');
    expect((await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '89200.00'))).status).toBe(202);
    // As the previous version stored it: judged on its amount (one approval), no write-off.
    await db.query(
      `UPDATE payouts SET approvals_required = 1, shop_write_off = NULL, payee_receive = NULL, ps_currency = NULL WHERE shop_payment_id = $1`,
      [id],
    );
    const first = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin()).send({});
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('awaiting_approval');
    expect(await rowOf(db, id)).toMatchObject({ approvals_required: 2 });
    expect(callsOf(ctx, 'withdraw/create', id)).toBe(0);
    const second = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin2()).send({});
    expect(second.status).toBe(200);
    expect(callsOf(ctx, 'withdraw/create', id)).toBe(1);
  });

  it('below the threshold by its write-off (49,000.00 writes off 49,520.00) it is sent at once', async () => {
    const id = newId('below');
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '49000.00'));
    expect(res.status).toBe(202);
    expect(res.body.status).not.toBe('awaiting_approval');
    expect(callsOf(ctx, 'withdraw/create', id)).toBe(1);
  });

  it('when withdraw/try cannot quote it, the create is a retryable 503 naming the quote: nothing stored, nothing sent; the repeat is quoted and held', async () => {
    for (const f of ['http500', 'reset', 'nonfatal']) {
      const id = newId('unq');
      await fault(ctx, 'withdraw/try', f);
      const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '49990.00'));
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['retry-after']).toBeDefined();
      expect(res.body).toMatchObject({ type: expect.stringMatching(/\/write-off-unquoted$/), status: 503 });
      expect(res.body.detail).toContain('withdraw/try');
      expect(await rowOf(db, id)).toBeNull();
      expect(callsOf(ctx, 'withdraw/create', id)).toBe(0);
      const again = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '49990.00'));
      expect(again.status).toBe(202);
      expect(again.body.status).toBe('awaiting_approval');
    }
  });

  it('a refusal withdraw/try says is fatal is the gateway error (422), nothing stored or sent', async () => {
    const id = newId('fatal');
    await fault(ctx, 'withdraw/try', 'fatal');
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '49990.00'));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ type: expect.stringMatching(/\/gateway-error$/), fatal: true });
    expect(await rowOf(db, id)).toBeNull();
    expect(callsOf(ctx, 'withdraw/create', id)).toBe(0);
  });

  it('a shop_amount is its own write-off: no withdraw/try is asked for it', async () => {
    const before = callsOf(ctx, 'withdraw/try');
    const id = newId('noq');
    await fault(ctx, 'withdraw/try', 'http500');
    const res = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(id, '50000.00', { amountType: 'shop_amount' }));
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('awaiting_approval');
    expect(callsOf(ctx, 'withdraw/try')).toBe(before);
  });

  it('a batch: the dry run and the runner weigh each ps_amount row by its quoted write-off', async () => {
    const tag = newId('b');
    const rows = [
      body(`${tag}-1`, '49990.00'),
      body(`${tag}-2`, '49000.00'),
      body(`${tag}-3`, '89200.00'),
      body(`${tag}-4`, '49990.00', { amountType: 'shop_amount' }),
    ];
    const dry = await ctx.http.post('/api/v1/payouts/batches?dryRun=true').set(auth()).send({ rows });
    expect(dry.status).toBe(200);
    const items = dry.body.items as Array<{ row: number; ok: boolean; approvalsRequired?: number }>;
    expect(items.map((i) => [i.row, i.ok, i.approvalsRequired])).toEqual([
      [1, true, 1],
      [2, true, 0],
      [3, true, 2],
      [4, true, 0],
    ]);
    const res = await ctx.http.post('/api/v1/payouts/batches').set(auth()).send({ batchId: tag, rows });
    expect(res.status).toBe(202);
    const runner = ctx.service.app.get(PayoutBatchRunner);
    for (let i = 0; i < 20; i++) {
      await runner.runOnce();
      const left = await db.query(`SELECT 1 FROM payout_batches WHERE status <> 'completed'`);
      if (left.rowCount === 0) break;
    }
    expect(await rowOf(db, `${tag}-1`)).toMatchObject({ status: 'awaiting_approval', approvals_required: 1 });
    expect((await rowOf(db, `${tag}-2`))?.status).not.toBe('awaiting_approval');
    expect(await rowOf(db, `${tag}-3`)).toMatchObject({ status: 'awaiting_approval', approvals_required: 2 });
    expect((await rowOf(db, `${tag}-4`))?.status).not.toBe('awaiting_approval');
    expect(callsOf(ctx, 'withdraw/create', `${tag}-1`)).toBe(0);
    expect(callsOf(ctx, 'withdraw/create', `${tag}-3`)).toBe(0);

    // A row whose write-off cannot be quoted when the runner sends it is left for a later
    // claim (nothing stored, nothing sent), never sent weighed by its amount.
    const late = newId('bl');
    await fault(ctx, 'withdraw/try', 'http500', 5);
    const queued = await ctx.http
      .post('/api/v1/payouts/batches')
      .set(auth())
      .send({ batchId: late, rows: [body(`${late}-1`, '49990.00')] });
    expect(queued.status).toBe(202);
    await runner.runOnce();
    const rowState = async (): Promise<string> =>
      (
        (
          await db.query(
            `SELECT r.state FROM payout_batch_rows r JOIN payout_batches b ON b.id = r.batch_pk WHERE b.batch_id = $1`,
            [late],
          )
        ).rows[0] as { state: string }
      ).state;
    expect(await rowState()).toBe('pending');
    expect(await rowOf(db, `${late}-1`)).toBeNull();
    expect(callsOf(ctx, 'withdraw/create', `${late}-1`)).toBe(0);
    ctx.sandbox.state.faults.clear();
    await db.query(`UPDATE payout_batch_rows SET lease_until = now() - interval '1 second' WHERE state = 'pending'`);
    await runner.runOnce();
    expect(await rowState()).toBe('sent');
    expect(await rowOf(db, `${late}-1`)).toMatchObject({ status: 'awaiting_approval', shop_write_off: '50519.90' });
  });

  it('a dry run whose ps_amount row cannot be quoted says so on the row, never weighs its amount', async () => {
    const tag = newId('bq');
    await fault(ctx, 'withdraw/try', 'http500');
    const dry = await ctx.http
      .post('/api/v1/payouts/batches?dryRun=true')
      .set(auth())
      .send({ rows: [body(`${tag}-1`, '49990.00')] });
    expect(dry.status).toBe(200);
    expect(dry.body.items[0].ok).toBe(false);
    expect(dry.body.items[0].errors).toEqual([
      expect.objectContaining({ field: 'amount', message: expect.stringContaining('withdraw/try') }),
    ]);
  });
});

describe('a cap alone makes the write-off quoted (no threshold, balance check off)', () => {
  let ctx: TestContext;
  let db: Client;
  beforeAll(async () => {
    ({ ctx, db } = await open({ PAYOUT_RECIPIENT_DAILY_CAP: '643:1000.00', BALANCE_CACHE_S: '0' }));
  });
  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  it('a ps_amount of 980.00 writes off 1,019.80: past the recipient cap of 1,000.00, refused naming the write-off', async () => {
    const id = newId('rc');
    const res = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(id, '980.00', { account: '4000000000000002' }));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      type: expect.stringMatching(/\/cap-exceeded$/),
      cap: 'recipient-daily',
      requested: '1019.80',
      remaining: '1000.00',
    });
    expect(callsOf(ctx, 'withdraw/create', id)).toBe(0);
    // Counted by its write-off once sent: 940.00 writes off 979.40, and 20.60 is left.
    const fits = newId('rc');
    expect(
      (
        await ctx.http
          .post('/api/v1/payouts')
          .set(auth())
          .send(body(fits, '940.00', { account: '4000000000000002' }))
      ).status,
    ).toBe(202);
    const over = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(newId('rc'), '100.00', { amountType: 'shop_amount', account: '4000000000000002' }));
    expect(over.status).toBe(422);
    expect(over.body).toMatchObject({ used: '979.40', remaining: '20.60' });
  });
});

describe('the daily caps weigh the write-off, at create and at approval (balance check off)', () => {
  let ctx: TestContext;
  let db: Client;
  beforeAll(async () => {
    ({ ctx, db } = await open({
      PAYOUT_DAILY_CAP: '643:60000.00',
      PAYOUT_APPROVAL_THRESHOLD: '643:50000.00',
      BALANCE_CACHE_S: '0',
    }));
  });
  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });
  afterEach(() => ctx.sandbox.state.faults.clear());

  it('the approval that sends a held ps_amount payout admits its write-off against the caps (422, still awaiting), and its write-off once room is made', async () => {
    const held = newId('ap');
    const created = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(held, '49990.00', { account: CARD_B }));
    expect(created.body.status).toBe('awaiting_approval');
    // 9,500.00 sent today: 9,500.00 + 50,519.90 > 60,000.00 (by its amount, 59,490.00, it would fit).
    const other = newId('ap');
    expect(
      (
        await ctx.http
          .post('/api/v1/payouts')
          .set(auth())
          .send(body(other, '9500.00', { amountType: 'shop_amount', account: '4000000000000010' }))
      ).status,
    ).toBe(202);
    const refused = await ctx.http.post(`/api/v1/admin/payouts/${held}/approve`).set(admin()).send({});
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ cap: 'daily', requested: '50519.90', remaining: '50500.00' });
    expect((await rowOf(db, held))?.status).toBe('awaiting_approval');
    expect(callsOf(ctx, 'withdraw/create', held)).toBe(0);

    // A row held before its write-off was always quoted: the approval asks withdraw/try; when it
    // cannot be had, 503 and the payout stays awaiting, nothing recorded.
    await db.query(`UPDATE payouts SET sent_at = sent_at - interval '1 day' WHERE shop_payment_id = $1`, [other]);
    await db.query(`UPDATE payouts SET shop_write_off = NULL, payee_receive = NULL, ps_currency = NULL WHERE shop_payment_id = $1`, [held]);
    await fault(ctx, 'withdraw/try', 'http500');
    const unquoted = await ctx.http.post(`/api/v1/admin/payouts/${held}/approve`).set(admin()).send({});
    expect(unquoted.status).toBe(503);
    expect(unquoted.body.type).toMatch(/\/write-off-unquoted$/);
    expect((await rowOf(db, held))?.status).toBe('awaiting_approval');
    const approvals = await db.query(
      `SELECT count(*)::int AS n FROM payout_approvals a JOIN payouts p ON p.id = a.payout_id WHERE p.shop_payment_id = $1`,
      [held],
    );
    expect((approvals.rows[0] as { n: number }).n).toBe(0);
    const ok = await ctx.http.post(`/api/v1/admin/payouts/${held}/approve`).set(admin()).send({});
    expect(ok.status).toBe(200);
    expect(callsOf(ctx, 'withdraw/create', held)).toBe(1);
    // It counts its write-off: 60,000.00 − 50,519.90 is left for the day.
    const over = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(newId('ap'), '9480.11', { amountType: 'shop_amount', account: '4000000000000028' }));
    expect(over.status).toBe(422);
    expect(over.body).toMatchObject({ cap: 'daily', used: '50519.90', remaining: '9480.10' });
  });
});

describe('the balance check, the caps and the thresholds weigh the same figure', () => {
  let ctx: TestContext;
  let db: Client;
  beforeAll(async () => {
    ({ ctx, db } = await open({ BALANCE_CACHE_S: '30', PAYOUT_APPROVAL_THRESHOLD: '643:50000.00' }));
  });
  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  it('one withdraw/try for a ps_amount create: the threshold and the balance both see 50,519.90', async () => {
    ctx.sandbox.state.balance(PAYOUT_SHOP_ID, 643).available = Decimal.parse('50519.89');
    const id = newId('one');
    const before = callsOf(ctx, 'withdraw/try');
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '49990.00'));
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('awaiting_approval');
    expect(callsOf(ctx, 'withdraw/try')).toBe(before + 1);
    // The approval holds the same write-off against the balance: a cent short.
    const short = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin()).send({});
    expect(short.status).toBe(422);
    expect(short.body).toMatchObject({ type: expect.stringMatching(/\/insufficient-balance$/), needed: '50519.90' });
    expect(callsOf(ctx, 'withdraw/create', id)).toBe(0);
  });
});
