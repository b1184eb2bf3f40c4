import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { DataSource } from 'typeorm';
import { entityFromRow } from '../../src/common/sql';
import { InvoiceEntity } from '../../src/invoices/invoice.entity';
import { VIEWS_BY_SHOP_ORDER_IDS } from '../../src/invoices/invoice-sql';
import { INVOICE_VIEW_FIELDS } from '../../src/invoices/invoice.view';
import { InvoicesService } from '../../src/invoices/invoices.service';
import { admin, auth, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';

/**
 * GET /invoices/{id} reads only the columns its view needs. The statement's list and
 * the view's fields are two lists that must not drift apart: a column the view reads but the
 * statement leaves out would show as a missing field, one the statement reads for nothing is
 * work for nothing.
 */
let ctx: TestContext;

beforeAll(async () => {
  ctx = await startTestApp();
}, 120000);

afterAll(async () => {
  await ctx?.close();
});

it("the view read selects exactly the view's fields", () => {
  const meta = ctx.service.app.get(DataSource).getMetadata(InvoiceEntity);
  const wanted = INVOICE_VIEW_FIELDS.map((p) => {
    const column = meta.columns.find((c) => c.propertyName === p);
    if (!column) throw new Error(`no column for ${p}`);
    return column.databaseName;
  }).sort();
  const selected = /SELECT([\s\S]*?)FROM/
    .exec(VIEWS_BY_SHOP_ORDER_IDS.text)![1]
    .split(',')
    .map((c) => c.trim())
    .sort();
  expect(selected).toEqual(wanted);
});

/** Creates an invoice through the API and reads its whole row back by plain SQL. */
async function createdRow(
  shopOrderId: string,
  amount: string,
  metadata: Record<string, string>,
): Promise<{ ds: DataSource; row: Record<string, unknown> }> {
  await ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({ shopOrderId, amount, currency: 643, payway: PAYMENT.card, metadata })
    .expect(201);
  const ds = ctx.service.app.get(DataSource);
  const [row] = (await ds.query('SELECT * FROM invoices WHERE shop_order_id = $1', [
    shopOrderId,
  ])) as Array<Record<string, unknown>>;
  return { ds, row };
}

it('answers the same view as one built from the whole row, for a shop key and an admin key', async () => {
  const shopOrderId = `view-${randomUUID()}`;
  const { ds, row } = await createdRow(shopOrderId, '150.50', { ref: 'a-1' });
  const whole = entityFromRow(ds, InvoiceEntity, row);
  const invoices = ctx.service.app.get(InvoicesService);
  for (const [headers, isAdmin] of [
    [auth(), false],
    [admin(), true],
  ] as const) {
    const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(headers).expect(200);
    expect(got.body).toEqual(JSON.parse(JSON.stringify(invoices.view(whole, isAdmin))));
    expect(got.body).toMatchObject({
      shopOrderId,
      amount: '150.50',
      metadata: { ref: 'a-1' },
      refundedAmount: '0.00',
    });
  }
});

it("a row read by plain SQL becomes the entity TypeORM's own read makes, with V8's fast properties", async () => {
  const shopOrderId = `mapped-${randomUUID()}`;
  const { ds, row } = await createdRow(shopOrderId, '12.34', { k: 'v' });
  const mapped = entityFromRow(ds, InvoiceEntity, row);
  const byTypeorm = await ds.getRepository(InvoiceEntity).findOneByOrFail({ shopOrderId });
  expect(mapped).toBeInstanceOf(InvoiceEntity);
  expect(mapped).toEqual(byTypeorm);
  expect(mapped.amount.toString()).toBe('12.34');
  expect(mapped.createdAt).toBeInstanceOf(Date);
  // A column the row does not carry stays undefined.
  expect(entityFromRow(ds, InvoiceEntity, { id: row.id }).shopOrderId).toBeUndefined();
  // Fast properties, not a dictionary: reads, copies and spreads of a row stay cheap.
  setFlagsFromString('--allow-natives-syntax');
  const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (
    o: object,
  ) => boolean;
  setFlagsFromString('--no-allow-natives-syntax');
  expect(hasFastProperties(mapped)).toBe(true);
  // The check itself tells the two apart: the same fields set by name on a bare object are not.
  const bare = Object.create(InvoiceEntity.prototype) as Record<string, unknown>;
  for (const [k, v] of Object.entries(mapped)) bare[k] = v;
  expect(hasFastProperties(bare)).toBe(false);
});

it('reads asked at the same moment each answer their own invoice, or 404 (BatchedRead)', async () => {
  // Some ids carry what a PostgreSQL array literal gives a meaning to (the batch sends the ids as
  // one text[] parameter): a comma, quotes, braces, a backslash, spaces, the word NULL.
  const tricky = ['a,b', 'say "hi"', '{x}', 'back\\slash', ' padded ', 'NULL', 'null', 'ünï'];
  const ids = Array.from(
    { length: 12 },
    (_, i) => `batch-${i}-${randomUUID()}${i < tricky.length ? tricky[i] : ''}`,
  );
  ids.push('NULL', `{${randomUUID()}}`);
  await Promise.all(
    ids.map((shopOrderId, i) =>
      ctx.http
        .post('/api/v1/invoices')
        .set(auth())
        .send({ shopOrderId, amount: `${10 + i}.25`, currency: 643, payway: PAYMENT.card })
        .expect(201),
    ),
  );
  // Known ids (some twice), ids that differ only in case or by a trailing space, and unknown ids.
  const asked = [
    ...ids,
    ...ids.slice(0, 4),
    ids[0].toUpperCase(),
    `${ids[1]} `,
    `missing-${randomUUID()}`,
  ];
  const answers = await Promise.all(
    asked.map((id) => ctx.http.get(`/api/v1/invoices/${encodeURIComponent(id)}`).set(auth())),
  );
  answers.forEach((res, n) => {
    const id = asked[n];
    const i = ids.indexOf(id);
    if (i < 0) {
      expect({ id, status: res.status }).toEqual({ id, status: 404 });
      return;
    }
    expect({
      id,
      status: res.status,
      shopOrderId: res.body.shopOrderId,
      amount: res.body.amount,
    }).toEqual({
      id,
      status: 200,
      shopOrderId: id,
      amount: `${10 + i}.25`,
    });
  });
});

it("every column of every entity is hydrated as the driver's prepareHydratedValue makes it", () => {
  const ds = ctx.service.app.get(DataSource);
  const raws: unknown[] = [
    null,
    '',
    'text',
    '12.34',
    '-0.01',
    '2026-12-02T10:00:00.000Z',
    0,
    42,
    true,
    false,
    new Date('2026-12-02T10:00:00Z'),
    { a: 1 },
    ['x'],
  ];
  // An invalid Date is not equal to itself: compare dates by their text.
  const norm = (v: unknown): unknown =>
    v instanceof Date ? `Date(${Number.isNaN(v.getTime()) ? 'invalid' : v.toISOString()})` : v;
  let columns = 0;
  for (const meta of ds.entityMetadatas) {
    for (const c of meta.columns) {
      columns++;
      for (const raw of raws) {
        let expected: unknown;
        try {
          expected = norm(ds.driver.prepareHydratedValue(raw, c));
        } catch (e) {
          expected = e;
        }
        let actual: unknown;
        try {
          const entity = entityFromRow(ds, meta.target, { [c.databaseName]: raw });
          actual = norm((entity as Record<string, unknown>)[c.propertyName]);
        } catch (e) {
          actual = e;
        }
        expect({ column: `${meta.tableName}.${c.databaseName}`, raw, value: actual }).toEqual({
          column: `${meta.tableName}.${c.databaseName}`,
          raw,
          value: expected,
        });
      }
    }
  }
  expect(columns).toBeGreaterThan(100);
});
