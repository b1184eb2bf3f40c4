import 'reflect-metadata';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { runMigrations } from '../../src/database/migrate';
import { InitialSchema1795270554236 } from '../../src/database/migrations/1795270554236-InitialSchema';
import { createTestDatabase } from '../support/database';

/**
 * The two-shop migration on a database built and filled under the previous schema: the payway
 * cache is keyed by shop (old rows refetched), notifications get the shop they name, refunds are
 * pinned to their invoice's shop.
 */

let database: { url: string; drop(): Promise<void> };
let db: Client;

beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  const before = new DataSource({
    ...dataSourceOptions(database.url),
    migrations: [InitialSchema1795270554236],
  });
  await before.initialize();
  await runMigrations(before);
  await before.destroy();
  db = new Client({ connectionString: database.url });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await database?.drop();
});

it('backfills and normalises the rows written before it', async () => {
  const inv = await db.query(
    `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token)
     VALUES (1001, 'old-order', repeat('0', 64), 'succeeded', '100.00', 643, 'card_rub', 'tok') RETURNING id`,
  );
  const invoicePk = (inv.rows[0] as { id: string }).id;
  await db.query(
    `INSERT INTO refunds (shop_id, shop_refund_id, invoice_pk, shop_order_id, request_fingerprint, amount, currency, status, submit_state)
     VALUES (1001, 'same-shop', $1, 'old-order', repeat('0', 64), '10.00', 643, 'SUCCESS', 'accepted'),
            (77, 'other-shop', $1, 'old-order', repeat('0', 64), '5.00', 643, 'WAITING', 'pending')`,
    [invoicePk],
  );
  await db.query(
    `INSERT INTO payouts (shop_id, shop_payment_id, request_fingerprint, status, amount, amount_type, shop_currency,
       payway, account_masked, account_sealed, poll_deadline)
     VALUES (1001, 'old-payout', repeat('0', 64), 'succeeded', '100', 'ps_amount', 643, 'card_rub', '4111**', 'x', now())`,
  );
  await db.query(
    `INSERT INTO notifications (type, content_key, payload, content_type, verified, status)
     VALUES ('invoice', repeat('a', 64), '{"shop_id": "1001", "shop_order_id": "old-order"}', 'application/json', true, 'applied'),
            ('invoice', repeat('b', 64), '{"shop_id": "1001; drop"}', 'application/json', false, 'rejected'),
            ('refund', repeat('c', 64), '{"shop_refund_id": "x"}', 'application/json', false, 'rejected')`,
  );
  await db.query(
    `INSERT INTO payway_configs (direction, data, fetched_at) VALUES ('payment', '[]', now()), ('payout', '[]', now())`,
  );

  const after = new DataSource(dataSourceOptions(database.url));
  await after.initialize();
  try {
    expect(await runMigrations(after)).toContain('GatewayShopPerRow1795324912080');
  } finally {
    await after.destroy();
  }

  const refunds = await db.query(
    'SELECT shop_refund_id, shop_id FROM refunds ORDER BY shop_refund_id',
  );
  expect(refunds.rows).toEqual([
    { shop_refund_id: 'other-shop', shop_id: 1001 },
    { shop_refund_id: 'same-shop', shop_id: 1001 },
  ]);
  const payouts = await db.query('SELECT shop_id FROM payouts');
  expect(payouts.rows).toEqual([{ shop_id: 1001 }]);
  const notes = await db.query(
    'SELECT content_key, shop_id FROM notifications ORDER BY content_key',
  );
  expect(notes.rows.map((r: { shop_id: number | null }) => r.shop_id)).toEqual([1001, null, null]);
  // A cache fetched by whichever shop was configured: refetched under the right shop.
  expect((await db.query('SELECT * FROM payway_configs')).rows).toEqual([]);

  // From now on the database itself keeps a refund in its invoice's shop.
  await expect(
    db.query(
      `INSERT INTO refunds (shop_id, shop_refund_id, invoice_pk, shop_order_id, request_fingerprint, amount, currency, status, submit_state)
       VALUES (1002, 'wrong-shop', $1, 'old-order', repeat('0', 64), '1.00', 643, 'WAITING', 'pending')`,
      [invoicePk],
    ),
  ).rejects.toThrow(/fk_refunds_invoice_shop/);
  await db.query(
    `INSERT INTO payway_configs (shop_id, direction, data, fetched_at)
     VALUES (1001, 'payment', '[]', now()), (1002, 'payment', '[]', now())`,
  );
});
