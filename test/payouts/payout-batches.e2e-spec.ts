import { Client } from 'pg';
import { PayoutBatchRunner } from '../../src/payouts/payout-batch-runner';
import { ADMIN_KEY, auth, SHOP_KEY, startTestApp, TestContext } from '../support/app';
import { signIn } from '../console/console-session';
import { payoutBody, TEST_CARD } from '../support/payouts';

/**
 * Payout batches against the sandbox and a real PostgreSQL, the runner driven by
 * hand: JSON and CSV, dry run, replay and conflict, limits at the edge, the completion event,
 * and no recipient in clear at rest.
 */
const CARD = TEST_CARD;
let ctx: TestContext;
let db: Client;
let seq = 0;
const uid = (): string => `${Date.now()}-${++seq}`;

/** A batch row: 100.00 as `ps_amount` to the test card; `overrides` win. */
const row = (shopPaymentId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> =>
  payoutBody(shopPaymentId, '100.00', { amountType: 'ps_amount', ...overrides });

function toCsv(rows: Array<Record<string, unknown>>): string {
  const header = [
    'shopPaymentId',
    'amount',
    'amountType',
    'shopCurrency',
    'payway',
    'account',
    'metadata.ref',
  ];
  const cell = (v: unknown): string => {
    const s = v === undefined ? '' : String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const meta = (r: Record<string, unknown>): unknown =>
    (r.metadata as Record<string, string> | undefined)?.ref;
  return (
    [
      header.join(','),
      ...rows.map((r) => [...header.slice(0, 6).map((h) => cell(r[h])), cell(meta(r))].join(',')),
    ].join('\r\n') + '\r\n'
  );
}

const creates = (id: string): number =>
  ctx.sandbox.state.requests.filter(
    (r) =>
      r.path === 'withdraw/create' && (r.body as Record<string, unknown>).shop_payment_id === id,
  ).length;

async function runAll(): Promise<void> {
  const runner = ctx.service.app.get(PayoutBatchRunner);
  for (let i = 0; i < 20; i++) {
    await runner.runOnce();
    const left = await db.query(`SELECT 1 FROM payout_batches WHERE status <> 'completed'`);
    if (left.rowCount === 0) return;
  }
  throw new Error('batches did not complete');
}

const post = (body: unknown, query = '') =>
  ctx.http
    .post(`/api/v1/payouts/batches${query}`)
    .set(auth())
    .send(body as object);
const postCsv = (text: string, query = '') =>
  ctx.http
    .post(`/api/v1/payouts/batches${query}`)
    .set(auth())
    .set('Content-Type', 'text/csv')
    .send(text);

async function tableCounts(): Promise<string> {
  const r = await db.query(
    `SELECT (SELECT count(*) FROM payouts) AS p, (SELECT count(*) FROM payout_batches) AS b,
            (SELECT count(*) FROM payout_batch_rows) AS r, (SELECT count(*) FROM events) AS e`,
  );
  return JSON.stringify(r.rows[0]);
}

beforeAll(async () => {
  ctx = await startTestApp();
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

describe('POST /payouts/batches', () => {
  it('JSON and CSV give the same batch; every row is sent once through the create path', async () => {
    const tag = uid();
    const rows = Array.from({ length: 5 }, (_, i) =>
      row(`j-${tag}-${i}`, { metadata: { ref: `r${i}` } }),
    );
    const csvRows = rows.map((r) => ({
      ...r,
      shopPaymentId: String(r.shopPaymentId).replace('j-', 'c-'),
    }));
    const a = await post({ batchId: `json-${tag}`, rows });
    const b = await postCsv(toCsv(csvRows), `?batchId=csv-${tag}`);
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(a.body).toMatchObject({
      batchId: `json-${tag}`,
      status: 'pending',
      counts: { total: 5, pending: 5 },
    });
    expect(b.body).toMatchObject({
      batchId: `csv-${tag}`,
      status: 'pending',
      counts: { total: 5, pending: 5 },
    });
    await runAll();
    const ga = await ctx.http.get(`/api/v1/payouts/batches/json-${tag}`).set(auth());
    const gb = await ctx.http.get(`/api/v1/payouts/batches/csv-${tag}`).set(auth());
    expect(ga.status).toBe(200);
    expect(ga.body).toMatchObject({
      status: 'completed',
      counts: { total: 5, pending: 0, sent: 5, refused: 0 },
    });
    expect(gb.body.counts).toEqual(ga.body.counts);
    const strip = (items: Array<Record<string, unknown>>) =>
      items.map((i) => {
        const p = i.payout as Record<string, unknown>;
        return [i.row, i.state, p.amount, p.shopCurrency, p.payway, p.account, p.metadata];
      });
    expect(strip(gb.body.items)).toEqual(strip(ga.body.items));
    for (const r of [...rows, ...csvRows]) expect(creates(String(r.shopPaymentId))).toBe(1);
    // The same payouts a single create would have made.
    const one = await ctx.http.get(`/api/v1/payouts/c-${tag}-3`).set(auth());
    expect(one.body).toMatchObject({ amount: '100.00', metadata: { ref: 'r3' } });
  });

  it('pages the rows with limit and cursor', async () => {
    const tag = uid();
    const rows = Array.from({ length: 7 }, (_, i) => row(`pg-${tag}-${i}`));
    expect((await post({ batchId: `pg-${tag}`, rows })).status).toBe(202);
    const seen: number[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const res = await ctx.http
        .get(`/api/v1/payouts/batches/pg-${tag}?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
        .set(auth());
      expect(res.status).toBe(200);
      seen.push(...(res.body.items as Array<{ row: number }>).map((i) => i.row));
      cursor = res.body.nextCursor as string | null;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(
      (await ctx.http.get(`/api/v1/payouts/batches/pg-${tag}?cursor=bogus`).set(auth())).status,
    ).toBe(400);
    expect((await ctx.http.get(`/api/v1/payouts/batches/nope-${tag}`).set(auth())).status).toBe(
      404,
    );
    await runAll();
  });

  it('a dry run sends nothing, writes nothing, and names each bad row by number and field', async () => {
    const tag = uid();
    // Row 5's id is already used by a payout.
    const used = `used-${tag}`;
    expect((await ctx.http.post('/api/v1/payouts').set(auth()).send(row(used))).status).toBe(202);
    const before = await tableCounts();
    const requests = ctx.sandbox.state.requests.length;
    const rows = [
      row(`d-${tag}-1`),
      row(`d-${tag}-2`, { amount: '-5' }),
      row(`d-${tag}-3`, { account: 'not-a-card' }),
      row(`d-${tag}-1`),
      row(used),
      row(`d-${tag}-6`, { payway: 'no_such_payway' }),
      row(`d-${tag}-7`, { status: 'succeeded' }),
    ];
    const res = await post({ batchId: `dry-${tag}`, rows }, '?dryRun=true');
    expect(res.status).toBe(200);
    const items = res.body.items as Array<{
      row: number;
      ok: boolean;
      errors: Array<{ field: string }>;
    }>;
    const fields = (n: number): string[] => items[n - 1].errors.map((e) => e.field);
    expect(items.map((i) => i.ok)).toEqual([true, false, false, false, false, false, false]);
    expect(fields(2)).toEqual(['amount']);
    expect(fields(3)).toEqual(['account']);
    expect(fields(4)).toEqual(['shopPaymentId']);
    expect(items[3].errors[0]).toMatchObject({ message: expect.stringContaining('row 1') });
    expect(fields(5)).toEqual(['shopPaymentId']);
    expect(fields(6)).toEqual(['payway']);
    expect(fields(7)).toEqual(['status']);
    expect(res.body.counts).toEqual({ total: 7, valid: 1, invalid: 6 });
    // The same check for CSV.
    const csv = await postCsv(toCsv(rows.slice(0, 3)), '?dryRun=true');
    expect(csv.status).toBe(200);
    expect((csv.body.items as Array<{ ok: boolean }>).map((i) => i.ok)).toEqual([
      true,
      false,
      false,
    ]);
    expect(await tableCounts()).toBe(before);
    expect(
      ctx.sandbox.state.requests.slice(requests).filter((r) => r.path.startsWith('withdraw/')),
    ).toEqual([]);
  });

  it('a real batch with an invalid row is a 400 naming rows[n].field, and stores nothing', async () => {
    const tag = uid();
    const before = await tableCounts();
    const res = await post({
      batchId: `bad-${tag}`,
      rows: [row(`b-${tag}-1`), row(`b-${tag}-2`, { amount: 5 })],
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'rows[2].amount' })]);
    expect(await tableCounts()).toBe(before);
  });

  it('a repeated batch replays (nothing sent again); the same batchId with other rows is 409', async () => {
    const tag = uid();
    const rows = [row(`rp-${tag}-1`), row(`rp-${tag}-2`, { amount: '100.5' })];
    const first = await post({ batchId: `rp-${tag}`, rows });
    expect(first.status).toBe(202);
    await runAll();
    // Amounts compare by value: "100.50" is the same row.
    const again = await post({
      batchId: `rp-${tag}`,
      rows: [rows[0], { ...rows[1], amount: '100.50' }],
    });
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toMatchObject({
      batchId: `rp-${tag}`,
      status: 'completed',
      counts: { sent: 2 },
    });
    const csvAgain = await postCsv(toCsv(rows), `?batchId=rp-${tag}`);
    expect(csvAgain.status).toBe(202);
    await runAll();
    expect(creates(`rp-${tag}-1`)).toBe(1);
    expect(creates(`rp-${tag}-2`)).toBe(1);
    const other = await post({ batchId: `rp-${tag}`, rows: [rows[0], row(`rp-${tag}-3`)] });
    expect(other.status).toBe(409);
    // Only the secret row fields this repeat sent are named (no row sent accountDetails).
    expect(other.body.errors).toEqual([
      { field: 'rows', message: 'differ from the first request of this batchId' },
      { field: 'rows[].account', message: expect.stringContaining('secret') },
    ]);
    const swapped = await post({ batchId: `rp-${tag}`, rows: [rows[1], rows[0]] });
    expect(swapped.status).toBe(409);
    expect(
      await db.query(`SELECT 1 FROM payout_batch_rows WHERE shop_payment_id = $1`, [`rp-${tag}-3`]),
    ).toMatchObject({ rowCount: 0 });
  });

  it('a row the create path refuses is recorded as refused with its problem; the others are sent', async () => {
    const tag = uid();
    const res = await post({
      batchId: `rf-${tag}`,
      rows: [row(`rf-${tag}-1`), row(`rf-${tag}-2`, { account: 'not-a-card' })],
    });
    expect(res.status).toBe(202);
    await runAll();
    const got = await ctx.http.get(`/api/v1/payouts/batches/rf-${tag}`).set(auth());
    expect(got.body.counts).toEqual({ total: 2, pending: 0, sent: 1, refused: 1, cancelled: 0 });
    expect(got.body.items[1]).toMatchObject({
      state: 'refused',
      problem: { status: 400, errors: [{ field: 'account' }] },
    });
    expect(creates(`rf-${tag}-2`)).toBe(0);
  });

  it('more than 10,000 rows is refused (JSON 400, CSV 400, over 5 MB 413); other routes keep 64 kB and JSON only', async () => {
    const many = Array.from({ length: 10_001 }, (_, i) => ({ shopPaymentId: `x${i}` }));
    const json = await post({ rows: many });
    expect(json.status).toBe(400);
    expect(json.body.errors).toEqual([{ field: 'rows', message: 'must have at most 10000 rows' }]);
    const csv = await postCsv(['shopPaymentId', ...many.map((r) => r.shopPaymentId)].join('\n'));
    expect(csv.status).toBe(400);
    const huge = await postCsv('shopPaymentId\n' + 'y'.repeat(6 * 1024 * 1024));
    expect(huge.status).toBe(413);
    const hugeJson = await post({ rows: [{ description: 'z'.repeat(6 * 1024 * 1024) }] });
    expect(hugeJson.status).toBe(413);
    expect(
      await db.query(`SELECT 1 FROM payout_batch_rows WHERE shop_payment_id = 'x0'`),
    ).toMatchObject({ rowCount: 0 });
    // The larger limit and CSV belong to this one route, however another path is spelled; a
    // spelling the router routes to it is it (the edge reads the path as the router routes it).
    const text = toCsv([row('other-route')]);
    const routed = await ctx.http.post('/api/v1/payouts/%62atches?dryRun=true').set(auth()).set('Content-Type', 'text/csv').send(text);
    expect(routed.status).toBe(200);
    for (const path of [
      '/api/v1/payouts',
      '/api/v1/payouts/batches/',
      '/api/v1/Payouts/batches',
      '/api/v1/payouts/batches/x',
      '/api/v1/payouts/batches/..',
      '/api/v1/invoices?x=/api/v1/payouts/batches',
    ]) {
      const res = await ctx.http.post(path).set(auth()).set('Content-Type', 'text/csv').send(text);
      expect([path, res.status]).toEqual([path, 415]);
    }
    const big = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({ ...row('big'), description: 'z'.repeat(70 * 1024) });
    expect(big.status).toBe(413);
    // GET of the batch route is no upload either.
    const get = await ctx.http
      .get('/api/v1/payouts/batches/x')
      .set(auth())
      .set('Content-Type', 'text/csv')
      .send(text);
    expect(get.status).toBe(415);
  });

  it('a keyless or out-of-scope caller never has its batch read or stored', async () => {
    const body = { batchId: `k-${uid()}`, rows: [row(`k-${uid()}`)] };
    expect((await ctx.http.post('/api/v1/payouts/batches').send(body)).status).toBe(401);
    expect(SHOP_KEY).toBeTruthy();
  });

  it('the event payout_batch.completed comes once, in the payouts feed', async () => {
    const tag = uid();
    expect(
      (await post({ batchId: `ev-${tag}`, rows: [row(`ev-${tag}-1`), row(`ev-${tag}-2`)] })).status,
    ).toBe(202);
    const runner = ctx.service.app.get(PayoutBatchRunner);
    await Promise.all([runner.runOnce(), runner.runOnce()]);
    await runAll();
    await runner.runOnce();
    const events = await db.query(
      `SELECT type, data FROM events WHERE entity_type = 'payout_batch' AND entity_id = $1 AND type IS NOT NULL`,
      [`ev-${tag}`],
    );
    expect(events.rows).toHaveLength(1);
    expect(events.rows[0]).toMatchObject({
      type: 'payout_batch.completed',
      data: {
        batchId: `ev-${tag}`,
        status: 'completed',
        counts: { total: 2, sent: 2, pending: 0 },
      },
    });
    const feed = await ctx.http.get(`/api/v1/events?objectId=ev-${tag}`).set(auth());
    expect(feed.status).toBe(200);
    expect(feed.body.items).toEqual([
      expect.objectContaining({ type: 'payout_batch.completed', objectType: 'payout_batch' }),
    ]);
  });

  it('the recipient is never in clear in any table', async () => {
    const tag = uid();
    const secret = '4276550012345678';
    expect(
      (await post({ batchId: `sec-${tag}`, rows: [row(`sec-${tag}`, { account: secret })] }))
        .status,
    ).toBe(202);
    const stored = await db.query(`SELECT * FROM payout_batch_rows WHERE shop_payment_id = $1`, [
      `sec-${tag}`,
    ]);
    expect(JSON.stringify(stored.rows)).not.toContain(secret);
    await runAll();
    const tables = await db.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    for (const { table_name } of tables.rows as Array<{ table_name: string }>) {
      const all = await db.query(`SELECT * FROM "${table_name}"`);
      expect([table_name, JSON.stringify(all.rows).includes(secret)]).toEqual([table_name, false]);
    }
  });
});

describe('the console shows batches with their progress', () => {
  it('lists a batch with its counts, pending then complete, and its rows with each answer', async () => {
    const tag = uid();
    const rows = [row(`cb-${tag}-1`), row(`cb-${tag}-2`), row(`cb-${tag}-3`)];
    expect((await post({ batchId: `console-${tag}`, rows })).status).toBe(202);
    const { jar } = await signIn(ctx, ADMIN_KEY);
    const page = async (path: string): Promise<string> =>
      (await ctx.http.get(path).set('Cookie', jar.header()).expect(200)).text;
    const before = await page('/admin/ui/batches');
    expect(before).toContain(`href="/admin/ui/batches/console-${tag}"`);
    expect(before).toMatch(new RegExp(`id="batch-console-${tag}"[\\s\\S]*?0 of 3`));
    await runAll();
    const after = await page('/admin/ui/batches');
    expect(after).toMatch(
      new RegExp(`id="batch-console-${tag}"[\\s\\S]*?completed[\\s\\S]*?3 of 3`),
    );
    const detail = await page(`/admin/ui/batches/console-${tag}`);
    expect(detail).toContain('3 sent, 0 refused, 0 pending of 3');
    for (const r of rows)
      expect(detail).toContain(`href="/admin/ui/payouts/${String(r.shopPaymentId)}"`);
    // The account is never on the page in clear.
    expect(detail).not.toContain(CARD);
    // A shop key has no console; an unknown batch is a page that says so.
    await ctx.http.get('/admin/ui/batches').set(auth()).expect(303);
    expect((await ctx.http.get('/admin/ui/batches/nope').set('Cookie', jar.header())).status).toBe(
      404,
    );
  });
});

describe('a dry run meets the money controls as a real batch would', () => {
  let controlled: TestContext;
  beforeAll(async () => {
    controlled = await startTestApp({
      env: {
        PAYOUT_DAILY_CAP: '643:420.00',
        PAYOUT_APPROVAL_THRESHOLD: '643:200.00',
        PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:300.00',
        BALANCE_CACHE_S: '0',
      },
    });
  });
  afterAll(async () => {
    await controlled?.close();
  });

  it('counts the daily cap over the rows in order and says how many approvals each would wait for; sends and writes nothing', async () => {
    const tag = uid();
    // shop_amount rows: each is its own write-off, the figure the controls weigh.
    const shop = { amountType: 'shop_amount' };
    const rows = [
      row(`dc-${tag}-1`, { ...shop, amount: '100.00' }),
      row(`dc-${tag}-2`, { ...shop, amount: '200.00' }),
      // 100 + 200 + 150 > 420: this one would pass the cap; the next (100) still fits.
      row(`dc-${tag}-3`, { ...shop, amount: '150.00' }),
      row(`dc-${tag}-4`, { ...shop, amount: '100.00' }),
    ];
    const res = await controlled.http
      .post('/api/v1/payouts/batches?dryRun=true')
      .set(auth())
      .send({ rows });
    expect(res.status).toBe(200);
    const items = res.body.items as Array<{
      row: number;
      ok: boolean;
      errors: Array<{ field: string; message: string }>;
      approvalsRequired?: number;
    }>;
    expect(items.map((i) => [i.row, i.ok, i.approvalsRequired])).toEqual([
      [1, true, 0],
      [2, true, 1],
      [3, false, 0],
      [4, true, 0],
    ]);
    expect(items[2].errors).toEqual([
      { field: 'amount', message: 'would pass the daily cap of RUB (643): 120.00 left' },
    ]);
    const written = await controlled.http.get(`/api/v1/payouts/dc-${tag}-1`).set(auth());
    expect(written.status).toBe(404);
  });
});
