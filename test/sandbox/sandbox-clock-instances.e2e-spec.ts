import { Client } from 'pg';
import request from 'supertest';
import type { SandboxHandle } from '../../src/sandbox/sandbox.server';
import { PAYOUT_SECRET, PAYOUT_SHOP_ID, SECRET, SHOP_ID, startTestApp, type TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';
import { SANDBOX_SHOP_KEY, startSandboxModeService, type SandboxModeService } from '../support/sandbox-mode';

/**
 * Several instances under a moved clock: the sandbox-mode service advances the clock
 * while a second instance on the same database and gateway runs its jobs on its own ticks. Each
 * hold policy's act happens once: one invoice/charge per hold, one `invoice.succeeded`.
 */
const HOLD_TTL_S = 86_400;
const LEAD_S = 3600;
const HOLDS = 6;

let a: SandboxModeService;
let b: TestContext;

beforeAll(async () => {
  a = await startSandboxModeService({
    SANDBOX_SHOP_ID: String(SHOP_ID),
    SANDBOX_SECRET_KEY: SECRET,
    SANDBOX_PAYOUT_SHOP_ID: String(PAYOUT_SHOP_ID),
    SANDBOX_PAYOUT_SECRET_KEY: PAYOUT_SECRET,
    SANDBOX_HOLD_TTL_S: String(HOLD_TTL_S),
    HOLD_POLICY: 'charge',
    HOLD_POLICY_LEAD_S: String(LEAD_S),
  });
  // The second instance talks to the first one's in-process gateway sandbox.
  const gateway = { origin: a.sandboxOrigin, baseUrl: `${a.sandboxOrigin}/gateway/v1/` } as SandboxHandle;
  b = await startTestApp({
    databaseUrl: a.databaseUrl,
    sandbox: gateway,
    env: { SCHEDULER_ENABLED: 'true', RECONCILE_TICK_MS: '20', HOLD_POLICY: 'charge', HOLD_POLICY_LEAD_S: String(LEAD_S) },
  });
}, 120_000);

afterAll(async () => {
  await b?.close();
  await a?.close();
});

const auth = { Authorization: `Bearer ${SANDBOX_SHOP_KEY}` };

it('acts on each hold once while two instances run the jobs', async () => {
  const http = request(a.service.url);
  const ids: string[] = [];
  for (let i = 0; i < HOLDS; i++) {
    const shopOrderId = `clk-inst-${Date.now()}-${i}`;
    const created = await http
      .post('/api/v1/invoices')
      .set(auth)
      .send({ shopOrderId, amount: '100.00', currency: 643, payway: PAYMENT.card, twoStep: true });
    expect(created.status).toBe(201);
    expect((await fetch(`${a.sandboxOrigin}/sandbox/invoices/${shopOrderId}/pay`, { method: 'POST' })).status).toBe(200);
    ids.push(shopOrderId);
  }
  const statuses = async (): Promise<string[]> =>
    Promise.all(ids.map(async (id) => ((await http.get(`/api/v1/invoices/${id}`).set(auth)).body as { status: string }).status));
  const end = Date.now() + 15_000;
  while ((await statuses()).some((s) => s !== 'held') && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  expect(await statuses()).toEqual(ids.map(() => 'held'));

  // Step past the lead time in small moves, so the second instance's ticks run between them.
  for (let moved = 0; moved < HOLD_TTL_S - LEAD_S + 600; moved += 4 * 3600) {
    const res = await fetch(`${a.sandboxOrigin}/sandbox/clock/advance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seconds: 4 * 3600 }),
    });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 60));
  }
  const settled = Date.now() + 15_000;
  while ((await statuses()).some((s) => s !== 'succeeded') && Date.now() < settled) await new Promise((r) => setTimeout(r, 100));
  expect(await statuses()).toEqual(ids.map(() => 'succeeded'));

  const calls = (await (await fetch(`${a.sandboxOrigin}/sandbox/requests`)).json()) as { data: Array<{ path: string; body: { invoice_id?: number } }> };
  const charges = calls.data.filter((r) => r.path === 'invoice/charge');
  expect(charges).toHaveLength(HOLDS);
  expect(new Set(charges.map((c) => c.body.invoice_id)).size).toBe(HOLDS);
  const db = new Client({ connectionString: a.databaseUrl });
  await db.connect();
  try {
    const rows = await db.query(
      `SELECT entity_id, count(*)::int AS n FROM events WHERE type = 'invoice.succeeded' AND entity_id = ANY($1) GROUP BY entity_id`,
      [ids],
    );
    expect(rows.rows.map((r: { n: number }) => r.n)).toEqual(ids.map(() => 1));
  } finally {
    await db.end();
  }
}, 90_000);
