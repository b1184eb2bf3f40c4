import { booksText, newTracked, Reconciliation, settle } from './support/ledger';
import { recordRow } from './support/results';
import {
  createInvoice,
  createPayout,
  createRefund,
  invoiceOrder,
  payerActs,
  payoutOrder,
  uniqueId,
  withRepeats,
} from './support/shop';
import { sleep, World } from './support/world';

/**
 * Gateway faults: mixed invoices (one- and two-step, payer-less and with a payer),
 * refunds and payouts, a fifth of them hit by a fault of the gateway (time-out done or not done,
 * HTTP 500, connection reset before or after the work, non-fatal code, slow answer), status calls
 * failing now and then, notifications duplicated, held back and delivered out of order, dropped,
 * and re-sent. Then the service's books must equal the gateway's, object by object and summed
 * per currency, with nothing created twice and every unknown settled.
 *
 * CHAOS_OPS (default 1000), CHAOS_FAULT_RATE (0.2), CHAOS_CONCURRENCY (16 per world),
 * CHAOS_FAULT_WORLDS (2: the operations split over that many worlds side by side), CHAOS_SETTLE_S (60).
 */

const OPS = Number(process.env.CHAOS_OPS ?? 1000);
const FAULT_RATE = Number(process.env.CHAOS_FAULT_RATE ?? 0.2);
const CONCURRENCY = Number(process.env.CHAOS_CONCURRENCY ?? 16);
const SETTLE_MS = Number(process.env.CHAOS_SETTLE_S ?? 60) * 1000;

/** Faults a payway tag can carry (the create itself), plus `slow`: an answer late but in time. */
const CREATE_FAULTS = [
  'timeout_done',
  'timeout_not_done',
  'server_error',
  'reset',
  'reset_done',
  'nonfatal',
  'slow',
] as const;
const QUEUED_FAULTS = [
  'timeout_done',
  'timeout_not_done',
  'http500',
  'reset',
  'reset_done',
  'nonfatal',
] as const;
const STATUS_PATHS = [
  'invoice/check',
  'invoice/get-refunds',
  'withdraw/status',
  'withdraw/shop_payment_status',
];

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];
const chance = (p: number): boolean => Math.random() < p;

const WORLDS = Math.max(1, Number(process.env.CHAOS_FAULT_WORLDS ?? 2));
const worlds: World[] = [];
const faults: Record<string, number> = {};
const count = (k: string): void => {
  faults[k] = (faults[k] ?? 0) + 1;
};

beforeAll(async () => {
  for (let i = 0; i < WORLDS; i++)
    worlds.push(await World.create(`faults${i}`, process.env.CHAOS_PG_URL!));
  await Promise.all(worlds.map((w) => w.start()));
});

afterAll(async () => {
  for (const w of worlds) await w.close();
});

it(`${OPS} mixed operations, ${Math.round(FAULT_RATE * 100)} % with gateway faults: no duplicate, every unknown settled, the books equal the gateway's to the cent`, async () => {
  // The operations split over independent worlds (service, database, gateway each) run side by side.
  const runs = await Promise.all(
    worlds.map((w, i) => drive(w, Math.floor(OPS / WORLDS) + (i < OPS % WORLDS ? 1 : 0))),
  );
  const sum = (f: (r: Reconciliation) => number): number =>
    runs.reduce((t, r) => t + f(r.result), 0);
  const twice = sum((r) => r.createdTwice);
  const lost = sum((r) => r.lost);
  const wrong = sum((r) => r.wrong);
  const unsettled = sum((r) => r.unsettled);
  const booksEqual = runs.every((r) => r.result.booksEqual);
  const faultsText = Object.entries(faults)
    .sort((x, y) => y[1] - x[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const books = runs
    .map((r) => `service ${booksText(r.result.service)} / gateway ${booksText(r.result.gateway)}`)
    .join(' | ');
  const notes = `books ${booksEqual ? 'equal' : 'DIFFER'}; ${sum((r) => r.resent)} re-sent; load ${Math.max(...runs.map((r) => r.loadS)).toFixed(0)} s, settled in ${Math.max(...runs.map((r) => r.settleS)).toFixed(0)} s; ${books}; faults: ${faultsText}`;
  console.log(`gateway faults: ${notes}`);
  recordRow({
    scenario: `gateway faults (${OPS} ops, ${Math.round(FAULT_RATE * 100)} % faults)`,
    runs: sum((r) => r.objects),
    twice,
    lost: lost + wrong,
    unsettled,
    flagged: sum((r) => r.flagged),
    verdict: twice + lost + wrong + unsettled === 0 && booksEqual ? 'ok' : 'FAIL',
    notes,
  });
  const problems = runs
    .flatMap((r) => r.result.problems)
    .slice(0, 20)
    .map((p) => `${p.kind} ${p.object} ${p.id}: ${p.detail}`);
  expect({ problems, twice, lost, wrong, unsettled }).toEqual({
    problems: [],
    twice: 0,
    lost: 0,
    wrong: 0,
    unsettled: 0,
  });
  for (const r of runs) {
    if (!r.result.booksEqual)
      console.log(`books differ; flagged apart from the gateway: ${r.result.flaggedApart.join(' | ')}`);
    expect(booksText(r.result.service)).toBe(booksText(r.result.gateway));
  }
});

/** Runs `ops` operations against one world, then lets it settle and reads its books. */
async function drive(
  world: World,
  ops: number,
): Promise<{ result: Reconciliation; loadS: number; settleS: number }> {
  const tracked = newTracked();
  const refundable: Array<{ shopOrderId: string; refunds: number; at: number }> = [];
  let next = 0;
  const started = Date.now();

  /**
   * A fault for this create, or null: the payway's own fault scenario when `asPayway` and the
   * catalogue lists one, else queued for the next call of the path (`slow`: a late answer in time).
   */
  function createFault(path: string, asPayway: boolean): string | null {
    if (!chance(FAULT_RATE)) return null;
    const f = pick(CREATE_FAULTS);
    count(f);
    if (f === 'slow' || !asPayway || (f === 'server_error' && path === 'withdraw/create')) {
      const fault = f === 'slow' ? 'timeout_done' : f === 'server_error' ? 'http500' : f;
      world.sandbox.state.faults.add({
        path,
        fault,
        remaining: 1,
        delayMs: f === 'slow' ? 400 : undefined,
      });
      return null;
    }
    return f;
  }

  async function invoiceOp(): Promise<void> {
    const usd = chance(0.3);
    const twoStep = !usd && chance(0.1);
    const fault = createFault(twoStep ? 'invoice/hold' : 'invoice/create', !usd && !twoStep);
    const r = Math.random();
    const kind =
      fault ??
      (twoStep || usd
        ? r < 0.6
          ? 'success'
          : 'payer'
        : r < 0.4
          ? 'success'
          : r < 0.5
            ? 'rejected'
            : r < 0.6
              ? 'dup_notify'
              : r < 0.68
                ? 'notify_none'
                : r < 0.72
                  ? 'out_of_order'
                  : 'payer');
    if (['dup_notify', 'notify_none', 'out_of_order'].includes(kind)) count(kind);
    // Everything but `success` and `rejected` waits for the payer (a fault's invoice included).
    const payer = kind !== 'success' && kind !== 'rejected';
    const order = invoiceOrder(kind, twoStep, usd);
    const answer = await createInvoice(world, tracked, order);
    if (payer) {
      await sleep(Math.random() * 300);
      await payerActs(world, order.shopOrderId, chance(0.85) ? 'pay' : 'decline');
    }
    if (twoStep && answer.status === 201) {
      await sleep(100 + Math.random() * 300);
      if (chance(FAULT_RATE)) {
        const f = pick(['timeout_done', 'timeout_not_done', 'http500'] as const);
        count(`charge ${f}`);
        world.sandbox.state.faults.add({ path: 'invoice/charge', fault: f, remaining: 1 });
      }
      await withRepeats(world, 'POST', `/api/v1/invoices/${order.shopOrderId}/charge`, undefined);
    }
    if (kind === 'success' && !twoStep)
      refundable.push({ shopOrderId: order.shopOrderId, refunds: 0, at: Date.now() });
    if (chance(0.05)) {
      count('notification resent');
      await world
        .control('POST', '/notifications/resend', { shop_order_id: order.shopOrderId, times: 2 })
        .catch(() => undefined);
    }
  }

  async function refundOp(): Promise<void> {
    const candidates = refundable.filter((r) => r.refunds < 2 && Date.now() - r.at > 2500);
    if (candidates.length === 0) return invoiceOp();
    const invoice = pick(candidates);
    invoice.refunds += 1;
    if (chance(FAULT_RATE)) {
      const f = pick(QUEUED_FAULTS);
      count(`refund ${f}`);
      world.sandbox.state.faults.add({ path: 'invoice/create-refund', fault: f, remaining: 1 });
    }
    await createRefund(world, tracked, invoice.shopOrderId, uniqueId('ref'), '10.00');
  }

  async function payoutOp(): Promise<void> {
    const kind =
      createFault('withdraw/create', true) ??
      pick(['success', 'success', 'success', 'reject', 'decline']);
    await createPayout(world, tracked, payoutOrder(kind));
  }

  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < ops) {
        const k = next++;
        if (k % 25 === 0) {
          const path = pick(STATUS_PATHS);
          const f = pick(['http500', 'reset', 'timeout_not_done'] as const);
          count(`${path} ${f}`);
          world.sandbox.state.faults.add({
            path,
            fault: f,
            remaining: 1 + Math.floor(Math.random() * 3),
          });
        }
        const r = Math.random();
        await (r < 0.5 ? invoiceOp() : r < 0.75 ? refundOp() : payoutOp());
      }
    }),
  );
  const loadS = (Date.now() - started) / 1000;
  world.sandbox.state.faults.clear();
  const settleStarted = Date.now();
  const result = await settle(world, tracked, SETTLE_MS);
  return { result, loadS, settleS: (Date.now() - settleStarted) / 1000 };
}
