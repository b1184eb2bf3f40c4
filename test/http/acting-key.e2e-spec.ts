import { createHash, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ADMIN_KEY, admin, startTestApp, TestContext } from '../support/app';
import { sandboxPost } from '../support/hostile';
import { PAYMENT } from '../support/payways';

/**
 * Who acts is passed explicitly from the route to the writes (src/common/actor.ts);
 * no ambient request context carries it. Against the running app: every write records the key
 * of the request that made it, also when writes of several keys share one statement (the
 * creates of one turn are claimed and answered in one statement each), and what the service
 * writes on its own (a gateway notification) records no key, also while keyed requests run.
 */
const KEYS = [
  'acting-key-one-0123456789',
  'acting-key-two-0123456789',
  'acting-key-three-012345678',
];
const keyIdOf = (k: string): string => createHash('sha256').update(k).digest('hex').slice(0, 12);
const bearer = (k: string) => ({ Authorization: `Bearer ${k}` });

let ctx: TestContext;
let db: Client;
const run = randomUUID().slice(0, 8);

beforeAll(async () => {
  ctx = await startTestApp({
    env: { API_KEYS: KEYS.map((k) => `${k}:payments+refunds`).join(',') },
  });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

const invoice = (shopOrderId: string, payway: string = PAYMENT.cardSuccess, amount = '10.00') => ({
  shopOrderId,
  amount,
  currency: 643,
  payway,
});

/** The distinct key ids of an object's events, and how many events it has. */
async function keysOf(
  type: string,
  id: string,
): Promise<{ keys: Array<string | null>; n: number }> {
  const r = await db.query<{ key_id: string | null }>(
    `SELECT key_id FROM events WHERE entity_type = $1 AND entity_id = $2 ORDER BY id`,
    [type, id],
  );
  return { keys: [...new Set(r.rows.map((x) => x.key_id))], n: r.rows.length };
}

it("creates of three keys in the same turns: each invoice's events carry its own key", async () => {
  const ids = Array.from({ length: 30 }, (_, i) => `act-${run}-${i}`);
  const answers = await Promise.all(
    ids.map((id, i) =>
      ctx.http
        .post('/api/v1/invoices')
        .set(bearer(KEYS[i % 3]))
        .send(invoice(id)),
    ),
  );
  expect(answers.map((a) => a.status)).toEqual(ids.map(() => 201));
  for (const [i, id] of ids.entries()) {
    const { keys, n } = await keysOf('invoice', id);
    expect(n).toBeGreaterThan(0);
    expect(keys).toEqual([keyIdOf(KEYS[i % 3])]);
  }
});

it('a repeat with another body by another key: the conflict is recorded under the repeating key', async () => {
  const id = `act-${run}-conflict`;
  await ctx.http.post('/api/v1/invoices').set(bearer(KEYS[0])).send(invoice(id)).expect(201);
  // Two other keys repeat it with other amounts at once, while the first key repeats it as sent.
  const [b, c, a] = await Promise.all([
    ctx.http
      .post('/api/v1/invoices')
      .set(bearer(KEYS[1]))
      .send(invoice(id, PAYMENT.cardSuccess, '11.00')),
    ctx.http
      .post('/api/v1/invoices')
      .set(bearer(KEYS[2]))
      .send(invoice(id, PAYMENT.cardSuccess, '12.00')),
    ctx.http.post('/api/v1/invoices').set(bearer(KEYS[0])).send(invoice(id)),
  ]);
  expect([b.status, c.status, a.status]).toEqual([409, 409, 201]);
  const conflicts = await db.query<{ key_id: string }>(
    `SELECT key_id FROM events WHERE entity_id = $1 AND details->>'idempotency' = 'conflict' ORDER BY key_id`,
    [id],
  );
  expect(conflicts.rows.map((r) => r.key_id)).toEqual([keyIdOf(KEYS[1]), keyIdOf(KEYS[2])].sort());
});

it("refunds of two keys at once on one invoice: each refund's events carry its key", async () => {
  const id = `act-${run}-refunded`;
  await ctx.http.post('/api/v1/invoices').set(bearer(KEYS[0])).send(invoice(id)).expect(201);
  // Paid at once at the gateway, which does not notify it: the creating key asks.
  const paid = await ctx.http.get(`/api/v1/invoices/${id}?refresh=true`).set(bearer(KEYS[0]));
  expect(paid.body.status).toBe('succeeded');
  const refunds = [`act-${run}-r1`, `act-${run}-r2`, `act-${run}-r3`];
  const answers = await Promise.all(
    refunds.map((shopRefundId, i) =>
      ctx.http
        .post(`/api/v1/invoices/${id}/refunds`)
        .set(bearer(KEYS[i % 2 === 0 ? 1 : 2]))
        .send({ shopRefundId, amount: '1.00' }),
    ),
  );
  expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
  for (const [i, r] of refunds.entries()) {
    const events = await db.query<{ cause: string; key_id: string | null }>(
      `SELECT cause, key_id FROM events WHERE entity_type = 'refund' AND entity_id = $1 ORDER BY id`,
      [r],
    );
    expect(events.rows[0]).toEqual({ cause: 'api', key_id: keyIdOf(KEYS[i % 2 === 0 ? 1 : 2]) });
    // Its gateway notification may already have come: the service's own write, no key.
    for (const e of events.rows)
      expect(e.key_id).toBe(e.cause === 'notification' ? null : keyIdOf(KEYS[i % 2 === 0 ? 1 : 2]));
  }
});

it("the service's own write (a gateway notification) records no key while keyed requests run", async () => {
  const id = `act-${run}-notified`;
  const created = await ctx.http
    .post('/api/v1/invoices')
    .set(bearer(KEYS[0]))
    .send(invoice(id, PAYMENT.card))
    .expect(201);
  // Keyed creates keep running while the payer pays and the notification is applied.
  let busy = true;
  const noise = (async () => {
    for (let n = 0; busy; n++)
      await ctx.http
        .post('/api/v1/invoices')
        .set(bearer(KEYS[1]))
        .send(invoice(`act-${run}-noise-${n}`))
        .expect(201);
  })();
  await sandboxPost(ctx, `invoices/${String(created.body.invoiceId)}/pay`);
  let status = '';
  for (let i = 0; i < 100 && status !== 'succeeded'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = (
      await db.query<{ status: string }>(`SELECT status FROM invoices WHERE shop_order_id = $1`, [
        id,
      ])
    ).rows[0].status;
  }
  busy = false;
  await noise;
  expect(status).toBe('succeeded');
  const events = await db.query<{ to_status: string; cause: string; key_id: string | null }>(
    `SELECT to_status, cause, key_id FROM events WHERE entity_id = $1 ORDER BY id`,
    [id],
  );
  const paid = events.rows.find((e) => e.to_status === 'succeeded');
  expect(paid).toMatchObject({ cause: 'notification', key_id: null });
  expect(events.rows[0].key_id).toBe(keyIdOf(KEYS[0]));
});

it("an admin's refresh is recorded under the admin key, not the creating key", async () => {
  const id = `act-${run}-refreshed`;
  const created = await ctx.http
    .post('/api/v1/invoices')
    .set(bearer(KEYS[2]))
    .send(invoice(id, PAYMENT.card))
    .expect(201);
  // Paid at the gateway with no notification: the service hears of it only by asking.
  await sandboxPost(ctx, 'settings', { suppressNotifications: true });
  try {
    await sandboxPost(ctx, `invoices/${String(created.body.invoiceId)}/pay`);
    const shown = await ctx.http
      .get(`/api/v1/invoices/${id}?refresh=true`)
      .set(admin())
      .expect(200);
    expect(shown.body.status).toBe('succeeded');
  } finally {
    await sandboxPost(ctx, 'settings', { suppressNotifications: false });
  }
  const events = await db.query<{ to_status: string; cause: string; key_id: string | null }>(
    `SELECT to_status, cause, key_id FROM events WHERE entity_id = $1 ORDER BY id`,
    [id],
  );
  expect(events.rows[0].key_id).toBe(keyIdOf(KEYS[2]));
  expect(events.rows.find((e) => e.to_status === 'succeeded')).toMatchObject({
    cause: 'reconciliation',
    key_id: keyIdOf(ADMIN_KEY),
  });
});
