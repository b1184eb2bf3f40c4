import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { updateWithEvent } from '../../src/audit/event-write';
import { lockInvoice, transitionInvoice } from '../../src/invoices/invoice-transitions';
import { InvoiceEntity } from '../../src/invoices/invoice.entity';
import { JsonText } from '../../src/common/json-text';
import { storedAnswerOf } from '../../src/common/stored-answer';
import { toInvoiceView } from '../../src/invoices/invoice.view';
import { auth, SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';

/**
 * A status change writes its event with the view the change leaves; before commit
 * the event is brought up to the committed row unless no later statement of the transaction named
 * the object's table. Whatever runs after the event, the event carries what a GET returns.
 */
type Json = Record<string, unknown>;

let ctx: TestContext;
let ds: DataSource;
let db: Client;

beforeAll(async () => {
  ctx = await startTestApp();
  ds = ctx.service.app.get(DataSource);
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
}, 120000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

/** A new invoice awaiting the payer, created through the API; its shopOrderId. */
async function createdInvoice(): Promise<string> {
  const shopOrderId = `view-${randomUUID()}`;
  await ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({ shopOrderId, amount: '10.00', currency: 643, payway: PAYMENT.card, description: 'Tea' })
    .expect(201);
  return shopOrderId;
}

async function paidWith(after: (m: EntityManager, inv: InvoiceEntity) => Promise<unknown>) {
  const shopOrderId = await createdInvoice();
  await ds.transaction(async (m) => {
    const inv = await lockInvoice(m, { shopId: SHOP_ID, shopOrderId });
    expect(inv?.status).toBe('awaiting_payer');
    await transitionInvoice(m, inv!, 'succeeded', 'admin', { note: 'test' });
    await after(m, inv!);
  });
  const got = (await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth()).expect(200))
    .body as Json;
  const events = (
    await db.query(
      `SELECT data FROM events WHERE entity_type = 'invoice' AND entity_id = $1 AND type = 'invoice.succeeded'`,
      [shopOrderId],
    )
  ).rows as Array<{ data: Json }>;
  expect(events).toHaveLength(1);
  return { got, event: events[0].data };
}

it('a change that stores an answer made as text leaves the invoice holding the answer as a read gives it', async () => {
  const shopOrderId = await createdInvoice();
  await ds.transaction(async (m) => {
    const inv = (await lockInvoice(m, { shopId: SHOP_ID, shopOrderId }))!;
    // As a create's answer writes it: the view's text made once, the view the event's data.
    const view = { ...toInvoiceView({ ...inv, status: 'succeeded' }, 'http://test') } as Json;
    await transitionInvoice(
      m,
      inv,
      'succeeded',
      'admin',
      { note: 'test' },
      { responseCode: 201, responseBody: new JsonText(view) },
      view,
    );
    const held = storedAnswerOf<Json>(inv);
    expect(held?.body).not.toBeInstanceOf(JsonText);
    expect(held?.body).toBe(view);
  });
  const stored = (
    await db.query(`SELECT response_body FROM invoices WHERE shop_order_id = $1`, [shopOrderId])
  ).rows[0] as { response_body: Json };
  expect(stored.response_body.status).toBe('succeeded');
});

it('nothing after the event: the event is the committed view', async () => {
  const { got, event } = await paidWith(async () => undefined);
  expect(event).toEqual(got);
});

it('a statement on another table after the event: still the committed view', async () => {
  const { got, event } = await paidWith((m) =>
    m.query(`UPDATE notifications SET outcome = outcome WHERE false`),
  );
  expect(event).toEqual(got);
});

it('the row written again by TypeORM after the event: the event carries the later write', async () => {
  const { got, event } = await paidWith((m, inv) =>
    m.update(InvoiceEntity, { id: inv.id }, { description: 'written after the event' }),
  );
  expect(got.description).toBe('written after the event');
  expect(event).toEqual(got);
});

it('the row written again by a raw CTE after the event: the event carries the later write', async () => {
  const { got, event } = await paidWith((m, inv) =>
    m.query(
      `WITH x AS (UPDATE "invoices" SET description = 'raw write', updated_at = now() + interval '1 second' WHERE id = $1 RETURNING id) SELECT count(*) FROM x`,
      [inv.id],
    ),
  );
  expect(got.description).toBe('raw write');
  expect(event).toEqual(got);
});

it('an in-memory invoice that does not match its row: the event still ends as the committed view', async () => {
  // The view the event was built from disagrees with the row (a write the caller did not mirror).
  const shopOrderId = await createdInvoice();
  await ds.transaction(async (m) => {
    const inv = await lockInvoice(m, { shopId: SHOP_ID, shopOrderId });
    await m.query(`UPDATE invoices SET description = 'not mirrored' WHERE id = $1`, [inv!.id]);
    await transitionInvoice(m, inv!, 'succeeded', 'admin', {});
  });
  const after = (await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth()).expect(200))
    .body as Json;
  const [{ data }] = (
    await db.query(`SELECT data FROM events WHERE entity_id = $1 AND type = 'invoice.succeeded'`, [
      shopOrderId,
    ])
  ).rows as Array<{ data: Json }>;
  expect(after.description).toBe('not mirrored');
  expect(data).toEqual(after);
});

/** An audit-only change of one row, in the caller's transaction, as updateWithEvent writes it. */
function auditedChange(m: EntityManager, inv: InvoiceEntity, description: string) {
  return updateWithEvent(m, {
    table: 'invoices',
    target: InvoiceEntity,
    rowId: inv.id,
    changes: { description, updatedAt: new Date(Date.now() + 1000) },
    returning: ['description'],
    event: {
      entityType: 'invoice',
      entityId: inv.shopOrderId,
      fromStatus: 'succeeded',
      toStatus: 'succeeded',
      cause: 'admin',
      details: {},
      type: null,
      data: null,
    },
  });
}

it('the same row changed again by a one-row statement after the event: the event carries the later write', async () => {
  // A one-row statement (RowScope) on the event's own row still brings the event up to date.
  const { got, event } = await paidWith((m, inv) => auditedChange(m, inv, 'scoped write'));
  expect(got.description).toBe('scoped write');
  expect(event).toEqual(got);
});

it("another row's one-row statement after the event: each event is its own row's committed view", async () => {
  // The batch of notifications' shape: invoice A's event, then a change of invoice B.
  const other = await createdInvoice();
  const { got, event } = await paidWith(async (m) => {
    const b = await lockInvoice(m, { shopId: SHOP_ID, shopOrderId: other });
    await auditedChange(m, b!, 'the other row');
  });
  expect(event).toEqual(got);
  const b = (await ctx.http.get(`/api/v1/invoices/${other}`).set(auth()).expect(200)).body as Json;
  expect(b.description).toBe('the other row');
});
