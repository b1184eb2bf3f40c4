import { randomUUID } from 'node:crypto';
import { money } from '../../src/sandbox/decimal';
import { Client } from 'pg';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { admin, auth, PAYOUT_SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';
import { eventually } from '../support/webhook-receiver';
import { payoutBody } from '../support/payouts';

/**
 * Reconciliation tells the truth: the balance and the books read at one instant (a payout sent
 * during a run is no variance), available and frozen differences apart, every payout not final
 * asked about (by our id when it has no withdraw id) through the record rule (another payout's
 * record is a `foreign_record` item), and a refund the gateway holds that we do not know is
 * `missing_ours`.
 */
let ctx: TestContext;
let db: Client;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));


interface Rec {
  status: string;
  items: Record<string, unknown>[];
  balances: { currency: number; differences: { available: string; frozen: string } }[];
}

async function reconcile(): Promise<Rec> {
  // Today's partial day: the objects these tests move are today's.
  const date = new Date().toISOString().slice(0, 10);
  const res = await ctx.http.post('/api/v1/admin/reconciliations').set(admin()).send({ date });
  expect(res.status).toBe(201);
  return res.body as Rec;
}

async function settings(body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/settings`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}


async function settled(shopPaymentId: string): Promise<void> {
  const poller = ctx.service.app.get(PayoutPoller);
  await eventually(async () => {
    await poller.runOnce();
    const rows = await db.query(`SELECT status FROM payouts WHERE shop_payment_id = $1`, [
      shopPaymentId,
    ]);
    expect(rows.rows[0].status).toBe('succeeded');
  }, 20000);
}

beforeAll(async () => {
  ctx = await startTestApp({
    env: { PAYOUT_POLL_INTERVAL_S: '0.2', PAYOUT_POLL_MAX_S: '30', WATCH_INTERVAL_S: '1' },
  });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  // The opening: the books start equal to the gateway.
  expect((await reconcile()).status).toBe('balanced');
}, 60000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

afterEach(async () => {
  ctx.sandbox.state.faults.clear();
  await settings({ latencyMs: 0 });
});

it('a payout sent while a run asks about the objects is no variance: the books are read as of the balance', async () => {
  // Something for the run to ask about, so that it is still asking when the payout goes out.
  const first = `rt-p-${randomUUID()}`;
  expect(
    (await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(first, '100.00'))).status,
  ).toBe(202);
  await settled(first);
  await settings({ latencyMs: 400 });
  const run = reconcile();
  await sleep(600);
  const during = `rt-p-${randomUUID()}`;
  expect(
    (await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(during, '1000.00')))
      .status,
  ).toBe(202);
  const rec = await run;
  expect(rec.items).toEqual([]);
  expect(rec.status).toBe('balanced');
  await settings({ latencyMs: 0 });
  await settled(during);
  expect((await reconcile()).status).toBe('balanced');
});

it('a drift of available and frozen of opposite signs is reported apart, never netted to 0.00', async () => {
  const b = ctx.sandbox.state.balancesOf(PAYOUT_SHOP_ID).get(643);
  if (b === undefined) throw new Error('no sandbox balance');
  const keep = { available: b.available, frozen: b.frozen };
  b.available = b.available.plus(money('1000.00'));
  b.frozen = b.frozen.minus(money('1000.00'));
  try {
    const rec = await reconcile();
    const rub = rec.balances.find((x) => x.currency === 643);
    expect(rub?.differences).toEqual({ available: '1000.00', frozen: '-1000.00' });
    expect(rec.items.filter((i) => i.kind === 'balance')).toHaveLength(2);
  } finally {
    b.available = keep.available;
    b.frozen = keep.frozen;
  }
  expect((await reconcile()).status).toBe('balanced');
});

it('a payout without a withdraw id is asked by our id; another payout’s record under it is a foreign_record item', async () => {
  const lost = `rt-lost-${randomUUID()}`;
  ctx.sandbox.state.faults.add({ path: 'withdraw/create', fault: 'reset_done', remaining: 1 });
  expect(
    (await ctx.http.post('/api/v1/payouts').set(auth()).send(payoutBody(lost, '300.00'))).status,
  ).toBe(202);
  const row = await db.query(`SELECT status, withdraw_id FROM payouts WHERE shop_payment_id = $1`, [
    lost,
  ]);
  expect(row.rows[0]).toMatchObject({ status: 'unknown', withdraw_id: null });
  // The gateway's record under our id is another payout's (another amount).
  const theirs = [...ctx.sandbox.state.payouts.values()].find((p) => p.shopPaymentId === lost);
  if (theirs === undefined) throw new Error('no sandbox payout');
  const amount = theirs.amount;
  const writeOff = theirs.shopWriteOff;
  theirs.shopWriteOff = money('777.00');
  theirs.amount = money('777.00');
  await db.query(`UPDATE payouts SET call_lease_until = NULL WHERE shop_payment_id = $1`, [lost]);
  ctx.sandbox.state.requests = [];
  const rec = await reconcile();
  expect(
    ctx.sandbox.state.requests.some(
      (r) =>
        r.path === 'withdraw/shop_payment_status' &&
        (r.body as Record<string, unknown>).shop_payment_id === lost,
    ),
  ).toBe(true);
  expect(rec.items).toContainEqual(
    expect.objectContaining({ kind: 'foreign_record', objectType: 'payout', objectId: lost }),
  );
  theirs.shopWriteOff = writeOff;
  theirs.amount = amount;
});

it('a refund the gateway holds under an id we do not know is missing_ours', async () => {
  const shopOrderId = `rt-i-${randomUUID()}`;
  const created = await ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({ shopOrderId, amount: '500.00', currency: 643, payway: PAYMENT.cardSuccess });
  expect(created.status).toBe(201);
  await eventually(async () => {
    const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
    expect(got.body.status).toBe('succeeded');
  });
  const shopRefundId = `rt-r-${randomUUID()}`;
  expect(
    (
      await ctx.http
        .post(`/api/v1/invoices/${shopOrderId}/refunds`)
        .set(auth())
        .send({ shopRefundId, amount: '100.00' })
    ).status,
  ).toBe(201);
  const ours = [...ctx.sandbox.state.refunds.values()].find((r) => r.shopRefundId === shopRefundId);
  if (ours === undefined) throw new Error('no sandbox refund');
  const stranger = `rt-unknown-${randomUUID()}`;
  ctx.sandbox.state.refunds.set(stranger, {
    ...ours,
    shopRefundId: stranger,
    status: 'SUCCESS',
  });
  const rec = await reconcile();
  expect(rec.items).toContainEqual(
    expect.objectContaining({
      kind: 'missing_ours',
      objectType: 'refund',
      objectId: stranger,
      ours: null,
      gateway: 'SUCCESS',
    }),
  );
});
