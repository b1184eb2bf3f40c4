import { Client } from 'pg';
import { Decimal } from '../../src/sandbox/decimal';
import { admin, auth, PAYOUT_SHOP_ID, TestContext } from '../support/app';
import { PAYOUT } from '../support/payways';
import { appWithDb, callsFor, payoutBody, payoutRowCount, TEST_CARD, uniqueId } from '../support/payouts';

/**
 * Daily caps that hold under concurrency (PAYOUT_DAILY_CAP,
 * PAYOUT_RECIPIENT_DAILY_CAP) and the agent shop's balance checked before a payout is sent
 * (BALANCE_CACHE_S), against the sandbox and a real PostgreSQL.
 */
const CARD_A = TEST_CARD;
const CARD_B = '5555555555554444';
const CARD_C = '4000000000000002';

const newId = uniqueId;
const body = payoutBody;
const createsSent = (ctx: TestContext, id: string): number => callsFor(ctx, 'withdraw/create', id);
const rowCount = payoutRowCount;
const open = appWithDb;

describe('PAYOUT_DAILY_CAP under concurrency', () => {
  let ctx: TestContext;
  let db: Client;
  beforeAll(async () => {
    // 6 × 150.05 = 900.30: exactly six fit, to the cent.
    ({ ctx, db } = await open({ PAYOUT_DAILY_CAP: '643:900.30,840:10.00' }));
  });
  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  it('20 concurrent creates admit exactly the six that fit; the others are 422 naming the cap and what is left, with no row and no gateway call', async () => {
    const ids = Array.from({ length: 20 }, () => newId('cap'));
    const answers = await Promise.all(
      ids.map((id, i) =>
        ctx.http
          .post('/api/v1/payouts')
          .set(auth())
          .send(body(id, '150.05', { account: i % 2 === 0 ? CARD_A : CARD_B })),
      ),
    );
    const admitted = ids.filter((_, i) => answers[i].status === 202);
    const refused = ids.filter((_, i) => answers[i].status === 422);
    expect(admitted).toHaveLength(6);
    expect(refused).toHaveLength(14);
    for (const res of answers.filter((r) => r.status === 422)) {
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        type: expect.stringMatching(/\/cap-exceeded$/),
        status: 422,
        cap: 'daily',
        currency: 643,
        limit: '900.30',
        used: '900.30',
        remaining: '0.00',
        requested: '150.05',
      });
      expect(res.body.detail).toContain('PAYOUT_DAILY_CAP');
      // Currencies are named both ways, as everywhere else.
      expect(res.body.detail).toContain('in RUB (643)');
      expect(res.body.detail).not.toContain('currency 643');
    }
    for (const id of refused) {
      expect(await rowCount(db, id)).toBe(0);
      expect(createsSent(ctx, id)).toBe(0);
    }
    for (const id of admitted) expect(createsSent(ctx, id)).toBe(1);
    const sum = await db.query(
      `SELECT sum(amount)::text AS s FROM payouts WHERE shop_currency = 643 AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`,
    );
    expect((sum.rows[0] as { s: string }).s).toBe('900.30');
  });

  it('a repeat of an admitted payout is answered as before and never counts twice; a cent over is refused', async () => {
    const first = await db.query(
      `SELECT shop_payment_id, account_masked FROM payouts WHERE shop_currency = 643 LIMIT 1`,
    );
    const row = first.rows[0] as { shop_payment_id: string; account_masked: string };
    const id = row.shop_payment_id;
    const account = row.account_masked.startsWith('4111') ? CARD_A : CARD_B;
    const again = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(id, '150.05', { account }));
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(createsSent(ctx, id)).toBe(1);
    const other = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(newId('cap'), '100.00'));
    expect(other.status).toBe(422);
    expect(other.body.remaining).toBe('0.00');
  });
});

describe('PAYOUT_RECIPIENT_DAILY_CAP', () => {
  let ctx: TestContext;
  let db: Client;
  beforeAll(async () => {
    ({ ctx, db } = await open({ PAYOUT_RECIPIENT_DAILY_CAP: '643:300.00' }));
  });
  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  it('counts per account: one account is held to the cap to the cent, another still passes', async () => {
    expect(
      (
        await ctx.http
          .post('/api/v1/payouts')
          .set(auth())
          .send(body(newId('r'), '200.00'))
      ).status,
    ).toBe(202);
    const over = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(newId('r'), '100.01'));
    expect(over.status).toBe(422);
    expect(over.body).toMatchObject({
      type: expect.stringMatching(/\/cap-exceeded$/),
      cap: 'recipient-daily',
      currency: 643,
      limit: '300.00',
      used: '200.00',
      remaining: '100.00',
    });
    const exact = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(newId('r'), '100.00'));
    expect(exact.status).toBe(202);
    const otherAccount = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(newId('r'), '300.00', { account: CARD_B }));
    expect(otherAccount.status).toBe(202);
  });

  it('10 concurrent creates for one recipient admit exactly the three that fit', async () => {
    const card = '4000000000000010';
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        ctx.http
          .post('/api/v1/payouts')
          .set(auth())
          .send(body(newId('rc'), '100.00', { account: card })),
      ),
    );
    expect(answers.filter((r) => r.status === 202)).toHaveLength(3);
    expect(answers.filter((r) => r.status === 422)).toHaveLength(7);
  });

  it('a payout that ended failed frees its share', async () => {
    const failed = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(newId('rf'), '300.00', { account: CARD_C, payway: PAYOUT.cardForbidden }));
    expect(failed.status).toBe(202);
    expect(failed.body.status).toBe('failed');
    const ok = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(newId('rf'), '300.00', { account: CARD_C }));
    expect(ok.status).toBe(202);
    const full = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(newId('rf'), '100.00', { account: CARD_C }));
    expect(full.status).toBe(422);
    expect(full.body).toMatchObject({ cap: 'recipient-daily', remaining: '0.00' });
  });

  it('matches the recipient by a blind index: the account is never stored in clear', async () => {
    const id = newId('ri');
    const card = '4000000000000028';
    expect(
      (
        await ctx.http
          .post('/api/v1/payouts')
          .set(auth())
          .send(body(id, '100.00', { account: card }))
      ).status,
    ).toBe(202);
    const r = await db.query(
      `SELECT to_jsonb(p) AS row, account_index FROM payouts p WHERE shop_payment_id = $1`,
      [id],
    );
    const row = r.rows[0] as { row: unknown; account_index: string };
    expect(row.account_index).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row.row)).not.toContain(card);
    expect(JSON.stringify(row.row)).not.toContain(card.slice(0, 12));
  });
});

describe('the balance before sending (BALANCE_CACHE_S)', () => {
  let ctx: TestContext;
  let db: Client;
  const setAvailable = (amount: string): void => {
    ctx.sandbox.state.balance(PAYOUT_SHOP_ID, 643).available = Decimal.parse(amount);
  };
  beforeAll(async () => {
    // A lost create is out for six seconds: long enough to read the balance while it is.
    ({ ctx, db } = await open({ BALANCE_CACHE_S: '30', GATEWAY_TIMEOUT_MS: '6000' }));
  });
  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });
  afterEach(() => ctx.sandbox.state.faults.clear());

  it('refuses before sending when the balance cannot cover the write-off; once raised (the cached figure stale), the same payout goes through', async () => {
    setAvailable('500.00');
    const id = newId('bal');
    const refused = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '1000.00'));
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      type: expect.stringMatching(/\/insufficient-balance$/),
      currency: 643,
      available: '500.00',
      inFlight: '0.00',
      needed: '1000.00',
      shortBy: '500.00',
    });
    expect(refused.body.detail).toContain('balance in RUB (643) is 500.00');
    expect(createsSent(ctx, id)).toBe(0);
    expect(await rowCount(db, id)).toBe(0);

    // Raised within BALANCE_CACHE_S: the cached 500.00 fails, the one re-read lets it pass.
    setAvailable('2000.00');
    const balanceReads = (): number =>
      ctx.sandbox.state.requests.filter((r) => r.path === 'shop_balance').length;
    const readsBefore = balanceReads();
    const passed = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '1000.00'));
    expect(passed.status).toBe(202);
    expect(passed.body.status).not.toBe('failed');
    expect(createsSent(ctx, id)).toBe(1);
    expect(balanceReads()).toBe(readsBefore + 1);
  });

  it('what is in flight: a payout sent before the figure was read and never created there (flagged) holds nothing; one still being sent when it was read counts', async () => {
    const lostSend = async (): Promise<void> => {
      const res = await fetch(`${ctx.sandbox.origin}/sandbox/faults`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ path: 'withdraw/create', fault: 'timeout_not_done', delayMs: 8000 }),
      });
      expect(res.status).toBe(200);
    };
    setAvailable('1500.00');
    // The gateway never gets this one; it is flagged and an operator looks: it must not hold
    // 1000.00 of the balance for ever.
    await lostSend();
    const lostId = newId('bal');
    const lost = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(lostId, '1000.00'));
    expect(lost.status).toBe(202);
    expect(lost.body.status).toBe('unknown');
    ctx.sandbox.state.faults.clear();
    await db.query(
      `UPDATE payouts SET status = 'needs_attention', needs_attention = true,
              attention_reason = 'create_cap: absent after 3 creates', attention_at = now()
        WHERE shop_payment_id = $1`,
      [lostId],
    );
    const id = newId('bal');
    const passed = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '1000.00'));
    expect(passed.status).toBe(202);
    expect(createsSent(ctx, id)).toBe(1);

    // A create still out at the gateway while the figure is read is in flight for it.
    setAvailable('1500.00');
    await lostSend();
    const slowId = newId('bal');
    // Sent now (a supertest request starts when it is awaited or then'd).
    const slow = ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(slowId, '1000.00'))
      .then((r) => r);
    const started = Date.now();
    const calling = async (): Promise<boolean> => {
      const r = await db.query(
        `SELECT 1 FROM payouts WHERE shop_payment_id = $1 AND call_lease_until > now()`,
        [slowId],
      );
      return r.rows.length === 1;
    };
    while (!(await calling()) && Date.now() - started < 5000)
      await new Promise((r) => setTimeout(r, 20));
    expect(await calling()).toBe(true);
    const next = newId('bal');
    const refused = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(next, '1000.00'));
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      type: expect.stringMatching(/\/insufficient-balance$/),
      available: '1500.00',
      inFlight: '1000.00',
      needed: '1000.00',
    });
    expect(createsSent(ctx, next)).toBe(0);
    expect((await slow).status).toBe(202);
    ctx.sandbox.state.faults.clear();
  });
});

describe('approvals meet the caps and the balance', () => {
  let ctx: TestContext;
  let db: Client;
  beforeAll(async () => {
    ({ ctx, db } = await open({
      PAYOUT_DAILY_CAP: '643:1000.00',
      PAYOUT_APPROVAL_THRESHOLD: '643:500.00',
      BALANCE_CACHE_S: '1',
    }));
  });
  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  it('a payout awaiting approval holds no share of the cap; the approval that sends it checks the caps of that day and the balance (422, still awaiting, nothing recorded), and sends once both fit', async () => {
    const balance = ctx.sandbox.state.balance(PAYOUT_SHOP_ID, 643);
    const big = newId('await');
    const created = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(big, '600.00'));
    expect(created.status).toBe(202);
    expect(created.body.status).toBe('awaiting_approval');
    expect(createsSent(ctx, big)).toBe(0);
    // Nothing of the 600 is sent: 450 fits today's cap.
    const small = newId('small');
    const passed = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(body(small, '450.00', { account: CARD_B }));
    expect(passed.status).toBe(202);
    expect(createsSent(ctx, small)).toBe(1);

    const approvalsOf = async (): Promise<number> => {
      const r = await db.query(
        `SELECT count(*)::int AS n FROM payout_approvals a JOIN payouts p ON p.id = a.payout_id
          WHERE p.shop_payment_id = $1`,
        [big],
      );
      return (r.rows[0] as { n: number }).n;
    };
    // 450 sent today + 600 > 1000: the approval is refused; it stays awaiting, unrecorded.
    const capped = await ctx.http.post(`/api/v1/admin/payouts/${big}/approve`).set(admin()).send({});
    expect(capped.status).toBe(422);
    expect(capped.body).toMatchObject({ cap: 'daily', remaining: '550.00', requested: '600.00' });
    expect((await ctx.http.get(`/api/v1/payouts/${big}`).set(auth())).body.status).toBe(
      'awaiting_approval',
    );
    expect(await approvalsOf()).toBe(0);

    // The 450 counted on yesterday (sent then): the cap has room; the balance has not.
    await db.query(
      `UPDATE payouts SET sent_at = sent_at - interval '1 day' WHERE shop_payment_id = $1`,
      [small],
    );
    const before = balance.available;
    balance.available = Decimal.parse('100.00');
    // The figure cached before the drop (BALANCE_CACHE_S) has aged out.
    await new Promise((r) => setTimeout(r, 1100));
    try {
      const short = await ctx.http
        .post(`/api/v1/admin/payouts/${big}/approve`)
        .set(admin())
        .send({});
      expect(short.status).toBe(422);
      expect(short.body.type).toMatch(/\/insufficient-balance$/);
      const still = await ctx.http.get(`/api/v1/payouts/${big}`).set(auth());
      expect(still.body.status).toBe('awaiting_approval');
      expect(await approvalsOf()).toBe(0);
      expect(createsSent(ctx, big)).toBe(0);
    } finally {
      balance.available = before;
    }
    // Covered now (the cached figure is stale: the check reads once more) → sent once.
    const ok = await ctx.http.post(`/api/v1/admin/payouts/${big}/approve`).set(admin()).send({});
    expect(ok.status).toBe(200);
    expect(createsSent(ctx, big)).toBe(1);
  });
});
