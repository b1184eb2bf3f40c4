import type { Client } from 'pg';
import type { SandboxHandle } from '../../src/sandbox/sandbox.server';
import {
  CRASH_SHOP_KEY as SHOP_KEY,
  CrashWorld,
  killHard,
  waitFor,
  type ServiceChild,
} from '../support/crash-service';
import { booksAgainstChart } from '../support/ledger-chart';
import { PAYMENT, PAYOUT } from '../support/payways';
import { freePort } from '../support/ports';

/**
 * Both or neither, with a real kill: the compiled service is killed (SIGKILL, at the chaos suite's
 * crash points) between storing a notification and applying it, after the notification's commit,
 * after the gateway answered a payout's create and after that answer was recorded. At each death,
 * and after a restart has settled everything and reconciled the day, every succeeded invoice and
 * every sent or final payout has exactly its entries (the chart of docs/api.md), every entry's
 * object is in the state it records, every entry balances, and reconciliation finds nothing.
 */
const ADMIN_KEY = 'crash-admin-key-0123456789';
const CARD = '4111111111111111';

let world: CrashWorld;
let sandbox: SandboxHandle;
let db: Client;
/** One address for every life of the service: the sandbox's notifications find the new one. */
let env: Record<string, string>;

beforeAll(async () => {
  world = await CrashWorld.open('ledger-crash');
  ({ sandbox, db } = world);
  const port = String(await freePort());
  env = {
    PORT: port,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    NOTIFY_ALLOWED_IPS: '127.0.0.1,::1,::ffff:127.0.0.1',
  };
}, 180000);

afterAll(async () => {
  await world?.close();
});

const books = (): Promise<string[]> =>
  booksAgainstChart(async (sql, params) => (await db.query(sql, params)).rows);

const dead = (s: ServiceChild): boolean => s.child.exitCode !== null || s.child.signalCode !== null;

function call(s: ServiceChild, path: string, body: unknown, key = SHOP_KEY): Promise<Response> {
  return fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
}

/** Killed at `point` while doing `work`: the books, right after the death, are whole. */
async function dieAt(point: string, work: (s: ServiceChild) => Promise<void>): Promise<void> {
  const s = await world.start({ ...env, CHAOS_CRASH_AT: point });
  await work(s).catch(() => undefined);
  await waitFor(
    `the crash at ${point} (output: ${s.output()})`,
    async () => (dead(s) ? true : undefined),
    20000,
  );
  expect(s.child.signalCode).toBe('SIGKILL');
  expect(await books()).toEqual([]);
}

async function invoicePaidByPayer(s: ServiceChild, shopOrderId: string): Promise<void> {
  const res = await call(s, '/api/v1/invoices', {
    shopOrderId,
    amount: '150.25',
    currency: 643,
    payway: PAYMENT.card,
  });
  expect(res.status).toBe(201);
  const paid = await fetch(`${sandbox.origin}/sandbox/invoices/${shopOrderId}/pay`, {
    method: 'POST',
  });
  expect(paid.status).toBe(200);
}

const payout = (shopPaymentId: string) => ({
  shopPaymentId,
  amount: '300.00',
  amountType: 'ps_amount',
  shopCurrency: 643,
  payway: PAYOUT.card,
  account: CARD,
});

it('a kill at a crash point leaves each state change with its entries or neither; after a restart the books agree with the gateway', async () => {
  const stamp = Date.now();
  const orders = [`lc-store-${stamp}`, `lc-commit-${stamp}`];
  const payouts = [`lc-answer-${stamp}`, `lc-result-${stamp}`];

  // Stored, not applied: the invoice is not succeeded and has no entry.
  await dieAt('notification.apply.after_store', (s) => invoicePaidByPayer(s, orders[0]));
  const stored = await db.query(
    `SELECT i.status, (SELECT count(*)::int FROM ledger_entries e WHERE e.object_pk = i.id) AS entries
       FROM invoices i WHERE shop_order_id = $1`,
    [orders[0]],
  );
  expect(stored.rows[0].status).not.toBe('succeeded');
  expect(stored.rows[0].entries).toBe(0);

  // A life without a crash point takes the stored notification when the gateway sends it again,
  // and answers every delivery the gateway still owes: were one left, the next life's crash at
  // the commit could be this invoice's and not its own (seen once on CI, where the next invoice
  // was then never paid).
  const between = await world.start(env);
  await waitFor(
    () =>
      `the stored notification applied and the gateway's outbox empty (outbox: ${sandbox.state.outbox.length}; output: ${between.output()})`,
    async () => {
      const now = await db.query(`SELECT status FROM invoices WHERE shop_order_id = $1`, [
        orders[0],
      ]);
      return now.rows[0]?.status === 'succeeded' && sandbox.state.outbox.length === 0
        ? true
        : undefined;
    },
    60000,
  );
  await killHard(between.child);

  // Committed, not answered: the change and its entry both.
  await dieAt('notification.apply.after_commit', (s) => invoicePaidByPayer(s, orders[1]));

  // The gateway has the payout, the service had not recorded its answer: its write-off is frozen
  // since the create was claimed (the outcome unknown), and nothing more.
  await dieAt('payout.create.after_answer', async (s) => {
    await call(s, '/api/v1/payouts', payout(payouts[0]));
  });
  const unrecorded = await db.query(
    `SELECT p.withdraw_id, (SELECT count(*)::int FROM ledger_entries e WHERE e.object_pk = p.id) AS entries
       FROM payouts p WHERE shop_payment_id = $1`,
    [payouts[0]],
  );
  expect(unrecorded.rows[0]).toEqual({ withdraw_id: null, entries: 1 });
  // The answer recorded, the caller not answered: sent with its entry.
  await dieAt('payout.create.after_result', async (s) => {
    await call(s, '/api/v1/payouts', payout(payouts[1]));
  });
  const recorded = await db.query(
    `SELECT e.kind FROM ledger_entries e JOIN payouts p ON p.id = e.object_pk WHERE p.shop_payment_id = $1`,
    [payouts[1]],
  );
  expect(recorded.rows.map((r: { kind: string }) => r.kind)).toContain('payout.sent');

  // A restart settles everything from the database and the gateway.
  const survivor = await world.start(env);
  let open: unknown[] = [];
  await waitFor(
    () => `every object final; still open: ${JSON.stringify(open)} (output: ${survivor.output()})`,
    async () => {
      open = (
        await db.query(
          `SELECT shop_order_id AS id, status, next_check_at FROM invoices
            WHERE shop_order_id = ANY($1) AND status <> 'succeeded'
           UNION ALL
           SELECT shop_payment_id, status, next_poll_at FROM payouts
            WHERE shop_payment_id = ANY($2) AND status <> 'succeeded'`,
          [orders, payouts],
        )
      ).rows;
      return open.length === 0 ? true : undefined;
    },
    // Alone this takes seconds; beside the whole suite on 2 cores, a minute was seen not to do.
    120000,
  );
  expect(await books()).toEqual([]);
  const kinds = await db.query(
    `SELECT object_id, array_agg(kind ORDER BY id) AS kinds FROM ledger_entries
      WHERE object_id = ANY($1) GROUP BY object_id`,
    [[...orders, ...payouts]],
  );
  const byObject = Object.fromEntries(
    kinds.rows.map((r: { object_id: string; kinds: string[] }) => [r.object_id, r.kinds]),
  );
  for (const o of orders) expect(byObject[o]).toEqual(['invoice.succeeded']);
  for (const p of payouts) expect(byObject[p]).toEqual(['payout.sent', 'payout.succeeded']);
  // One payout each at the gateway, whatever the kills.
  for (const p of payouts)
    expect([...sandbox.state.payouts.values()].filter((x) => x.shopPaymentId === p)).toHaveLength(
      1,
    );

  const rec = await call(survivor, '/api/v1/admin/reconciliations', {}, ADMIN_KEY);
  expect(rec.status).toBe(201);
  const result = (await rec.json()) as { status: string; items: unknown[] };
  expect(result.items).toEqual([]);
  expect(result.status).toBe('balanced');
  await killHard(survivor.child);
}, 240000);
