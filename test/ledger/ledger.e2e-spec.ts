// Over 500 lines on purpose: one app and database, started once, hold the objects whose ledger
// entries its tests read; a split would start and fill another.
import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { Ledger1795900000060 } from '../../src/database/migrations/1795900000060-Ledger';
import { LedgerLegsInline1795900000070 } from '../../src/database/migrations/1795900000070-LedgerLegsInline';
import { LedgerAdjustmentKeys1795900000080 } from '../../src/database/migrations/1795900000080-LedgerAdjustmentKeys';
import { LedgerPositions1796500000010 } from '../../src/database/migrations/1796500000010-LedgerPositions';
import { DisputesAndChargebacks1796600000200 } from '../../src/database/migrations/1796600000200-DisputesAndChargebacks';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { ReconciliationJob } from '../../src/reconciliation/reconciliation-job';
import { admin, ADMIN_KEY, auth, startTestApp, TestContext } from '../support/app';
import { signIn } from '../console/console-session';
import { PAYMENT } from '../support/payways';
import { eventually } from '../support/webhook-receiver';

/**
 * The books end to end against the sandbox and a real PostgreSQL: a day of mixed traffic posts
 * balanced entries whose balances are the chart's sums; reconciliation agrees with an agreeing
 * sandbox, catches an injected drift (one balance item, flagged) until an adjustment explains
 * it, and names an object whose status the gateway contradicts; the database refuses an
 * unbalanced or changed entry; a run repeated gives the same result and the daily run happens
 * once; bad adjustments post nothing.
 */
const CARD = '4111111111111111';
const ENV = { PAYOUT_POLL_INTERVAL_S: '0.2', PAYOUT_POLL_MAX_S: '30', WATCH_INTERVAL_S: '1' };
const TO_CARD = 'qiwi_topup_rub_to_card';

let ctx: TestContext;
let db: Client;



async function q<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.query(sql, params)).rows as T[];
}

async function paidInvoice(
  amount: string,
  currency = 643,
  payway: string = PAYMENT.cardSuccess,
): Promise<string> {
  const shopOrderId = `led-${randomUUID()}`;
  const created = await ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({ shopOrderId, amount, currency, payway });
  expect(created.status).toBe(201);
  await eventually(async () => {
    const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
    expect(got.body.status).toBe('succeeded');
  });
  return shopOrderId;
}

async function refunded(shopOrderId: string, amount: string): Promise<string> {
  const shopRefundId = `lr-${randomUUID()}`;
  const res = await ctx.http
    .post(`/api/v1/invoices/${shopOrderId}/refunds`)
    .set(auth())
    .send({ shopRefundId, amount });
  expect(res.status).toBe(201);
  await eventually(async () => {
    const rows = await q<{ status: string }>(
      `SELECT status FROM refunds WHERE shop_refund_id = $1`,
      [shopRefundId],
    );
    if (rows[0]?.status !== 'SUCCESS') {
      await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      throw new Error(`refund ${shopRefundId} is ${rows[0]?.status}`);
    }
  });
  return shopRefundId;
}

async function payout(scenario: string, amount: string): Promise<string> {
  const shopPaymentId = `lp-${randomUUID()}`;
  const res = await ctx.http
    .post('/api/v1/payouts')
    .set(auth())
    .send({
      shopPaymentId,
      amount,
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: `${TO_CARD}[${scenario}]`,
      account: CARD,
    });
  if (res.status !== 202)
    throw new Error(`payout ${scenario}: ${res.status} ${JSON.stringify(res.body)}`);
  return shopPaymentId;
}

async function pollUntilFinal(ids: string[]): Promise<void> {
  const poller = ctx.service.app.get(PayoutPoller);
  await eventually(async () => {
    await poller.runOnce();
    const rows = await q<{ status: string }>(
      `SELECT status FROM payouts WHERE shop_payment_id = ANY($1) AND status NOT IN ('succeeded','failed','rejected')`,
      [ids],
    );
    expect(rows).toEqual([]);
  }, 20000);
}

interface Rec {
  id: string;
  status: string;
  items: Record<string, unknown>[];
  balances: Record<string, unknown>[];
}

async function reconcile(body: Record<string, unknown> = {}): Promise<Rec> {
  const res = await ctx.http.post('/api/v1/admin/reconciliations').set(admin()).send(body);
  expect(res.status).toBe(201);
  return res.body as Rec;
}

async function sandboxBalance(path: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/balances/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

async function entryCount(): Promise<number> {
  return Number((await q<{ n: string }>(`SELECT count(*) AS n FROM ledger_entries`))[0].n);
}

function balanceOf(
  balances: { account: string; currency: number; balance: string }[],
  account: string,
  currency = 643,
): string {
  const b = balances.find((x) => x.account === account && x.currency === currency);
  return new Decimal(b?.balance ?? '0').toFixed(2);
}

const today = (): string => new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  ctx = await startTestApp({ env: ENV });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
}, 60000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

describe('books', () => {
  it('opens from the gateway balance, then a day of mixed traffic balances, equals the chart, and reconciles', async () => {
    const opening = await reconcile({ date: today() });
    expect(opening.status).toBe('balanced');
    const openingEntries = await q(`SELECT kind FROM ledger_entries WHERE kind = 'opening'`);
    expect(openingEntries.length).toBeGreaterThan(0);

    const orders = [
      await paidInvoice('100.00'),
      await paidInvoice('250.50'),
      await paidInvoice('40.10'),
    ];
    await refunded(orders[1], '50.25');
    await refunded(orders[1], '0.25');
    const ok = await payout('mock_server,success', '1000.00');
    const failed = await payout('sandbox,reject', '300.00');
    const declined = await payout('sandbox,decline', '123.45');
    const open = await payout('sandbox,never_final', '177.00');
    await pollUntilFinal([ok, failed, declined]);

    // Every entry balances per currency.
    expect(
      await q(
        `SELECT entry_id, currency FROM ledger_postings GROUP BY entry_id, currency HAVING sum(amount) <> 0`,
      ),
    ).toEqual([]);
    // Each movement once, by kind.
    const kinds = await q<{ kind: string; object_id: string }>(
      `SELECT kind, object_id FROM ledger_entries WHERE object_id IS NOT NULL ORDER BY id`,
    );
    const kindsOf = (id: string): string[] =>
      kinds.filter((k) => k.object_id === id).map((k) => k.kind);
    for (const o of orders) expect(kindsOf(o)).toEqual(['invoice.succeeded']);
    expect(kindsOf(ok)).toEqual(['payout.sent', 'payout.succeeded']);
    expect(kindsOf(failed)).toEqual(['payout.sent', 'payout.failed']);
    expect(kindsOf(declined)).toEqual(['payout.sent', 'payout.failed']);
    expect(kindsOf(open)).toEqual(['payout.sent']);

    // The balances are the chart's sums of the objects.
    const paid = new Decimal('100.00').plus('250.50').plus('40.10');
    const refundedSum = new Decimal('50.25').plus('0.25');
    const rows = await q<{
      shop_payment_id: string;
      shop_write_off: string;
      payee_receive: string;
    }>(
      `SELECT shop_payment_id, shop_write_off::text, payee_receive::text FROM payouts WHERE shop_payment_id = ANY($1)`,
      [[ok, open]],
    );
    const okRow = rows.find((r) => r.shop_payment_id === ok)!;
    const openRow = rows.find((r) => r.shop_payment_id === open)!;
    const seed = (
      await q<{ amount: string }>(
        `SELECT p.amount::text AS amount FROM ledger_postings p JOIN ledger_entries e ON e.id = p.entry_id
        WHERE e.kind = 'opening' AND p.account = 'agent_available' AND p.currency = 643`,
      )
    )[0].amount;
    const { body } = await ctx.http.get('/api/v1/admin/ledger/balances').set(admin()).expect(200);
    const b = body.balances as { account: string; currency: number; balance: string }[];
    expect(balanceOf(b, 'gateway_payment_shop')).toBe(paid.minus(refundedSum).toFixed(2));
    expect(balanceOf(b, 'sales')).toBe(paid.minus(refundedSum).neg().toFixed(2));
    expect(balanceOf(b, 'payouts_paid')).toBe(new Decimal(okRow.payee_receive).toFixed(2));
    expect(balanceOf(b, 'payout_fees')).toBe(
      new Decimal(okRow.shop_write_off).minus(okRow.payee_receive).toFixed(2),
    );
    expect(balanceOf(b, 'agent_frozen')).toBe(new Decimal(openRow.shop_write_off).toFixed(2));
    expect(balanceOf(b, 'agent_available')).toBe(
      new Decimal(seed).minus(okRow.shop_write_off).minus(openRow.shop_write_off).toFixed(2),
    );
    // Every account sums to zero across the chart, per currency.
    const total = b
      .filter((x) => x.currency === 643)
      .reduce((s, x) => s.plus(x.balance), new Decimal(0));
    expect(total.isZero()).toBe(true);

    // The daily report is the ledger's postings of the day.
    const report = await ctx.http
      .get(`/api/v1/admin/reports/daily?date=${today()}`)
      .set(admin())
      .expect(200);
    const books = report.body.ledger as { account: string; currency: number; amount: string }[];
    const fromLedger = await q<{ account: string; currency: number; amount: string }>(
      `SELECT p.account, p.currency, sum(p.amount)::text AS amount FROM ledger_postings p
         JOIN ledger_entries e ON e.id = p.entry_id
        WHERE e.created_at >= $1::date AND e.created_at < $1::date + 1
        GROUP BY p.account, p.currency ORDER BY p.account, p.currency`,
      [today()],
    );
    // Written with the currency's minor-unit digits (RUB and USD: 2), the same values.
    expect(books).toEqual(
      fromLedger.map((x) => ({ ...x, amount: new Decimal(x.amount).toFixed(2) })),
    );

    // An agreeing sandbox: balanced (the open payout agrees: both sides not final).
    const rec = await reconcile({ date: today() });
    expect(rec.items).toEqual([]);
    expect(rec.status).toBe('balanced');

    // Entries by object, paged, and as CSV.
    const byObject = await ctx.http
      .get(`/api/v1/admin/ledger/entries?objectType=payout&objectId=${ok}`)
      .set(admin())
      .expect(200);
    expect(byObject.body.items.map((e: { kind: string }) => e.kind)).toEqual([
      'payout.succeeded',
      'payout.sent',
    ]);
    // Each entry names the event of the change that posted it.
    const eventOf = async (id: string): Promise<unknown> =>
      (await q(`SELECT type, to_status FROM events WHERE public_id = $1`, [id]))[0];
    expect(byObject.body.items[0].eventId).toMatch(/^evt_/);
    expect(await eventOf(byObject.body.items[0].eventId)).toEqual({
      type: 'payout.succeeded',
      to_status: 'succeeded',
    });
    // The write-off is frozen when the create is claimed (before the gateway answers): that
    // claim records no event, so the sent entry names none, or another event than the success.
    expect(byObject.body.items[1].eventId).not.toBe(byObject.body.items[0].eventId);
    const page1 = await ctx.http
      .get('/api/v1/admin/ledger/entries?limit=2')
      .set(admin())
      .expect(200);
    expect(page1.body.items).toHaveLength(2);
    const page2 = await ctx.http
      .get(`/api/v1/admin/ledger/entries?limit=2&cursor=${page1.body.nextCursor}`)
      .set(admin())
      .expect(200);
    expect(Number(page2.body.items[0].id)).toBeLessThan(Number(page1.body.items[1].id));
    const csv = await ctx.http
      .get(`/api/v1/admin/ledger/entries?objectId=${orders[0]}&format=csv`)
      .set(admin())
      .expect(200);
    expect(csv.headers['content-type']).toMatch(/text\/csv/);
    expect(csv.text.split('\r\n').filter(Boolean)).toHaveLength(3);
  }, 120000);

  it('catches an injected drift of 5.00 as one balance item, flagged, until an adjustment explains it', async () => {
    await sandboxBalance('drift', { currency: 643, amount: '5.00' });
    const rec = await reconcile({ date: today() });
    expect(rec.status).toBe('variances');
    expect(rec.items).toEqual([
      {
        kind: 'balance',
        account: 'agent_available',
        currency: 643,
        ours: expect.any(String),
        gateway: expect.any(String),
        amount: '5.00',
      },
    ]);
    const attention = await ctx.http.get('/api/v1/admin/attention').set(admin()).expect(200);
    expect(attention.body.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ objectType: 'reconciliation', id: rec.id }),
      ]),
    );
    const csv = await ctx.http
      .get(`/api/v1/admin/reconciliations/${rec.id}?format=csv`)
      .set(admin())
      .expect(200);
    expect(csv.text).toContain('balance,,,agent_available,643');

    const adj = await ctx.http.post('/api/v1/admin/ledger/adjustments').set(admin()).send({
      account: 'agent_available',
      currency: 643,
      amount: '5.00',
      note: 'gateway credit found on the statement',
    });
    expect(adj.status).toBe(201);
    expect(adj.body).toMatchObject({
      kind: 'adjustment',
      keyId: expect.any(String),
      note: 'gateway credit found on the statement',
    });
    expect(adj.body.postings).toEqual([
      { account: 'agent_available', currency: 643, amount: '5.00' },
      { account: 'adjustments', currency: 643, amount: '-5.00' },
    ]);
    const next = await reconcile({ date: today() });
    expect(next.status).toBe('balanced');
    const after = await ctx.http.get('/api/v1/admin/attention').set(admin()).expect(200);
    expect(
      after.body.items.filter((i: { objectType: string }) => i.objectType === 'reconciliation'),
    ).toEqual([]);
    // The event of each run.
    const events = await q<{ type: string }>(
      `SELECT type FROM events WHERE entity_type = 'reconciliation' AND entity_id = $1`,
      [next.id],
    );
    expect(events).toEqual([{ type: 'reconciliation.completed' }]);
  }, 60000);

  it('names an object whose status the gateway contradicts, and flags it', async () => {
    const order = await paidInvoice('12.00');
    // Our row says rejected; the gateway says succeeded. Written behind the books' back (the
    // row's triggers off), as a row could only drift before the books followed every change.
    const behindTheBooks = async (sql: string, params: unknown[]): Promise<void> => {
      const c = new Client({ connectionString: ctx.databaseUrl });
      await c.connect();
      try {
        await c.query(`SET session_replication_role = replica`);
        await c.query(sql, params);
      } finally {
        await c.end();
      }
    };
    await behindTheBooks(`UPDATE invoices SET status = 'rejected' WHERE shop_order_id = $1`, [
      order,
    ]);
    const rec = await reconcile({ date: today() });
    expect(rec.status).toBe('variances');
    // The gateway contradicts the status, and the books (which still hold the sale) do not
    // follow the state: both are named.
    expect(rec.items).toEqual([
      {
        kind: 'status',
        objectType: 'invoice',
        objectId: order,
        currency: 643,
        ours: 'rejected',
        gateway: 'succeeded',
      },
      {
        kind: 'position',
        objectType: 'invoice',
        objectId: order,
        currency: 643,
        ours: 'posted gateway_payment_shop 12.00, sales -12.00',
        gateway: null,
        position: 'rejected: nothing',
      },
    ]);
    const flagged = await q<{ needs_attention: boolean; attention_reason: string }>(
      `SELECT needs_attention, attention_reason FROM invoices WHERE shop_order_id = $1`,
      [order],
    );
    expect(flagged[0].needs_attention).toBe(true);
    expect(flagged[0].attention_reason).toMatch(/^reconciliation: status/);
    // Twice: the same result, and no second flag.
    const again = await reconcile({ date: today() });
    expect(again.items).toEqual(rec.items);
    expect(again.balances).toEqual(rec.balances);
    const raised = await q(
      `SELECT 1 FROM events WHERE entity_id = $1 AND type = 'invoice.attention_raised'`,
      [order],
    );
    expect(raised).toHaveLength(1);
    await behindTheBooks(
      `UPDATE invoices SET status = 'succeeded', needs_attention = false, attention_reason = NULL WHERE shop_order_id = $1`,
      [order],
    );
  }, 60000);

  it('refuses an unbalanced entry, and any change or removal of one', async () => {
    const byHand = (legs: string, note = 'by hand'): Promise<unknown> =>
      db.query(`INSERT INTO ledger_entries (kind, note, legs) VALUES ('adjustment', $1, ${legs})`, [
        note,
      ]);
    await expect(
      byHand(
        `ARRAY[ROW('agent_available', 643, 5.00), ROW('adjustments', 643, -4.99)]::ledger_leg[]`,
      ),
    ).rejects.toThrow(/does not balance in currency 643/);
    // Balanced in sum but across two currencies: each currency must balance.
    await expect(
      byHand(`ARRAY[ROW('agent_available', 643, 5), ROW('adjustments', 840, -5)]::ledger_leg[]`),
    ).rejects.toThrow(/does not balance in currency (643|840)/);
    // Balanced in one currency, not in the other.
    await expect(
      byHand(
        `ARRAY[ROW('agent_available', 643, 5), ROW('adjustments', 643, -5), ROW('agent_available', 840, 1)]::ledger_leg[]`,
      ),
    ).rejects.toThrow(/does not balance in currency 840/);
    // Balanced in each of two currencies (a conversion's legs): taken, then rolled back.
    await db.query('BEGIN');
    await byHand(
      `ARRAY[ROW('agent_available', 643, 5), ROW('adjustments', 840, -2), ROW('adjustments', 643, -5), ROW('agent_available', 840, 2)]::ledger_leg[]`,
      'two currencies',
    );
    expect(await q(`SELECT 1 FROM ledger_entries WHERE note = 'two currencies'`)).toHaveLength(1);
    await db.query('ROLLBACK');
    // Without postings, empty or null.
    await expect(byHand(`'{}'::ledger_leg[]`, 'empty')).rejects.toThrow(/no postings/);
    await expect(byHand(`NULL`, 'empty')).rejects.toThrow(/null value in column "legs"/);
    // Outside the chart, a leg of 0, a leg without a currency.
    await expect(
      byHand(`ARRAY[ROW('cash', 643, 5), ROW('adjustments', 643, -5)]::ledger_leg[]`),
    ).rejects.toThrow(/cash is not an account of the chart/);
    await expect(
      byHand(
        `ARRAY[ROW('agent_available', 643, 0), ROW('agent_available', 643, 5), ROW('adjustments', 643, -5)]::ledger_leg[]`,
      ),
    ).rejects.toThrow(/other than 0/);
    await expect(
      byHand(`ARRAY[ROW('agent_available', NULL, 5), ROW('adjustments', NULL, -5)]::ledger_leg[]`),
    ).rejects.toThrow(/needs a currency/);
    // The postings are read through their view; writing there is refused, whatever the statement.
    const anEntry = (await q(`SELECT min(id)::text AS id FROM ledger_entries`))[0].id as string;
    await expect(
      db.query(
        `INSERT INTO ledger_postings (entry_id, leg, account, currency, amount) VALUES ($1, 9, 'agent_available', 643, 1)`,
        [anEntry],
      ),
    ).rejects.toThrow(/append-only/);
    await expect(
      db.query(`UPDATE ledger_postings SET amount = amount + 1 WHERE entry_id = $1`, [anEntry]),
    ).rejects.toThrow(/append-only/);
    await expect(
      db.query(`DELETE FROM ledger_postings WHERE entry_id = $1`, [anEntry]),
    ).rejects.toThrow(/append-only/);
    // The entry itself: its legs, its amount or the whole row.
    await expect(
      db.query(
        `UPDATE ledger_entries SET legs = ARRAY[ROW('agent_available', 643, 9), ROW('adjustments', 643, -9)]::ledger_leg[] WHERE id = $1`,
        [anEntry],
      ),
    ).rejects.toThrow(/append-only/);
    await expect(db.query(`DELETE FROM ledger_entries WHERE id = $1`, [anEntry])).rejects.toThrow(
      /append-only/,
    );
    await expect(db.query(`TRUNCATE ledger_entries`)).rejects.toThrow(/append-only/);
    expect(await q(`SELECT 1 FROM ledger_entries WHERE id = $1`, [anEntry])).toHaveLength(1);
    expect(await q(`SELECT 1 FROM ledger_entries WHERE note IN ('by hand', 'empty')`)).toEqual([]);
  });

  it('posts nothing for a bad adjustment', async () => {
    const before = await entryCount();
    const bad: [Record<string, unknown>, string, Record<string, string>?][] = [
      [{ account: 'agent_available', currency: 643, amount: '5.00' }, 'note'],
      [{ account: 'agent_available', currency: 643, amount: '5.00', note: '   ' }, 'note'],
      [{ account: 'cash', currency: 643, amount: '5.00', note: 'x' }, 'account'],
      [{ account: 'Agent_Available', currency: 643, amount: '5.00', note: 'x' }, 'account'],
      [{ account: 'adjustments', currency: 643, amount: '5.00', note: 'x' }, 'account'],
      [{ account: 'agent_available', currency: 643, amount: '5.001', note: 'x' }, 'amount'],
      [{ account: 'agent_available', currency: 'JPY', amount: '5.5', note: 'x' }, 'amount'],
      [{ account: 'agent_available', currency: 643, amount: 5, note: 'x' }, 'amount'],
      [{ account: 'agent_available', currency: 643, amount: '0.00', note: 'x' }, 'amount'],
      [{ account: 'agent_available', currency: 643, amount: '5e2', note: 'x' }, 'amount'],
      [{ account: 'agent_available', currency: 643, amount: '+5.00', note: 'x' }, 'amount'],
      [{ account: 'agent_available', currency: 999999, amount: '5.00', note: 'x' }, 'currency'],
      [
        { account: 'agent_available', currency: 643, amount: '5.00', note: 'x', keyId: 'someone' },
        'keyId',
      ],
    ];
    for (const [body, field] of bad) {
      const res = await ctx.http.post('/api/v1/admin/ledger/adjustments').set(admin()).send(body);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(field);
    }
    const shop = await ctx.http
      .post('/api/v1/admin/ledger/adjustments')
      .set(auth())
      .send({ account: 'agent_available', currency: 643, amount: '5.00', note: 'x' });
    expect(shop.status).toBe(403);
    expect((await ctx.http.get('/api/v1/admin/ledger/balances').set(auth())).status).toBe(403);
    expect((await ctx.http.post('/api/v1/admin/reconciliations').set(auth()).send({})).status).toBe(
      403,
    );
    expect(await entryCount()).toBe(before);
    // A negative adjustment in a currency of no fraction digits is fine (and balances).
    const jpy = await ctx.http.post('/api/v1/admin/ledger/adjustments').set(admin()).send({
      account: 'payout_fees',
      currency: 'JPY',
      amount: '-15',
      note: 'fee refunded by the gateway',
    });
    expect(jpy.status).toBe(201);
    expect(await entryCount()).toBe(before + 1);
  });

  it('runs the daily reconciliation once across instances', async () => {
    const job = ctx.service.app.get(ReconciliationJob);
    const day = job.dueDay();
    const [a, b, c] = await Promise.all([job.runOnce(), job.runOnce(), job.runOnce()]);
    expect([a, b, c].filter((x) => x !== null)).toHaveLength(1);
    expect(await job.runOnce()).toBeNull();
    const rows = await q(`SELECT reconciliation_id FROM reconciliation_days WHERE date = $1`, [
      day,
    ]);
    expect(rows).toEqual([{ reconciliation_id: [a, b, c].find((x) => x !== null) }]);
    const list = await ctx.http
      .get('/api/v1/admin/reconciliations?limit=1')
      .set(admin())
      .expect(200);
    expect(list.body.items[0].id).toBe([a, b, c].find((x) => x !== null));
    // Bad input.
    expect(
      (
        await ctx.http
          .post('/api/v1/admin/reconciliations')
          .set(admin())
          .send({ date: '2026-02-30' })
      ).status,
    ).toBe(400);
    expect((await ctx.http.get('/api/v1/admin/reconciliations/nope').set(admin())).status).toBe(
      404,
    );
  });

  it('shows the ledger and the reconciliations in the console; a run needs the form token', async () => {
    expect((await ctx.http.get('/admin/ui/ledger')).status).toBe(303);
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    const ledger = await ctx.http
      .get('/admin/ui/ledger?objectType=payout')
      .set('Cookie', jar.header())
      .expect(200);
    expect(ledger.text).toContain('agent_available');
    expect(ledger.text).toContain('payout.sent');
    const refused = await ctx.http
      .post('/admin/ui/reconciliations')
      .set('Cookie', jar.header())
      .type('form')
      .send({ date: today() });
    expect(refused.status).toBe(403);
    const before = Number(
      (await q<{ n: string }>(`SELECT count(*) AS n FROM reconciliations`))[0].n,
    );
    const run = await ctx.http
      .post('/admin/ui/reconciliations')
      .set('Cookie', jar.header())
      .type('form')
      .send({ _csrf: csrf, date: today() })
      .expect(303);
    expect(Number((await q<{ n: string }>(`SELECT count(*) AS n FROM reconciliations`))[0].n)).toBe(
      before + 1,
    );
    const page = await ctx.http
      .get(run.headers.location as string)
      .set('Cookie', jar.header())
      .expect(200);
    expect(page.text).toContain('Agent shop balance');
    const list = await ctx.http
      .get('/admin/ui/reconciliations')
      .set('Cookie', jar.header())
      .expect(200);
    expect(list.text).toContain(today());
  });

  it('a status change and its entry are one: a session killed before commit leaves neither, a commit both', async () => {
    const shopOrderId = `led-${randomUUID()}`;
    await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId, amount: '33.33', currency: 643, payway: PAYMENT.card })
      .expect(201);
    const entries = async (): Promise<number> =>
      (await q(`SELECT 1 FROM ledger_entries WHERE object_id = $1`, [shopOrderId])).length;
    const victim = new Client({ connectionString: ctx.databaseUrl });
    await victim.connect();
    victim.on('error', () => undefined);
    const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    await victim.query('BEGIN');
    await victim.query(`UPDATE invoices SET status = 'succeeded' WHERE shop_order_id = $1`, [
      shopOrderId,
    ]);
    // Inside the transaction the entry is there with the change.
    expect(
      (await victim.query(`SELECT 1 FROM ledger_entries WHERE object_id = $1`, [shopOrderId])).rows,
    ).toHaveLength(1);
    // Killed before its commit (as SIGKILL of the process would drop the connection).
    await db.query('SELECT pg_terminate_backend($1)', [pid]);
    await victim.end().catch(() => undefined);
    expect(await entries()).toBe(0);
    expect(
      (
        await q<{ status: string }>(`SELECT status FROM invoices WHERE shop_order_id = $1`, [
          shopOrderId,
        ])
      )[0].status,
    ).not.toBe('succeeded');
    // Committed: both.
    await db.query(`UPDATE invoices SET status = 'succeeded' WHERE shop_order_id = $1`, [
      shopOrderId,
    ]);
    expect(await entries()).toBe(1);
    // A second write of the same status posts nothing more.
    await db.query(`UPDATE invoices SET status = 'succeeded' WHERE shop_order_id = $1`, [
      shopOrderId,
    ]);
    expect(await entries()).toBe(1);
  });

  it('backfills the existing objects: the migration run again on the same rows posts the same object entries', async () => {
    const objectEntries = (): Promise<unknown[]> =>
      q(`SELECT e.kind, e.object_type, e.object_id, p.account, p.currency, p.amount::text
           FROM ledger_entries e JOIN ledger_postings p ON p.entry_id = e.id
          WHERE e.object_pk IS NOT NULL ORDER BY e.object_type, e.object_id, e.kind, p.account`);
    const before = await objectEntries();
    expect(before.length).toBeGreaterThan(10);
    const ds = ctx.service.app.get(DataSource);
    const runner = ds.createQueryRunner();
    try {
      // The migrations of the books (the disputes' last), down and up again: the entries posted by the first and
      // carried into their legs by the second are the ones the live triggers posted.
      const ledger = new Ledger1795900000060();
      const legs = new LedgerLegsInline1795900000070();
      const keys = new LedgerAdjustmentKeys1795900000080();
      const positions = new LedgerPositions1796500000010();
      const disputes = new DisputesAndChargebacks1796600000200();
      await disputes.down(runner);
      await positions.down(runner);
      await keys.down(runner);
      await legs.down(runner);
      await ledger.down(runner);
      await ledger.up(runner);
      await legs.up(runner);
      await keys.up(runner);
      await positions.up(runner);
      await disputes.up(runner);
    } finally {
      await runner.release();
    }
    expect(await objectEntries()).toEqual(before);
    expect(
      await q(
        `SELECT entry_id, currency FROM ledger_postings GROUP BY entry_id, currency HAVING sum(amount) <> 0`,
      ),
    ).toEqual([]);
  });
});
