import { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../../src/audit/audit.service';
import { registerSnapshotContext } from '../../src/audit/shop-events';
import { dataSourceOptions } from '../../src/database/data-source';
import '../../src/payouts/payout-processor';
import { auth, startTestApp, TestContext } from '../support/app';
import { insertPayoutRow } from '../support/payout-rows';

/**
 * The feed misses nothing although sequence values are taken at insert and transactions commit
 * in another order: 16 writers whose transactions sleep a random time before committing, and a
 * reader following nextCursor in small pages while they write, end with every event exactly once.
 */
const WRITERS = 16;
const PER_WRITER = 25;

let ctx: TestContext;
let ds: DataSource;
const audit = new AuditService();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface FeedEvent {
  id: string;
  objectId: string;
  sequence: number;
}

beforeAll(async () => {
  ctx = await startTestApp();
  // The writers' own pool, as another instance would have.
  ds = new DataSource({ ...dataSourceOptions(ctx.databaseUrl), extra: { max: WRITERS + 4 } });
  await ds.initialize();
  registerSnapshotContext(ds, { publicBaseUrl: 'http://test' });
}, 120000);

afterAll(async () => {
  await ds?.destroy();
  await ctx?.close();
});

async function seedPayout(): Promise<string> {
  const { shopPaymentId } = await insertPayoutRow((sql, params) => ds.query(sql, params));
  return shopPaymentId;
}

/** One status change of a payout with its event, under the row lock; returns the event id. */
async function change(m: EntityManager, shopPaymentId: string): Promise<string> {
  const [row] = (await m.query(
    `SELECT id, status FROM payouts WHERE shop_payment_id = $1 FOR UPDATE`,
    [shopPaymentId],
  )) as Array<{ id: string; status: string }>;
  const to = row.status === 'processing' ? 'unknown' : 'processing';
  await m.query(`UPDATE payouts SET status = $2 WHERE id = $1`, [row.id, to]);
  await audit.record(m, {
    entityType: 'payout',
    entityId: shopPaymentId,
    rowId: row.id,
    fromStatus: row.status,
    toStatus: to,
    cause: 'reconciliation',
  });
  const [ev] = (await m.query(`SELECT max(id)::text AS id FROM events WHERE entity_id = $1`, [
    shopPaymentId,
  ])) as Array<{
    id: string;
  }>;
  return ev.id;
}

async function page(
  after: string | null,
  limit: number,
): Promise<{ items: FeedEvent[]; nextCursor: string }> {
  const res = await ctx.http
    .get(`/api/v1/events?limit=${limit}${after ? `&after=${after}` : ''}`)
    .set(auth());
  expect(res.status).toBe(200);
  return res.body as { items: FeedEvent[]; nextCursor: string };
}

it('16 writers committing out of order, a reader following nextCursor: every event exactly once', async () => {
  const objects = await Promise.all(Array.from({ length: WRITERS }, () => seedPayout()));
  const commitOrder: string[] = [];
  let writing = true;
  const writers = objects.map(async (objectId) => {
    for (let i = 0; i < PER_WRITER; i++) {
      const id = await ds.transaction(async (m) => {
        const eventId = await change(m, objectId);
        await sleep(Math.random() * 60);
        return eventId;
      });
      commitOrder.push(id);
    }
  });
  const seen: FeedEvent[] = [];
  const reader = (async () => {
    let after: string | null = null;
    const until = Date.now() + 90000;
    while (Date.now() < until) {
      const p = await page(after, 7);
      seen.push(...p.items);
      after = p.nextCursor;
      if (!writing && p.items.length === 0 && seen.length >= WRITERS * PER_WRITER) return;
      if (p.items.length === 0) await sleep(10);
    }
  })();
  await Promise.all(writers);
  writing = false;
  await reader;

  // The hazard was real: some event with a higher id committed before one with a lower id.
  const outOfOrder = commitOrder.some((id, i) => i > 0 && BigInt(id) < BigInt(commitOrder[i - 1]));
  expect(outOfOrder).toBe(true);

  const mine = seen.filter((e) => objects.includes(e.objectId));
  // The feed names events by their public ids; the writers saw the row ids.
  const rowIdOf = new Map(
    (
      (await ds.query(`SELECT id::text AS id, public_id FROM events WHERE public_id = ANY($1)`, [
        mine.map((e) => e.id),
      ])) as Array<{ id: string; public_id: string }>
    ).map((r) => [r.public_id, r.id]),
  );
  const ids = mine.map((e) => rowIdOf.get(e.id));
  expect(new Set(ids).size).toBe(ids.length);
  expect(new Set(ids)).toEqual(new Set(commitOrder));
  expect(ids).toHaveLength(WRITERS * PER_WRITER);
  for (const objectId of objects)
    expect(mine.filter((e) => e.objectId === objectId).map((e) => e.sequence)).toEqual(
      Array.from({ length: PER_WRITER }, (_, i) => i + 1),
    );
}, 180000);

it("keeps an object's events in sequence order when the later one's transaction began first", async () => {
  const objectId = await seedPayout();
  const older = ds.createQueryRunner();
  const newer = ds.createQueryRunner();
  await older.connect();
  await newer.connect();
  try {
    await older.startTransaction();
    await older.query(`SELECT pg_current_xact_id()`);
    await newer.startTransaction();
    const first = await change(newer.manager, objectId);
    // The older transaction now waits for the row lock, then writes sequence 2.
    const second = change(older.manager, objectId);
    await sleep(200);
    await newer.commitTransaction();
    const secondId = await second;
    await older.commitTransaction();
    expect(BigInt(secondId)).toBeGreaterThan(BigInt(first));

    const feed: FeedEvent[] = [];
    let after: string | null = null;
    for (;;) {
      const p = await page(after, 500);
      if (p.items.length === 0) break;
      feed.push(...p.items);
      after = p.nextCursor;
    }
    expect(feed.filter((e) => e.objectId === objectId).map((e) => e.sequence)).toEqual([1, 2]);
  } finally {
    await older.release();
    await newer.release();
  }
}, 60000);
