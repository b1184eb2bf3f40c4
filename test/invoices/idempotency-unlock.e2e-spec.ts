import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ADMIN_KEY, admin, auth, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';
import { hidden, signIn } from '../console/console-session';

/**
 * An id locked by conflicting repeats is an operator's to lift (docs/api.md, Idempotency):
 * resolving its flag, by the API (`{action: "unlock", note}`) or the console, lifts the lock,
 * audited; the locked answer says how.
 */
describe('idempotency lock lifted by an operator', () => {
  let ctx: TestContext;
  let db: Client;

  beforeAll(async () => {
    ctx = await startTestApp({ env: { IDEMPOTENCY_CONFLICT_LIMIT: '3' } });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  const body = (shopOrderId: string, amount = '100.00'): Record<string, unknown> => ({
    shopOrderId,
    amount,
    currency: 643,
    payway: PAYMENT.cardSuccess,
  });

  /** An invoice whose create was repeated with other bodies until its id locked. */
  async function lockedInvoice(): Promise<string> {
    const id = `lock-${randomUUID()}`;
    await ctx.http.post('/api/v1/invoices').set(auth()).send(body(id)).expect(201);
    for (const amount of ['101.00', '102.00', '103.00'])
      await ctx.http.post('/api/v1/invoices').set(auth()).send(body(id, amount)).expect(409);
    const locked = await ctx.http.post('/api/v1/invoices').set(auth()).send(body(id)).expect(409);
    expect(locked.body.type).toMatch(/idempotency-locked$/);
    // The answer says how the lock is lifted.
    expect(locked.body.detail).toContain(`POST /api/v1/admin/invoices/${id}/resolve`);
    expect(locked.body.detail).toContain('"action": "unlock"');
    return id;
  }

  it('unlock by the API: the same body replays again, the flag is resolved, the audit names the note', async () => {
    const id = await lockedInvoice();
    const flagged = await ctx.http.get('/api/v1/admin/attention').set(admin()).expect(200);
    expect(flagged.body.items).toContainEqual(
      expect.objectContaining({ objectType: 'invoice', id, currency: 643, amount: '100.00' }),
    );
    // A note is required.
    await ctx.http
      .post(`/api/v1/admin/invoices/${id}/resolve`)
      .set(admin())
      .send({ action: 'unlock' })
      .expect(400);
    const lifted = await ctx.http
      .post(`/api/v1/admin/invoices/${id}/resolve`)
      .set(admin())
      .send({ action: 'unlock', note: 'the order system was fixed, ticket 17' })
      .expect(200);
    expect(lifted.body).toMatchObject({ shopOrderId: id, needsAttention: false });
    const again = await ctx.http.post('/api/v1/invoices').set(auth()).send(body(id));
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const queue = await ctx.http.get('/api/v1/admin/attention').set(admin()).expect(200);
    expect((queue.body.items as Array<{ id: string }>).map((i) => i.id)).not.toContain(id);
    const audit = await db.query(
      `SELECT details FROM events WHERE entity_id = $1 AND details->>'idempotency' = 'unlocked'`,
      [id],
    );
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0].details).toMatchObject({ note: 'the order system was fixed, ticket 17', conflicts: 3 });
    // Nothing left to lift.
    const twice = await ctx.http
      .post(`/api/v1/admin/invoices/${id}/resolve`)
      .set(admin())
      .send({ action: 'unlock', note: 'again' })
      .expect(409);
    expect(twice.body.type).toMatch(/not-locked$/);
  });

  it('unlock from the console: the attention queue offers it, and the lock goes', async () => {
    const id = await lockedInvoice();
    const { jar } = await signIn(ctx, ADMIN_KEY);
    const queue = await ctx.http.get('/admin/ui/attention').set('Cookie', jar.header()).expect(200);
    expect(queue.text).toContain(`id="unlock-note-invoice-${id}"`);
    const page = await ctx.http.get(`/admin/ui/invoices/${id}`).set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain('id="unlock"');
    const done = await ctx.http
      .post(`/admin/ui/invoices/${id}/resolve`)
      .set('Cookie', jar.header())
      .type('form')
      .send({ _csrf: hidden(queue.text, '_csrf'), action: 'unlock', note: 'checked with the shop' })
      .expect(303);
    expect(done.headers.location).toMatch(/^\/admin\/ui\/attention/);
    const again = await ctx.http.post('/api/v1/invoices').set(auth()).send(body(id));
    expect(again.status).toBe(201);
    const rows = await db.query(`SELECT idempotency_conflicts, needs_attention FROM invoices WHERE shop_order_id = $1`, [
      id,
    ]);
    expect(rows.rows[0]).toEqual({ idempotency_conflicts: 0, needs_attention: false });
  });
});
