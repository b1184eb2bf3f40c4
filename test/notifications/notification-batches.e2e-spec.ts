import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { auth, startTestApp, TestContext } from '../support/app';
import { paymentNotification } from '../support/notifications';
import { PAYMENT } from '../support/payways';

/**
 * The invoice notifications of one turn of the event loop share one transaction (one
 * statement stores them and locks their invoices, one records their outcomes, one commit).
 * Against the real database: each is applied once, with its own event carrying the committed
 * view; a batch that fails is applied again notification by notification, so one bad
 * notification never costs the others theirs; two copies of one notification never share it.
 */
type Json = Record<string, unknown>;

let ctx: TestContext;
let db: Client;

beforeAll(async () => {
  ctx = await startTestApp();
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  await ctx.http.get('/api/v1/payways?direction=payment').set(auth()).expect(200);
}, 120000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

/** Invoices awaiting their payer, created through the API: shop id and the gateway's id. */
async function awaiting(n: number): Promise<Array<{ shopOrderId: string; invoiceId: string }>> {
  const out: Array<{ shopOrderId: string; invoiceId: string }> = [];
  for (let i = 0; i < n; i++) {
    const shopOrderId = `nb-${randomUUID()}`;
    const res = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId,
        amount: '10.00',
        currency: 643,
        payway: PAYMENT.card,
        description: 'Tea',
      })
      .expect(201);
    out.push({ shopOrderId, invoiceId: String(res.body.invoiceId) });
  }
  return out;
}

/** The gateway's success notification for an invoice, signed. */
function success(inv: { shopOrderId: string; invoiceId: string }): Record<string, string> {
  return paymentNotification(inv.shopOrderId, {
    description: 'Tea',
    shop_amount: '10.00',
    payment_id: inv.invoiceId,
    client_price: '10.40',
    ps_data: '{}',
  });
}

/** Over fetch's keep-alive pool: requests on open connections reach the service in one turn. */
async function deliver(body: Record<string, string>): Promise<number> {
  const res = await fetch(`${ctx.url}/webhooks/gateway?type=invoice`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

async function inbox(shopOrderId: string): Promise<Json[]> {
  const r = await db.query(
    `SELECT status, delivery_count, xmin::text AS tx FROM notifications WHERE shop_order_id = $1 AND verified`,
    [shopOrderId],
  );
  return r.rows as Json[];
}

async function expectSucceededOnce(shopOrderId: string): Promise<void> {
  const got = (await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth()).expect(200))
    .body as Json;
  expect(got.status).toBe('succeeded');
  const events = await db.query(
    `SELECT type, sequence, data FROM events WHERE entity_type = 'invoice' AND entity_id = $1 AND type IS NOT NULL ORDER BY sequence`,
    [shopOrderId],
  );
  expect(events.rows.map((e: Json) => [e.type, e.sequence])).toEqual([
    ['invoice.awaiting_payer', 1],
    ['invoice.succeeded', 2],
  ]);
  expect(events.rows[1].data).toEqual(got);
}

it('notifications of one turn: each applied once, its own event the committed view, one transaction', async () => {
  let shared = 0;
  for (let round = 0; round < 8 && shared === 0; round++) {
    const invs = await awaiting(12);
    const statuses = await Promise.all(invs.map((inv) => deliver(success(inv))));
    expect(statuses).toEqual(invs.map(() => 200));
    const received = new Set<string>();
    for (const inv of invs) {
      await expectSucceededOnce(inv.shopOrderId);
      const rows = await inbox(inv.shopOrderId);
      expect(rows).toEqual([{ status: 'applied', delivery_count: 1, tx: expect.any(String) }]);
      received.add(rows[0].tx as string);
    }
    // Rows stored and settled by one transaction share its xmin.
    if (received.size < invs.length) shared++;
  }
  expect(shared).toBeGreaterThan(0);
});

it('a batch that fails is applied one by one: the bad notification fails alone, the others apply once', async () => {
  // A trigger refuses to mark one invoice paid; a sequence (never rolled back) counts its tries.
  await db.query(`CREATE SEQUENCE IF NOT EXISTS nb_refusals`);
  await db.query(`CREATE OR REPLACE FUNCTION nb_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.shop_order_id LIKE 'nb-refuse-%' AND NEW.status = 'succeeded' THEN
        PERFORM nextval('nb_refusals');
        RAISE EXCEPTION 'refused by the test';
      END IF;
      RETURN NEW;
    END $$`);
  await db.query(
    `CREATE TRIGGER nb_refuse BEFORE UPDATE ON invoices FOR EACH ROW EXECUTE FUNCTION nb_refuse()`,
  );
  try {
    let retriedAlone = false;
    for (let round = 0; round < 8 && !retriedAlone; round++) {
      const good = await awaiting(4);
      const [bad] = await awaiting(1);
      await db.query(`UPDATE invoices SET shop_order_id = $2 WHERE shop_order_id = $1`, [
        bad.shopOrderId,
        `nb-refuse-${bad.shopOrderId}`,
      ]);
      bad.shopOrderId = `nb-refuse-${bad.shopOrderId}`;
      const tick = async () =>
        Number((await db.query(`SELECT nextval('nb_refusals') AS n`)).rows[0].n);
      const before = await tick();
      const all = [good[0], good[1], bad, good[2], good[3]];
      const statuses = await Promise.all(all.map((inv) => deliver(success(inv))));
      expect(statuses).toEqual([200, 200, 500, 200, 200]);
      for (const inv of good) {
        await expectSucceededOnce(inv.shopOrderId);
        expect(await inbox(inv.shopOrderId)).toEqual([
          { status: 'applied', delivery_count: 1, tx: expect.any(String) },
        ]);
      }
      // Nothing of the refused one was kept: the gateway's next delivery finds nothing applied.
      expect(await inbox(bad.shopOrderId)).toEqual([]);
      // Tried twice (in its batch, then alone) when the two ticks are three or more apart.
      if ((await tick()) - before >= 3) retriedAlone = true;
    }
    expect(retriedAlone).toBe(true);
  } finally {
    await db.query(`DROP TRIGGER IF EXISTS nb_refuse ON invoices`);
  }
});

it('two copies of one notification in one turn: applied once, the second counted as a redelivery', async () => {
  const [inv, other] = await awaiting(2);
  const body = success(inv);
  const statuses = await Promise.all([deliver(body), deliver(body), deliver(success(other))]);
  expect(statuses).toEqual([200, 200, 200]);
  await expectSucceededOnce(inv.shopOrderId);
  await expectSucceededOnce(other.shopOrderId);
  expect(await inbox(inv.shopOrderId)).toEqual([
    { status: 'applied', delivery_count: 2, tx: expect.any(String) },
  ]);
});
