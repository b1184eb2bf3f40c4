import { Client } from 'pg';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { admin, ADMIN_KEY, auth, startTestApp, TestContext } from '../support/app';
import { PAYOUT } from '../support/payways';
import { ADMIN_KEY_2, admin2 } from '../support/payouts';
import { hidden, signIn } from '../console/console-session';

/**
 * Payouts at or above PAYOUT_APPROVAL_THRESHOLD wait for admin keys and nothing is
 * sent until then; above PAYOUT_DUAL_APPROVAL_THRESHOLD two distinct admin keys must approve.
 */
const CARD = '4111111111111111';
const ENV = {
  PAYOUT_POLL_INTERVAL_S: '0.2',
  PAYOUT_POLL_MAX_S: '30',
  ADMIN_API_KEYS: `${ADMIN_KEY},${ADMIN_KEY_2}`,
  PAYOUT_APPROVAL_THRESHOLD: '643:5000.00',
  PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:20000',
};

let ctx: TestContext;
let db: Client;
let seq = 0;
const newId = (): string => `apr-${Date.now()}-${++seq}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const body = (shopPaymentId: string, amount: string): Record<string, unknown> => ({
  shopPaymentId,
  amount,
  amountType: 'ps_amount',
  shopCurrency: 643,
  payway: PAYOUT.card,
  account: CARD,
});

/** withdraw/create requests the sandbox received for this payout. */
const creates = (id: string): number =>
  ctx.sandbox.state.requests.filter(
    (r) => r.path === 'withdraw/create' && (r.body as Record<string, unknown>).shop_payment_id === id,
  ).length;
/** Every gateway request about this payout (create or status), by id or shop_payment_id. */
const gatewayCalls = (id: string): number =>
  ctx.sandbox.state.requests.filter((r) => {
    const b = r.body as Record<string, unknown>;
    return b.shop_payment_id === id;
  }).length;

async function create(id: string, amount: string): Promise<Record<string, unknown>> {
  const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, amount));
  expect(res.status).toBe(202);
  return res.body as Record<string, unknown>;
}

async function status(id: string): Promise<string> {
  const res = await ctx.http.get(`/api/v1/payouts/${id}`).set(auth()).expect(200);
  return (res.body as { status: string }).status;
}

async function pollUntilFinal(id: string, maxMs = 10000): Promise<string> {
  const poller = ctx.service.app.get(PayoutPoller);
  const until = Date.now() + maxMs;
  for (;;) {
    await poller.runOnce();
    const s = await status(id);
    if (['succeeded', 'failed', 'rejected'].includes(s) || Date.now() > until) return s;
    await sleep(100);
  }
}

async function eventsOf(id: string): Promise<Array<{ type: string | null; cause: string; key_id: string | null; details: Record<string, unknown> | null }>> {
  const r = await db.query(
    `SELECT type, cause, key_id, details FROM events WHERE entity_type = 'payout' AND entity_id = $1 ORDER BY id`,
    [id],
  );
  return r.rows as Array<{ type: string | null; cause: string; key_id: string | null; details: Record<string, unknown> | null }>;
}

beforeAll(async () => {
  ctx = await startTestApp({ env: ENV });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

describe('payouts at or above PAYOUT_APPROVAL_THRESHOLD', () => {
  it('below the threshold a payout is sent at once (the threshold is "at or above")', async () => {
    const id = newId();
    // The threshold weighs the write-off: a shop_amount is its own (a ps_amount adds the fee).
    const res = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({ ...body(id, '4999.99'), amountType: 'shop_amount' });
    expect(res.status).toBe(202);
    const p = res.body as Record<string, unknown>;
    expect(p.status).not.toBe('awaiting_approval');
    expect(creates(id)).toBe(1);
  });

  it('at the threshold it is stored awaiting_approval, nothing is sent, the poller leaves it, and a shop key cannot approve it on any path spelling', async () => {
    const id = newId();
    const p = await create(id, '5000');
    expect(p).toMatchObject({ shopPaymentId: id, status: 'awaiting_approval', withdrawId: null, nextPollAt: null });
    const poller = ctx.service.app.get(PayoutPoller);
    await poller.runOnce();
    await ctx.http.post(`/api/v1/admin/payouts/${id}/reconcile`).set(admin()).expect(200);
    for (const path of [
      `/api/v1/admin/payouts/${id}/approve`,
      `/api/v1/admin/payouts/${id}/approve/`,
      `/api/v1/ADMIN/payouts/${id}/approve`,
      `/api/v1/admin//payouts/${id}/approve`,
      `/api/v1/admin/payouts/${encodeURIComponent(id)}/%61pprove`,
    ]) {
      const res = await ctx.http.post(path).set(auth()).send({});
      expect([403, 404]).toContain(res.status);
    }
    const res = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(auth()).send({});
    expect(res.status).toBe(403);
    await ctx.http.post(`/api/v1/admin/payouts/${id}/reject`).set(auth()).send({ reason: 'x' }).expect(403);
    // A replayed create answers the stored 202 and sends nothing.
    const again = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '5000.00'));
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toMatchObject({ status: 'awaiting_approval' });
    // A client can never set its own status.
    await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({ ...body(newId(), '6000'), status: 'pending' })
      .expect(400);
    expect(await status(id)).toBe('awaiting_approval');
    expect(gatewayCalls(id)).toBe(0);
    const ev = await eventsOf(id);
    expect(ev[0]).toMatchObject({ type: 'payout.awaiting_approval', cause: 'api' });
  });

  it('approve by an admin key sends it once, through the poller to its final status, audited with the key id', async () => {
    const id = newId();
    await create(id, '7500.50');
    const res = await ctx.http
      .post(`/api/v1/admin/payouts/${id}/approve`)
      .set(admin())
      .send({ note: 'checked' })
      .expect(200);
    expect(res.body.status).not.toBe('awaiting_approval');
    expect(creates(id)).toBe(1);
    expect(await pollUntilFinal(id)).toBe('succeeded');
    expect(creates(id)).toBe(1);
    const again = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin2()).send({});
    expect(again.status).toBe(409);
    expect(again.body.type).toContain('not-awaiting-approval');
    const ev = await eventsOf(id);
    const approved = ev.find((e) => e.type === 'payout.approved');
    expect(approved?.key_id).toMatch(/^[0-9a-f]{12}$/);
    expect(approved?.details).toMatchObject({ note: 'checked', approval: 1, of: 1 });
    expect(ev.map((e) => e.type)).toEqual(
      expect.arrayContaining(['payout.awaiting_approval', 'payout.approved', 'payout.pending', 'payout.succeeded']),
    );
  });

  it('reject → rejected (final), never sent, event payout.rejected with rejectedBy operator and the reason', async () => {
    const id = newId();
    await create(id, '9000');
    await ctx.http.post(`/api/v1/admin/payouts/${id}/reject`).set(admin()).send({}).expect(400);
    await ctx.http.post(`/api/v1/admin/payouts/${id}/reject`).set(admin()).send({ reason: '   ' }).expect(400);
    const res = await ctx.http
      .post(`/api/v1/admin/payouts/${id}/reject`)
      .set(admin())
      .send({ reason: 'recipient not verified' })
      .expect(200);
    expect(res.body.status).toBe('rejected');
    await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin2()).send({}).expect(409);
    await ctx.service.app.get(PayoutPoller).runOnce();
    await ctx.http.post(`/api/v1/admin/payouts/${id}/reconcile`).set(admin()).expect(200);
    expect(await status(id)).toBe('rejected');
    expect(gatewayCalls(id)).toBe(0);
    const rejected = (await eventsOf(id)).find((e) => e.type === 'payout.rejected');
    expect(rejected?.details).toMatchObject({ rejectedBy: 'operator', reason: 'recipient not verified' });
    expect(rejected?.cause).toBe('admin');
  });

  it('above the dual threshold two distinct admin keys must approve: the same key twice is 409, the second key sends', async () => {
    const id = newId();
    await create(id, '20000.00');
    const first = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin()).send({}).expect(200);
    expect(first.body.status).toBe('awaiting_approval');
    const twice = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin()).send({});
    expect(twice.status).toBe(409);
    expect(twice.body.type).toContain('same-approver');
    expect(twice.body.detail).toContain('two distinct admin keys');
    expect(creates(id)).toBe(0);
    const second = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin2()).send({}).expect(200);
    expect(second.body.status).not.toBe('awaiting_approval');
    expect(creates(id)).toBe(1);
    const approvals = await db.query(
      `SELECT a.key_id FROM payout_approvals a JOIN payouts p ON p.id = a.payout_id WHERE p.shop_payment_id = $1`,
      [id],
    );
    expect(new Set(approvals.rows.map((r: { key_id: string }) => r.key_id)).size).toBe(2);
  });

  it('10 concurrent approvals by the two keys send it exactly once', async () => {
    const id = newId();
    await create(id, '30000');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(i % 2 === 0 ? admin() : admin2()).send({}),
      ),
    );
    const codes = results.map((r) => r.status);
    expect(codes.filter((c) => c === 200)).toHaveLength(2);
    expect(codes.filter((c) => c === 409)).toHaveLength(8);
    expect(creates(id)).toBe(1);
    expect(await pollUntilFinal(id)).toBe('succeeded');
    expect(creates(id)).toBe(1);
    const approvedEvents = (await eventsOf(id)).filter((e) => e.type === 'payout.approved');
    expect(approvedEvents).toHaveLength(1);
  });

  it('the console Approvals page lists awaiting payouts; its Approve and Reject buttons work, with CSRF', async () => {
    const a = newId();
    const r = newId();
    await create(a, '6000');
    await create(r, '6100');
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    const page = await ctx.http.get('/admin/ui/approvals').set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain(a);
    expect(page.text).toContain(r);
    expect(hidden(page.text, '_csrf')).toBe(csrf);
    // Without the token: refused, nothing sent.
    await ctx.http
      .post(`/admin/ui/approvals/${a}/approve`)
      .set('Cookie', jar.header())
      .type('form')
      .send({})
      .expect(403);
    expect(creates(a)).toBe(0);
    await ctx.http
      .post(`/admin/ui/approvals/${a}/approve`)
      .set('Cookie', jar.header())
      .type('form')
      .send({ _csrf: csrf, note: 'ok by console' })
      .expect(303);
    expect(creates(a)).toBe(1);
    await ctx.http
      .post(`/admin/ui/approvals/${r}/reject`)
      .set('Cookie', jar.header())
      .type('form')
      .send({ _csrf: csrf, reason: 'duplicate request' })
      .expect(400);
    expect(await status(r)).toBe('awaiting_approval');
    await ctx.http
      .post(`/admin/ui/approvals/${r}/reject`)
      .set('Cookie', jar.header())
      .type('form')
      .send({ _csrf: csrf, reason: 'duplicate request', confirm: 'yes' })
      .expect(303);
    expect(await status(r)).toBe('rejected');
    expect(gatewayCalls(r)).toBe(0);
    const after = await ctx.http.get('/admin/ui/approvals').set('Cookie', jar.header()).expect(200);
    expect(after.text).not.toContain(`approval-${a}`);
    expect(after.text).not.toContain(`approval-${r}`);
    const sessionKey = (await db.query(`SELECT key_id FROM events WHERE entity_id = $1 AND type = 'payout.approved'`, [a])).rows[0] as { key_id: string };
    expect(sessionKey.key_id).toMatch(/^[0-9a-f]{12}$/);
  });
});
