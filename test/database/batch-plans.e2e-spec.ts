import type { DataSource } from 'typeorm';
import { batchStatementFor, type RowChangeWithEvent } from '../../src/audit/event-write';
import { InvoiceEntity } from '../../src/invoices/invoice.entity';
import {
  RECORD_OUTCOMES,
  UPSERT_MANY_LOCKING_INVOICES,
} from '../../src/notifications/notification-sql';
import { openMigratedDataSource } from '../support/data-source';
import { planOf, scansOf } from '../support/plans';

/**
 * Batches of status changes find their rows by index at any size of the table, and are planned
 * at each execution. Under the create benchmark the answer batch, prepared by name, kept a plan
 * made while `invoices` held a few dozen rows: a sequential scan of the whole table for every
 * batch once it held thousands. Its JSON array reads as 100 rows to the planner, so even a plan
 * made on a table of a thousand analysed rows hashed a sequential scan; the batch's ids, bound as
 * an array the planner counts, make it an index scan.
 */
let ds: DataSource;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ ds, close } = await openMigratedDataSource());
  await ds.query(
    `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token,
       request_facts)
     SELECT 1001, 'plan-' || g, repeat('0', 64), 'pending', '10.00', 643, 'card_rub', md5(g::text),
            jsonb_build_object('description', repeat('x', 600))
       FROM generate_series(1, 1000) g`,
  );
  await ds.query('ANALYZE invoices');
}, 120000);

afterAll(async () => {
  await close?.();
});

function answerOf(row: { id: string; version: string; shop_order_id: string }): RowChangeWithEvent {
  return {
    table: 'invoices',
    target: InvoiceEntity,
    rowId: row.id,
    version: row.version,
    changes: {
      status: 'awaiting_payer',
      responseCode: 201,
      responseBody: { shopOrderId: row.shop_order_id, status: 'awaiting_payer' },
      updatedAt: new Date(),
    },
    returning: ['id'],
    event: {
      entityType: 'invoice',
      entityId: row.shop_order_id,
      fromStatus: 'pending',
      toStatus: 'awaiting_payer',
      cause: 'gateway',
      details: {},
      type: 'invoice.awaiting_payer',
      data: { shopOrderId: row.shop_order_id },
    },
  };
}

it('a batch of create answers reads its invoices by index, on a thousand analysed rows, and is planned at each execution', async () => {
  const rows = (await ds.query(
    `SELECT id, xmin::text AS version, shop_order_id FROM invoices ORDER BY shop_order_id LIMIT 3`,
  )) as Array<{ id: string; version: string; shop_order_id: string }>;
  const changes = rows.map(answerOf);
  const { statement, values } = batchStatementFor(ds, changes[0], changes);
  // Unnamed: pg sends it as the unnamed statement, which PostgreSQL plans for these values.
  expect(statement.name).toBeUndefined();
  // The UPDATE itself (ModifyTable) names the table too; the reads under it are what count.
  const reads = scansOf(await planOf(ds, statement.text, values), 'invoices').filter(
    (s) => s !== 'ModifyTable',
  );
  expect(reads.length).toBeGreaterThan(0);
  expect(reads.filter((s) => !/Index|Bitmap/.test(s))).toEqual([]);
});

it('the batch actually writes what it plans: each answered row with its event, nothing else', async () => {
  const rows = (await ds.query(
    `SELECT id, xmin::text AS version, shop_order_id FROM invoices ORDER BY shop_order_id DESC LIMIT 2`,
  )) as Array<{ id: string; version: string; shop_order_id: string }>;
  const changes = rows.map(answerOf);
  const { statement, values } = batchStatementFor(ds, changes[0], changes);
  const written = (await ds.query(statement.text, values)) as Array<{ row_id__: string }>;
  expect(written.map((r) => r.row_id__).sort()).toEqual(rows.map((r) => r.id).sort());
  const after = (await ds.query(
    `SELECT count(*)::int AS n FROM invoices WHERE status = 'awaiting_payer'`,
  )) as Array<{ n: number }>;
  expect(after[0].n).toBe(2);
  const events = (await ds.query(
    `SELECT entity_id FROM events WHERE entity_id = ANY($1) ORDER BY entity_id`,
    [rows.map((r) => r.shop_order_id)],
  )) as Array<{ entity_id: string }>;
  expect(events.map((e) => e.entity_id)).toEqual(rows.map((r) => r.shop_order_id).sort());
});

it("the inbox's outcome batch is planned at each execution; the notification upsert stays prepared", () => {
  // The outcome batch joins the inbox by id: prepared, it kept a plan made on an empty inbox (a
  // sequential scan of the whole inbox per batch under the notification benchmark). The upsert
  // finds each invoice by an equality on its unique index, and planning it each time cost more
  // than it saved there.
  expect(RECORD_OUTCOMES.name).toBeUndefined();
  expect(UPSERT_MANY_LOCKING_INVOICES.name).toBe('notification_upsert_many_locking_invoices');
});
