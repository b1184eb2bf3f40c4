import { Client } from 'pg';
import { Amount } from '../../src/common/money';
import {
  isOpenRefund,
  openRefundSql,
  REFUND_FINAL_STATUSES,
  REFUND_OPEN_SUBMIT_STATES,
  REFUND_STATUSES,
} from '../../src/domain/statuses';
import type { PayoutStatus } from '../../src/payouts/payout.entity';
import {
  CAP_SHARE_SQL,
  capDayLockKey,
  capDayOf,
  capDaySql,
  capShare,
  COUNTS_ON_TODAY_SQL,
  HOLDS_SHARE_SQL,
  holdsShare,
  IN_FLIGHT_SQL,
} from '../../src/payouts/payout.rules';
import { PAYOUT_STATUSES } from '../../src/payouts/payout.state';
import { createTestDatabase } from '../support/database';
import { OWED_DELIVERY_STATES } from '../../src/events/delivery-states';

/**
 * Each rule that a statement needs is defined once in TypeScript and reaches SQL from that
 * definition (a bound list or a fragment written from it). Here both forms answer the same on the
 * real PostgreSQL: the cap day, whether a payout holds a share and how much, and whether a refund
 * is open.
 */
let db: Client;
let database: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  // A migrated database: the statements read the service's clock, `clock_now()`.
  database = await createTestDatabase();
  db = new Client({ connectionString: database.url });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await database?.drop();
});

/** Runs `body` in a transaction (now() fixed for it), rolled back; gives it the transaction's now. */
async function atOneInstant(body: (now: Date) => Promise<void>): Promise<void> {
  await db.query('BEGIN');
  try {
    const ms = (await db.query(`SELECT floor(extract(epoch from now()) * 1000)::text AS ms`))
      .rows[0] as { ms: string };
    await body(new Date(Number(ms.ms)));
  } finally {
    await db.query('ROLLBACK');
  }
}

describe('the cap day', () => {
  it('capDaySql gives capDayOf’s day, on both sides of a UTC midnight', async () => {
    for (const at of [
      '2026-03-14T23:59:59.999Z',
      '2026-03-15T00:00:00.000Z',
      '2026-03-15T00:00:00.001Z',
      '2024-02-29T12:00:00.000Z',
      '2026-12-31T23:59:59.999Z',
    ]) {
      // A session zone far from UTC: the day is UTC's whatever the connection's zone.
      await db.query(`SET TIME ZONE 'Pacific/Kiritimati'`);
      const row = (await db.query(`SELECT ${capDaySql('$1::timestamptz')} AS day`, [at]))
        .rows[0] as { day: string };
      expect({ at, day: row.day }).toEqual({ at, day: capDayOf(new Date(at)) });
    }
    await db.query('RESET TIME ZONE');
  });

  it('a payout counts today from the first instant of today’s cap day, and the lock key names that day', async () => {
    await atOneInstant(async (now) => {
      const today = capDayOf(now);
      const start = new Date(`${today}T00:00:00.000Z`);
      const key = (await db.query(`SELECT ${capDayLockKey(false)} AS k`, [7, 643])).rows[0] as {
        k: string;
      };
      expect(key.k).toBe(`payout-controls:7:643:${today}`);
      const recipientKey = (await db.query(`SELECT ${capDayLockKey(true)} AS k`, [7, 643, 'ix']))
        .rows[0] as { k: string };
      expect(recipientKey.k).toBe(`payout-recipient:7:643:${today}:ix`);
      for (const sentAt of [new Date(start.getTime() - 1), start, now, null])
        for (const status of PAYOUT_STATUSES) {
          const row = (
            await db.query(
              `SELECT COALESCE(${COUNTS_ON_TODAY_SQL}, false) AS counts
                 FROM (SELECT $1::timestamptz AS sent_at, $2::text AS status) payouts`,
              [sentAt, status],
            )
          ).rows[0] as { counts: boolean };
          const expected = sentAt !== null && capDayOf(sentAt) === today && holdsShare(status);
          expect({ sentAt, status, counts: row.counts }).toEqual({
            sentAt,
            status,
            counts: expected,
          });
        }
    });
  });
});

describe('whether a payout holds a share, and how much', () => {
  it('HOLDS_SHARE_SQL answers as holdsShare for every status, and the in-flight sum reads it', async () => {
    const answers: Record<string, boolean> = {};
    for (const status of PAYOUT_STATUSES) {
      const row = (
        await db.query(`SELECT ${HOLDS_SHARE_SQL} AS holds FROM (SELECT $1::text AS status) p`, [
          status,
        ])
      ).rows[0] as { holds: boolean };
      expect({ status, holds: row.holds }).toEqual({ status, holds: holdsShare(status) });
      answers[status] = row.holds;
    }
    // A cancelled payout gave its share back, as a rejected or failed one; one awaiting
    // approval never held one.
    for (const s of ['cancelled', 'rejected', 'failed', 'awaiting_approval'] as PayoutStatus[])
      expect(answers[s]).toBe(false);
    for (const s of [
      'pending',
      'processing',
      'unknown',
      'needs_attention',
      'succeeded',
    ] as PayoutStatus[])
      expect(answers[s]).toBe(true);
    expect(IN_FLIGHT_SQL).toContain(HOLDS_SHARE_SQL);
    expect(COUNTS_ON_TODAY_SQL).toContain(HOLDS_SHARE_SQL);
  });

  it('CAP_SHARE_SQL answers as capShare', async () => {
    const rows: Array<{
      amount: string;
      amountType: 'ps_amount' | 'shop_amount';
      writeOff: string | null;
    }> = [
      { amount: '100.00', amountType: 'ps_amount', writeOff: null },
      { amount: '100.00', amountType: 'ps_amount', writeOff: '103.45' },
      { amount: '100.00', amountType: 'shop_amount', writeOff: '97.10' },
      { amount: '0.01', amountType: 'shop_amount', writeOff: null },
    ];
    for (const r of rows) {
      const got = (
        await db.query(
          `SELECT (${CAP_SHARE_SQL})::text AS share
             FROM (SELECT $1::numeric AS amount, $2::text AS amount_type, $3::numeric AS shop_write_off) p`,
          [r.amount, r.amountType, r.writeOff],
        )
      ).rows[0] as { share: string };
      const ts = capShare({
        amount: Amount.fromText(r.amount),
        amountType: r.amountType,
        shopWriteOff: r.writeOff === null ? null : Amount.fromText(r.writeOff),
      });
      expect(Amount.fromText(got.share).eq(ts)).toBe(true);
    }
  });
});

describe('whether a refund is open', () => {
  it('openRefundSql answers as isOpenRefund for every status and submit state', async () => {
    for (const status of REFUND_STATUSES)
      for (const submitState of ['pending', 'accepted', 'unknown', 'rejected']) {
        const row = (
          await db.query(
            `SELECT ${openRefundSql('$3', '$4')} AS open
               FROM (SELECT $1::text AS status, $2::text AS submit_state) r`,
            [status, submitState, REFUND_FINAL_STATUSES, REFUND_OPEN_SUBMIT_STATES],
          )
        ).rows[0] as { open: boolean };
        expect({ status, submitState, open: row.open }).toEqual({
          status,
          submitState,
          open: isOpenRefund({ status, submitState }),
        });
      }
    expect(isOpenRefund({ status: 'WAITING', submitState: 'accepted' })).toBe(true);
    expect(isOpenRefund({ status: 'SUCCESS', submitState: 'unknown' })).toBe(true);
    expect(isOpenRefund({ status: 'FAILED', submitState: 'rejected' })).toBe(false);
  });

  it('the owed delivery states are the ones the partial indexes over owed deliveries hold', async () => {
    // The statements write OWED_DELIVERIES_SQL into their predicates so that these indexes match.
    const { rows } = await db.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes
        WHERE tablename = 'webhook_deliveries' AND indexname IN ('ix_webhook_deliveries_due', 'ix_webhook_deliveries_object')`,
    );
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      const where = r.indexdef.slice(r.indexdef.indexOf('WHERE'));
      const states = [...where.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]).sort();
      expect([r.indexname, states]).toEqual([r.indexname, [...OWED_DELIVERY_STATES].sort()]);
    }
  });
});
