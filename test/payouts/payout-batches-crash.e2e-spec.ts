import type { Client } from 'pg';
import type { SandboxHandle } from '../../src/sandbox/sandbox.server';
import { CRASH_SHOP_KEY as SHOP_KEY, CrashWorld, killHard, waitFor } from '../support/crash-service';
import { PAYOUT } from '../support/payways';

/**
 * A 1,000-row batch whose compiled service is killed (SIGKILL) while it sends the rows: a new
 * process resumes from the database alone, every row ends sent exactly once at the gateway, and
 * the batch's counts equal its rows' states.
 */

let world: CrashWorld;
let sandbox: SandboxHandle;
let db: Client;
const startChild = () => world.start({ PAYOUT_POLL_CONCURRENCY: '4' });

beforeAll(async () => {
  world = await CrashWorld.open('payout-batches-crash');
  ({ sandbox, db } = world);
}, 180000);

afterAll(async () => {
  await world?.close();
});

it('a 1,000-row batch killed mid-way is finished by the restarted service, each row sent once', async () => {
  const first = await startChild();
  const tag = `bc-${Date.now()}`;
  const rows = Array.from({ length: 1000 }, (_, i) => ({
    shopPaymentId: `${tag}-${i + 1}`,
    amount: '100.00',
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway: PAYOUT.card,
    account: '4111111111111111',
  }));
  const res = await fetch(`${first.url}/api/v1/payouts/batches`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${SHOP_KEY}` },
    body: JSON.stringify({ batchId: tag, rows }),
  });
  expect(res.status).toBe(202);
  await waitFor(
    'some rows answered',
    async () => {
      const r = await db.query(
        `SELECT count(*)::int AS n FROM payout_batch_rows WHERE state <> 'pending'`,
      );
      return (r.rows[0] as { n: number }).n >= 150 ? true : undefined;
    },
    60000,
  ).catch(async (e: Error) => {
    const r = await db.query(
      `SELECT state, result, lease_until FROM payout_batch_rows ORDER BY row_no LIMIT 3`,
    );
    throw new Error(`${e.message}: ${JSON.stringify(r.rows)} ${first.output().slice(-3000)}`);
  });
  await killHard(first.child);
  const left = await db.query(
    `SELECT count(*)::int AS n FROM payout_batch_rows WHERE state = 'pending'`,
  );
  expect((left.rows[0] as { n: number }).n).toBeGreaterThan(0);

  const second = await startChild();
  await waitFor(
    `the batch to complete (output: ${second.output()})`,
    async () => {
      const r = await db.query(`SELECT status FROM payout_batches WHERE batch_id = $1`, [tag]);
      return r.rows[0]?.status === 'completed' ? true : undefined;
    },
    150000,
  );
  const sample = await db.query(
    `SELECT state, result FROM payout_batch_rows WHERE state = 'refused' LIMIT 1`,
  );
  expect(sample.rows).toEqual([]);
  const creates = new Map<string, number>();
  for (const r of sandbox.state.requests)
    if (r.path === 'withdraw/create') {
      const id = String((r.body as Record<string, unknown>).shop_payment_id);
      creates.set(id, (creates.get(id) ?? 0) + 1);
    }
  for (const r of rows)
    expect([r.shopPaymentId, creates.get(r.shopPaymentId)]).toEqual([r.shopPaymentId, 1]);
  const onGateway = [...sandbox.state.payouts.values()].filter((p) =>
    p.shopPaymentId.startsWith(`${tag}-`),
  );
  expect(onGateway).toHaveLength(1000);

  const got = await fetch(`${second.url}/api/v1/payouts/batches/${tag}?limit=500`, {
    headers: { Authorization: `Bearer ${SHOP_KEY}` },
  });
  const view = (await got.json()) as { counts: Record<string, number> };
  const states = await db.query(
    `SELECT state, count(*)::int AS n FROM payout_batch_rows r JOIN payout_batches b ON b.id = r.batch_pk
      WHERE b.batch_id = $1 GROUP BY state`,
    [tag],
  );
  const byState = Object.fromEntries(
    (states.rows as Array<{ state: string; n: number }>).map((s) => [s.state, s.n]),
  );
  expect(view.counts).toEqual({
    total: 1000,
    pending: 0,
    sent: byState.sent ?? 0,
    refused: byState.refused ?? 0,
    cancelled: byState.cancelled ?? 0,
  });
  expect(view.counts.sent).toBe(1000);
  const events = await db.query(
    `SELECT 1 FROM events WHERE entity_type = 'payout_batch' AND entity_id = $1 AND type = 'payout_batch.completed'`,
    [tag],
  );
  expect(events.rowCount).toBe(1);
}, 300000);
