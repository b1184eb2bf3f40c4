import { Client } from 'pg';
import { PayoutBatchRunner } from '../../src/payouts/payout-batch-runner';
import { PayoutBatchesService } from '../../src/payouts/payout-batches.service';
import { admin, auth, startTestApp, TestContext } from '../support/app';
import { PAYOUT } from '../support/payways';
import { payoutBody, TEST_CARD } from '../support/payouts';

/**
 * Payout batches against hostile and careless callers, on the running service and the sandbox:
 * a batch cancelled (also while the runner sends it), a batchId repeat used as an oracle for a
 * card number, a CSV with thousands of object columns, a dry run of thousands of empty rows,
 * the rows created under the submitting key, and a dry run that prices rows in another currency.
 */
const CARD = TEST_CARD;
let ctx: TestContext;
let db: Client;
let seq = 0;
const uid = (): string => `${Date.now()}-${++seq}`;

/** A batch row: 100.00 as `ps_amount` to the test card; `overrides` win. */
const row = (shopPaymentId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> =>
  payoutBody(shopPaymentId, '100.00', { amountType: 'ps_amount', ...overrides });

const post = (body: unknown, query = '') =>
  ctx.http
    .post(`/api/v1/payouts/batches${query}`)
    .set(auth())
    .send(body as object);

const creates = (id: string): number =>
  ctx.sandbox.state.requests.filter(
    (r) =>
      r.path === 'withdraw/create' && (r.body as Record<string, unknown>).shop_payment_id === id,
  ).length;

const runner = (): PayoutBatchRunner => ctx.service.app.get(PayoutBatchRunner);

/** Polls /health while `work` runs: how long the slowest answer took, and whether all came. */
async function healthDuring(
  work: Promise<unknown>,
): Promise<{ slowestMs: number; answered: number }> {
  let done = false;
  void work.finally(() => {
    done = true;
  });
  let slowestMs = 0;
  let answered = 0;
  // Let the work start first; asked at least once, however soon the work ends.
  await new Promise((r) => setTimeout(r, 50));
  do {
    const t0 = Date.now();
    const res = await fetch(`${ctx.url}/health`);
    slowestMs = Math.max(slowestMs, Date.now() - t0);
    if (res.status === 200) answered += 1;
    await new Promise((r) => setTimeout(r, 20));
  } while (!done);
  await work;
  return { slowestMs, answered };
}

beforeAll(async () => {
  ctx = await startTestApp({
    env: {
      PAYOUT_APPROVAL_THRESHOLD: '643:5000.00,840:500.00',
      PAYOUT_DAILY_CAP: '840:150.00',
      // Eight uploads of one key at once below (the default lets 2 run and answers 429 to the rest).
      BATCH_UPLOADS_PER_KEY: '8',
    },
  });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

describe('POST /payouts/batches/{batchId}/cancel', () => {
  it('cancels the rows not yet sent (never sent, payout.cancelled) and the waiting ones; sent rows go on', async () => {
    const tag = uid();
    const rows = [
      row(`cx-${tag}-1`),
      // At the approval threshold: created awaiting approval, nothing sent.
      row(`cx-${tag}-2`, { amount: '6000.00' }),
      row(`cx-${tag}-3`),
      row(`cx-${tag}-4`),
    ];
    expect((await post({ batchId: `cx-${tag}`, rows })).status).toBe(202);
    // Rows 1 and 2 reach the create path; 3 and 4 are still to send.
    await db.query(
      `UPDATE payout_batch_rows SET lease_until = now() + interval '1 hour'
        WHERE shop_payment_id IN ($1, $2)`,
      [`cx-${tag}-3`, `cx-${tag}-4`],
    );
    await runner().runOnce();
    const res = await ctx.http.post(`/api/v1/payouts/batches/cx-${tag}/cancel`).set(auth());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      batchId: `cx-${tag}`,
      cancelledNow: 3,
      counts: { total: 4, sent: 2, cancelled: 2, pending: 0 },
    });
    // Their leases run out: the runner would take them now, and sends nothing.
    await db.query(`UPDATE payout_batch_rows SET lease_until = NULL`);
    await runner().runOnce();
    await runner().runOnce();
    expect([1, 2, 3, 4].map((n) => creates(`cx-${tag}-${n}`))).toEqual([1, 0, 0, 0]);
    const waiting = await ctx.http.get(`/api/v1/payouts/cx-${tag}-2`).set(auth());
    expect(waiting.body.status).toBe('cancelled');
    // Cancelled is final: no approval sends it.
    const approve = await ctx.http
      .post(`/api/v1/admin/payouts/cx-${tag}-2/approve`)
      .set(admin())
      .send({});
    expect(approve.status).toBe(409);
    expect(creates(`cx-${tag}-2`)).toBe(0);
    const events = await db.query(
      `SELECT entity_id FROM events WHERE type = 'payout.cancelled' AND entity_id LIKE $1 ORDER BY entity_id`,
      [`cx-${tag}-%`],
    );
    expect(events.rows.map((e: { entity_id: string }) => e.entity_id)).toEqual([
      `cx-${tag}-2`,
      `cx-${tag}-3`,
      `cx-${tag}-4`,
    ]);
    const batch = await ctx.http.get(`/api/v1/payouts/batches/cx-${tag}`).set(auth());
    expect(batch.body.status).toBe('completed');
    expect(batch.body.items.map((i: { state: string }) => i.state)).toEqual([
      'sent',
      'sent',
      'cancelled',
      'cancelled',
    ]);
    // A second cancel finds nothing more to cancel.
    const again = await ctx.http.post(`/api/v1/payouts/batches/cx-${tag}/cancel`).set(auth());
    expect(again.body.cancelledNow).toBe(0);
    expect(
      (await ctx.http.post(`/api/v1/payouts/batches/nope-${tag}/cancel`).set(auth())).status,
    ).toBe(404);
  });

  it('a cancel racing the runner: every row ends either sent once or cancelled and never sent', async () => {
    const tag = uid();
    const rows = Array.from({ length: 60 }, (_, i) => row(`cr-${tag}-${i + 1}`));
    expect((await post({ batchId: `cr-${tag}`, rows })).status).toBe(202);
    const [, cancel] = await Promise.all([
      runner().runOnce(),
      new Promise((r) => setTimeout(r, 30)).then(() =>
        ctx.http.post(`/api/v1/payouts/batches/cr-${tag}/cancel`).set(auth()),
      ),
    ]);
    expect(cancel.status).toBe(200);
    await db.query(`UPDATE payout_batch_rows SET lease_until = NULL`);
    await runner().runOnce();
    const states = await db.query(
      `SELECT shop_payment_id, state FROM payout_batch_rows r JOIN payout_batches b ON b.id = r.batch_pk
        WHERE b.batch_id = $1`,
      [`cr-${tag}`],
    );
    let cancelled = 0;
    for (const s of states.rows as Array<{ shop_payment_id: string; state: string }>) {
      expect([s.state, creates(s.shop_payment_id)]).toEqual(
        s.state === 'cancelled' ? ['cancelled', 0] : ['sent', 1],
      );
      if (s.state === 'cancelled') cancelled += 1;
    }
    // What the cancel answered is what it did.
    expect(cancel.body.counts.cancelled).toBe(cancelled);
  });

  it('each order of a cancel and a row begun: a begun row goes on (a waiting payout of it cancelled after), a cancelled one is never sent', async () => {
    const tag = uid();
    const rows = [
      row(`co-${tag}-1`),
      row(`co-${tag}-2`, { amount: '6000.00' }),
      row(`co-${tag}-3`),
    ];
    expect((await post({ batchId: `co-${tag}`, rows })).status).toBe(202);
    const pk = (await db.query(`SELECT id FROM payout_batches WHERE batch_id = $1`, [`co-${tag}`]))
      .rows[0].id as string;
    // Rows 1 and 2 were begun by a runner (their creates are on their way) when the cancel came.
    await db.query(
      `UPDATE payout_batch_rows SET send_started_at = now(), lease_until = now() + interval '1 hour'
        WHERE batch_pk = $1 AND row_no IN (1, 2)`,
      [pk],
    );
    // Row 3 is claimed by a runner that has not begun it.
    await db.query(
      `UPDATE payout_batch_rows SET lease_until = now() + interval '1 hour' WHERE batch_pk = $1 AND row_no = 3`,
      [pk],
    );
    const cancel = await ctx.http.post(`/api/v1/payouts/batches/co-${tag}/cancel`).set(auth());
    expect(cancel.body).toMatchObject({ cancelledNow: 1, counts: { pending: 2, cancelled: 1 } });
    const batches = ctx.service.app.get(PayoutBatchesService);
    // The runner that claimed row 3 goes on with it: nothing is sent.
    expect(await batches.sendRow(pk, 3)).toBe(true);
    expect(creates(`co-${tag}-3`)).toBe(0);
    // The begun rows finish: row 1 is sent; row 2 waits for approval, so it is cancelled now.
    await batches.sendRow(pk, 1);
    await batches.sendRow(pk, 2);
    expect([creates(`co-${tag}-1`), creates(`co-${tag}-2`)]).toEqual([1, 0]);
    expect((await ctx.http.get(`/api/v1/payouts/co-${tag}-2`).set(auth())).body.status).toBe(
      'cancelled',
    );
    const states = await db.query(
      `SELECT row_no, state FROM payout_batch_rows WHERE batch_pk = $1 ORDER BY row_no`,
      [pk],
    );
    expect(states.rows.map((r: { state: string }) => r.state)).toEqual([
      'sent',
      'sent',
      'cancelled',
    ]);
  });
});

describe('a batchId repeat is no oracle for a card number', () => {
  it('counts conflicts like a single create, answers the same whatever differs, and locks after 3', async () => {
    const tag = uid();
    const secret = '4111111111111234';
    const first = [row(`or-${tag}-1`, { account: secret })];
    expect((await post({ batchId: `or-${tag}`, rows: first })).status).toBe(202);
    const guess = (card: string) => [row(`or-${tag}-1`, { account: card })];
    const answers = [];
    // Two wrong card guesses and one wrong amount: the same answer, which names no row.
    for (const rows of [
      guess('4111111111110000'),
      guess('4111111111110001'),
      [row(`or-${tag}-1`, { account: secret, amount: '101.00' })],
    ]) {
      const res = await post({ batchId: `or-${tag}`, rows });
      expect(res.status).toBe(409);
      answers.push({ type: res.body.type, errors: res.body.errors });
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(answers[0].type).toMatch(/idempotency-conflict$/);
    expect(JSON.stringify(answers)).not.toContain('1234');
    // The right guess now is refused like any other: the batchId is locked.
    const right = await post({ batchId: `or-${tag}`, rows: first });
    expect(right.status).toBe(409);
    expect(right.body.type).toMatch(/idempotency-locked$/);
    const csvRight = await ctx.http
      .post(`/api/v1/payouts/batches?batchId=or-${tag}`)
      .set(auth())
      .set('Content-Type', 'text/csv')
      .send(
        `shopPaymentId,amount,amountType,shopCurrency,payway,account\nor-${tag}-1,100.00,ps_amount,643,"${PAYOUT.card}",${secret}\n`,
      );
    expect(csvRight.status).toBe(409);
    expect(csvRight.body.type).toMatch(/idempotency-locked$/);
    const counted = await db.query(
      `SELECT idempotency_conflicts FROM payout_batches WHERE batch_id = $1`,
      [`or-${tag}`],
    );
    expect(counted.rows[0].idempotency_conflicts).toBe(3);
  });
});

describe('a CSV batch obeys the limits of a JSON one', () => {
  it('thousands of metadata columns are refused at once, the header named, while /health answers', async () => {
    const keys = Array.from({ length: 4000 }, (_, k) => `metadata.k${k}`);
    const header = [
      'shopPaymentId',
      'amount',
      'amountType',
      'shopCurrency',
      'payway',
      'account',
      ...keys,
    ].join(',');
    const cells = keys.map(() => 'v').join(',');
    const tag = uid();
    const lines = Array.from(
      { length: 200 },
      (_, i) => `mc-${tag}-${i},100.00,ps_amount,643,"${PAYOUT.card}",${CARD},${cells}`,
    );
    const text = `${header}\n${lines.join('\n')}\n`;
    expect(text.length).toBeGreaterThan(1_500_000);
    let answer: { status: number; body: { errors?: unknown } } | undefined;
    const upload = ctx.http
      .post('/api/v1/payouts/batches?dryRun=true')
      .set(auth())
      .set('Content-Type', 'text/csv')
      .send(text)
      .then((r) => {
        answer = r;
      });
    const health = await healthDuring(upload);
    expect(answer?.status).toBe(400);
    expect(answer?.body.errors).toEqual([
      {
        field: 'header.metadata',
        message: 'has more than 20 metadata.<key> columns; at most 20 keys are allowed',
      },
    ]);
    expect(health.answered).toBeGreaterThan(0);
    // Behaviour, not speed: the service never stopped answering (old code: 40 s and more).
    expect(health.slowestMs).toBeLessThan(5000);
  });

  it('21 metadata columns or 65 accountDetails columns: 400 naming the header; NUL and reserved keys too', async () => {
    const base = ['shopPaymentId', 'amount', 'amountType', 'shopCurrency', 'payway', 'account'];
    const csv = (extra: string[], cell = 'v') =>
      ctx.http
        .post('/api/v1/payouts/batches?dryRun=true')
        .set(auth())
        .set('Content-Type', 'text/csv')
        .send(
          `${[...base, ...extra].join(',')}\nh-${uid()},100.00,ps_amount,643,"${PAYOUT.card}",${CARD},${extra.map(() => cell).join(',')}\n`,
        );
    const meta = await csv(Array.from({ length: 21 }, (_, k) => `metadata.m${k}`));
    expect(meta.status).toBe(400);
    expect(meta.body.errors[0].field).toBe('header.metadata');
    const details = await csv(Array.from({ length: 65 }, (_, k) => `accountDetails.d${k}`));
    expect(details.status).toBe(400);
    expect(details.body.errors[0].field).toBe('header.accountDetails');
    const proto = await csv(['metadata.__proto__']);
    expect(proto.status).toBe(400);
    expect(proto.body.errors[0].field).toBe('header.metadata.__proto__');
    const nul = await csv(['metadata.ref'], 'a\u0000b');
    expect(nul.status).toBe(400);
    expect(nul.body.errors[0].message).toMatch(/NUL/);
  });
});

describe('a dry run is bounded like every refusal', () => {
  it('2,000 empty rows: an answer smaller than the body, rows paged, at most 20 errors a row', async () => {
    const body = JSON.stringify({ rows: Array.from({ length: 2000 }, () => ({})) });
    const res = await ctx.http
      .post('/api/v1/payouts/batches?dryRun=true')
      .set(auth())
      .set('Content-Type', 'application/json')
      .send(body);
    expect(res.status).toBe(200);
    expect(res.text.length).toBeLessThan(body.length);
    expect(res.body.counts).toEqual({ total: 2000, valid: 0, invalid: 2000 });
    const items = res.body.items as Array<{ row: number; errors: unknown[] }>;
    expect(items.length).toBeGreaterThan(0);
    expect(items[0].row).toBe(1);
    for (const i of items) expect(i.errors.length).toBeLessThanOrEqual(21);
    expect(res.body.nextCursor).toEqual(expect.any(String));
    const next = await ctx.http
      .post(`/api/v1/payouts/batches?dryRun=true&cursor=${encodeURIComponent(res.body.nextCursor)}`)
      .set(auth())
      .set('Content-Type', 'application/json')
      .send(body);
    expect(next.body.items[0].row).toBe(items[items.length - 1].row + 1);
    // One row of a hundred bad metadata keys: capped at 20 errors and a count of the rest.
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, k) => [`x${k}`, 'v']));
    const one = await post({ rows: [{ ...many }] }, '?dryRun=true');
    expect(one.status).toBe(200);
    expect(one.body.items[0].errors.length).toBeLessThanOrEqual(21);
  });

  it('eight at once do not stall the service (rows that differ: each one checked)', async () => {
    const body = JSON.stringify({
      rows: Array.from({ length: 2000 }, (_, i) => ({ shopPaymentId: `e${i}` })),
    });
    const runs = Promise.all(
      Array.from({ length: 8 }, () =>
        ctx.http
          .post('/api/v1/payouts/batches?dryRun=true')
          .set(auth())
          .set('Content-Type', 'application/json')
          .send(body),
      ),
    );
    const health = await healthDuring(runs);
    for (const r of await runs) {
      expect(r.status).toBe(200);
      expect(r.text.length).toBeLessThan(body.length);
    }
    expect(health.answered).toBeGreaterThan(0);
    expect(health.slowestMs).toBeLessThan(5000);
  });
});

describe('rows are created under the submitting key', () => {
  it("a batch row's payout events carry the key that submitted the batch, as a single create's do", async () => {
    const tag = uid();
    const single = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send(row(`ks-${tag}`));
    expect(single.status).toBe(202);
    expect((await post({ batchId: `kb-${tag}`, rows: [row(`kb-${tag}-1`)] })).status).toBe(202);
    await runner().runOnce();
    const keys = await db.query(
      `SELECT entity_id, array_agg(DISTINCT coalesce(key_id, '-')) AS keys FROM events
        WHERE entity_type = 'payout' AND entity_id IN ($1, $2) GROUP BY entity_id`,
      [`ks-${tag}`, `kb-${tag}-1`],
    );
    const byId = Object.fromEntries(
      keys.rows.map((k: { entity_id: string; keys: string[] }) => [k.entity_id, k.keys]),
    );
    expect(byId[`ks-${tag}`]).toEqual([expect.stringMatching(/^[^-]/)]);
    expect(byId[`kb-${tag}-1`]).toEqual(byId[`ks-${tag}`]);
  });
});

describe('a dry run prices a row in another currency as the create does', () => {
  it('a ps_amount in RUB written off in USD is held against the USD approval threshold and cap by its write-off', async () => {
    // 9127.50 RUB to the payee is 100.00 USD written off (the sandbox's rate and fee): under the
    // 500.00 USD threshold and the 150.00 USD cap, though its raw amount is far above both.
    const res = await post(
      { rows: [row(`fx-${uid()}`, { amount: '9127.50', shopCurrency: 840 })] },
      '?dryRun=true',
    );
    expect(res.status).toBe(200);
    expect(res.body.items[0]).toMatchObject({ ok: true, errors: [], approvalsRequired: 0 });
    const sent = ctx.sandbox.state.requests.filter((r) => r.path === 'withdraw/create').length;
    const twice = await post(
      { rows: [row(`fx-${uid()}`, { amount: '18255.00', shopCurrency: 840 })] },
      '?dryRun=true',
    );
    // 200.00 USD: past the 150.00 USD cap, named with what is left.
    expect(twice.body.items[0].ok).toBe(false);
    expect(twice.body.items[0].errors[0].message).toContain('daily cap of USD (840)');
    expect(ctx.sandbox.state.requests.filter((r) => r.path === 'withdraw/create').length).toBe(
      sent,
    );
  });
});
