import { Client } from 'pg';
import request from 'supertest';
import type { RunningService } from '../../src/bootstrap';
import { PAYMENT, PAYOUT } from '../support/payways';
import { SANDBOX_ADMIN_KEY as ADMIN_KEY, SANDBOX_SHOP_KEY as SHOP_KEY, startSandboxModeService, type SandboxModeService } from '../support/sandbox-mode';

/**
 * The sandbox clock, sandbox mode as `npm start` runs it (the sandbox in-process):
 * time you can move, seconds of test for hours and days of the service's time.
 */
const HOLD_TTL_S = 86_400;
const LEAD_S = 3600;
const WARNING_S = 7200;
const POLL_MAX_S = 7200;
const WATCH_MAX_S = 86_400 * 2;
const RETENTION_DAYS = 4;

let sm: SandboxModeService;
let service: RunningService;
let db: { url: string };
let sandboxOrigin: string;

type Json = Record<string, unknown>;
interface Report {
  now: string;
  offsetSeconds: number;
  jobs: Array<{ job: string; runs: number }>;
  events: Array<{ type: string; objectId: string }>;
}

beforeAll(async () => {
  sm = await startSandboxModeService({
    SANDBOX_HOLD_TTL_S: String(HOLD_TTL_S),
    HOLD_POLICY_LEAD_S: String(LEAD_S),
    HOLD_EXPIRY_WARNING_S: String(WARNING_S),
    PAYOUT_POLL_MAX_S: String(POLL_MAX_S),
    WATCH_MAX_S: String(WATCH_MAX_S),
    // Short retention: what ages out does so within a few days of moved time (each day that
    // ends is a stop of the advance, for its reconciliation).
    RETENTION_NOTIFICATIONS_DAYS: String(RETENTION_DAYS),
    RETENTION_EVENTS_DAYS: String(RETENTION_DAYS),
    RETENTION_DELIVERIES_DAYS: String(RETENTION_DAYS),
  });
  service = sm.service;
  db = { url: sm.databaseUrl };
  sandboxOrigin = sm.sandboxOrigin;
}, 120_000);

afterAll(async () => {
  await sm?.close();
});

const http = (): ReturnType<typeof request> => request(service.url);
const auth = { Authorization: `Bearer ${SHOP_KEY}` };

async function advance(seconds: number): Promise<Report> {
  const res = await fetch(`${sandboxOrigin}/sandbox/clock/advance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ seconds }),
  });
  const body = (await res.json()) as { data: Report; message?: string };
  expect({ status: res.status, message: body.message }).toEqual({ status: 200, message: undefined });
  return body.data;
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  let v = await read();
  while (!ok(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  return v;
}

const invoice = async (id: string): Promise<Json> =>
  (await http().get(`/api/v1/invoices/${id}`).set(auth)).body as Json;

/** A two-step invoice paid by the payer: `held`, with its hold's expiry learnt at once. */
async function held(shopOrderId: string, holdPolicy?: string): Promise<Json> {
  const created = await http()
    .post('/api/v1/invoices')
    .set(auth)
    .send({ shopOrderId, amount: '100.00', currency: 643, payway: PAYMENT.card, twoStep: true, ...(holdPolicy ? { holdPolicy } : {}) });
  expect(created.status).toBe(201);
  const paid = await fetch(`${sandboxOrigin}/sandbox/invoices/${encodeURIComponent(shopOrderId)}/pay`, { method: 'POST' });
  expect(paid.status).toBe(200);
  const inv = await until(() => invoice(shopOrderId), (b) => b.status === 'held');
  expect(inv.status).toBe('held');
  return inv;
}

it('reads the clock, and refuses to move it back', async () => {
  const res = await fetch(`${sandboxOrigin}/sandbox/clock`);
  expect(res.status).toBe(200);
  const { data } = (await res.json()) as { data: { now: string; offsetSeconds: number } };
  expect(data.offsetSeconds).toBe(0);
  expect(Math.abs(Date.parse(data.now) - Date.now())).toBeLessThan(5000);
  for (const seconds of [-60, 0, 'soon']) {
    const back = await fetch(`${sandboxOrigin}/sandbox/clock/advance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seconds }),
    });
    expect(back.status).toBe(400);
  }
});

it('learns a hold expiry at once (invoice.hold_updated); the policies act at the lead time, notify warns and the hold lapses to expired', async () => {
  const tag = Date.now();
  const toCharge = await held(`clk-charge-${tag}`, 'charge');
  const toRelease = await held(`clk-release-${tag}`, 'release');
  const toNotify = await held(`clk-notify-${tag}`);
  // Learnt by the check made right after the hold (the first advance runs what is due now).
  const first = await advance(1);
  for (const inv of [toCharge, toRelease, toNotify]) {
    const now = await invoice(inv.shopOrderId as string);
    expect(now.holdExpiresAt).toEqual(expect.any(String));
    expect(first.events).toContainEqual(expect.objectContaining({ type: 'invoice.hold_updated', objectId: inv.shopOrderId }));
  }
  const expiresAt = Date.parse((await invoice(toNotify.shopOrderId as string)).holdExpiresAt as string);

  // Past the warning, before the lead time: warned, nothing acted on.
  const warned = await advance(HOLD_TTL_S - WARNING_S + 60);
  expect(warned.events).toContainEqual(expect.objectContaining({ type: 'invoice.hold_expiring', objectId: toNotify.shopOrderId }));
  expect((await invoice(toCharge.shopOrderId as string)).status).toBe('held');

  // Past the expiry: charged and released at the lead time, the notify hold lapsed at the gateway.
  const lapsed = await advance(WARNING_S);
  expect(Date.parse(lapsed.now)).toBeGreaterThan(expiresAt);
  expect((await invoice(toCharge.shopOrderId as string)).status).toBe('succeeded');
  expect((await invoice(toRelease.shopOrderId as string)).status).toBe('unheld');
  const expired = await invoice(toNotify.shopOrderId as string);
  expect(expired.status).toBe('expired');
  const types = lapsed.events.map((e) => `${e.type} ${e.objectId}`);
  expect(types).toEqual(
    expect.arrayContaining([
      `invoice.succeeded ${toCharge.shopOrderId as string}`,
      `invoice.unheld ${toRelease.shopOrderId as string}`,
      `invoice.expired ${toNotify.shopOrderId as string}`,
    ]),
  );
  // The charge came before the lapse, in order: at the lead time.
  expect(types.indexOf(`invoice.succeeded ${toCharge.shopOrderId as string}`)).toBeLessThan(
    types.indexOf(`invoice.expired ${toNotify.shopOrderId as string}`),
  );
  // A charge after the lapse is refused, as the gateway refuses it.
  const late = await http().post(`/api/v1/invoices/${toNotify.shopOrderId as string}/charge`).set(auth);
  expect(late.status).toBe(409);
  // The policy's own act, by no key, named in the trail.
  const pg = new Client({ connectionString: db.url });
  await pg.connect();
  try {
    const trail = await pg.query(
      `SELECT to_status, key_id FROM events WHERE entity_type = 'invoice' AND entity_id = $1 AND details->>'holdPolicy' = 'charge'`,
      [toCharge.shopOrderId],
    );
    expect(trail.rows).toContainEqual({ to_status: 'succeeded', key_id: null });
    // The books hold nothing for the lapsed hold, its amount for the charged one.
    const books = await pg.query(
      `SELECT object_id, count(*)::int AS n FROM ledger_entries WHERE object_type = 'invoice' AND object_id = ANY($1) GROUP BY object_id`,
      [[toCharge.shopOrderId, toNotify.shopOrderId, toRelease.shopOrderId]],
    );
    expect(books.rows).toEqual([{ object_id: toCharge.shopOrderId, n: 1 }]);
  } finally {
    await pg.end();
  }
}, 60_000);

it('a payout that never goes final is flagged at its deadline and still watched until WATCH_MAX_S', async () => {
  const shopPaymentId = `clk-payout-${Date.now()}`;
  const created = await http()
    .post('/api/v1/payouts')
    .set(auth)
    .send({ shopPaymentId, amount: '100.00', amountType: 'ps_amount', shopCurrency: 643, payway: PAYOUT.sandboxCard('never_final'), account: '4111111111111111' });
  expect(created.status).toBe(202);
  const flagged = await advance(POLL_MAX_S + 60);
  const payout = (await http().get(`/api/v1/payouts/${shopPaymentId}`).set(auth)).body as Json;
  expect(payout).toMatchObject({ status: 'needs_attention', needsAttention: true });
  expect(flagged.events.map((e) => `${e.type} ${e.objectId}`)).toContain(`payout.needs_attention ${shopPaymentId}`);
  // Still asked about while the watch lasts.
  const watched = await advance(86_400);
  expect(watched.jobs.map((j) => j.job)).toContain('payout-poller');
  // Past WATCH_MAX_S after its creation the watch ends: an operator decides.
  await advance(WATCH_MAX_S);
  const ended = (await http().get(`/api/v1/payouts/${shopPaymentId}`).set(auth)).body as Json;
  expect(ended).toMatchObject({ status: 'needs_attention', attentionReason: expect.stringMatching(/^watch_ended/) });
}, 60_000);

it('the daily reconciliation and report run for the day that ended; health says the clock moved', async () => {
  // Two days end within the advance: each is reconciled, in order.
  const moved = await advance(2 * 86_400 + 7200);
  expect(moved.jobs.find((j) => j.job === 'reconcile-books')?.runs).toBeGreaterThanOrEqual(2);
  const day = new Date(Date.parse(moved.now) - 86_400_000).toISOString().slice(0, 10);
  const report = await http().get(`/api/v1/admin/reports/daily?date=${day}`).set({ Authorization: `Bearer ${ADMIN_KEY}` });
  expect(report.status).toBe(200);
  const health = await http().get('/health');
  expect(health.body).toMatchObject({ clock: { moved: true } });
}, 60_000);

it('retention prunes what aged out on the moved clock', async () => {
  const pg = new Client({ connectionString: db.url });
  await pg.connect();
  try {
    const count = async (): Promise<{ notifications: number; horizon: number }> =>
      (
        await pg.query(
          `SELECT (SELECT count(*) FROM notifications)::int AS notifications,
                  COALESCE((SELECT position FROM feed_horizon), 0)::int AS horizon`,
        )
      ).rows[0] as { notifications: number; horizon: number };
    // A payment of today: its notification and events age out after RETENTION_DAYS.
    const shopOrderId = `clk-aged-${Date.now()}`;
    const created = await http()
      .post('/api/v1/invoices')
      .set(auth)
      .send({ shopOrderId, amount: '10.00', currency: 643, payway: PAYMENT.card });
    expect(created.status).toBe(201);
    await fetch(`${sandboxOrigin}/sandbox/invoices/${shopOrderId}/pay`, { method: 'POST' });
    expect((await until(() => invoice(shopOrderId), (b) => b.status === 'succeeded')).status).toBe('succeeded');
    const before = await count();
    expect(before.notifications).toBeGreaterThan(0);
    const moved = await advance((RETENTION_DAYS + 1) * 86_400);
    expect(moved.jobs.map((j) => j.job)).toEqual(expect.arrayContaining(['notification-retention', 'event-retention']));
    const after = await count();
    expect(after.notifications).toBeLessThan(before.notifications);
    // The feed's oldest cursor moved past the events that aged out.
    expect(after.horizon).toBeGreaterThan(before.horizon);
  } finally {
    await pg.end();
  }
}, 120_000);
