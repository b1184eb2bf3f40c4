import type { DataSource } from 'typeorm';
import { CHECK_AT_HOLD_EXPIRY_SQL, CLAIM_HOLD_WARNINGS_SQL } from '../../src/invoices/hold-expiry';
import { SCHEDULE_OPEN_INVOICES_SQL } from '../../src/invoices/invoice-reconciler';
import { claimSql } from '../../src/jobs/claim';
import { openMigratedDataSource } from '../support/data-source';
import { planOf, seqScans, type PlanNode } from '../support/plans';

/**
 * The reconcilers' claim queries use indexes. On 100,000 final invoices (and a few
 * open ones) none of the statements the jobs run every tick plans a sequential scan.
 */
let ds: DataSource;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ ds, close } = await openMigratedDataSource());
  await ds.query(
    `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token, processed_at)
     SELECT 1001, 'final-' || g, repeat('0', 64), CASE g % 3 WHEN 0 THEN 'succeeded' WHEN 1 THEN 'rejected' ELSE 'unheld' END,
            '10.00', 643, 'card_rub', md5(g::text), now()
       FROM generate_series(1, 100000) g`,
  );
  await ds.query(
    `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token, next_check_at)
     SELECT 1001, 'open-' || g, repeat('0', 64), 'awaiting_payer', '10.00', 643, 'card_rub', md5(g::text),
            CASE WHEN g % 2 = 0 THEN now() END
       FROM generate_series(1, 50) g`,
  );
  await ds.query('ANALYZE invoices');
}, 180000);

afterAll(async () => {
  await close?.();
});

const plan = (sql: string, params: unknown[]): Promise<PlanNode> => planOf(ds, sql, params);

it('scheduling and claiming due invoices never scan the whole table', async () => {
  const schedule = await plan(SCHEDULE_OPEN_INVOICES_SQL, [120, 172800, 604800]);
  expect(seqScans(schedule)).toEqual([]);
  const claim = await plan(
    claimSql({
      table: 'invoices',
      dueColumn: 'next_check_at',
      limit: 100,
      leaseSeconds: 120,
      shopId: 2001,
    }),
    [100, 120, 2001],
  );
  expect(seqScans(claim)).toEqual([]);
});

it('the hold-expiry job scans held invoices by their expiry, never the whole table', async () => {
  await ds.query(
    `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token, two_step, hold_expires_at)
     SELECT 1001, 'held-' || g, repeat('0', 64), 'held', '10.00', 643, 'card_rub', md5(g::text), true,
            now() + make_interval(hours => g)
       FROM generate_series(1, 20) g`,
  );
  await ds.query('ANALYZE invoices');
  expect(seqScans(await plan(CLAIM_HOLD_WARNINGS_SQL, [1001, 21600, 100]))).toEqual([]);
  expect(seqScans(await plan(CHECK_AT_HOLD_EXPIRY_SQL, [1001]))).toEqual([]);
});
