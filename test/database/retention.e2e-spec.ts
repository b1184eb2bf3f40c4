import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { EventRetention } from '../../src/events/event-retention';
import { WebhookDispatcher } from '../../src/events/webhook-dispatcher';
import { NotificationRetention } from '../../src/notifications/notification-retention';
import { admin, auth, startTestApp, TestContext, unvalidatedHttp } from '../support/app';
import { PAYMENT } from '../support/payways';
import { eventually, WebhookReceiver } from '../support/webhook-receiver';

/**
 * Bounded tables, against real PostgreSQL: each retention prunes only what is older
 * than its limit; invoices, refunds, payouts and every audit entry stay; the feed answers 410
 * with the oldest cursor for a cursor older than its horizon; two instances prune side by side.
 * Ages are made by moving timestamps back in the database.
 */
const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;
const DAY = `interval '1 day'`;

let ctx: TestContext;
let db: Client;
const receiver = new WebhookReceiver();

beforeAll(async () => {
  await receiver.start();
  ctx = await startTestApp({
    env: {
      SHOP_WEBHOOK_URL: receiver.url,
      SHOP_WEBHOOK_SECRET: WHSEC,
      NOTIFY_UNVERIFIED_KEEP: '3',
    },
  });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
}, 120000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
  await receiver.close();
});

const eventRetention = (c = ctx): EventRetention => c.service.app.get(EventRetention);
const notificationRetention = (c = ctx): NotificationRetention =>
  c.service.app.get(NotificationRetention);

async function rows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.query(sql, params)).rows as T[];
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const [r] = await rows<{ n: string }>(sql, params);
  return Number(r.n);
}

/** Invoices made through the API and the sandbox, every event delivered to the receiver. */
async function paidInvoices(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const shopOrderId = `ret-${randomUUID()}`;
    const res = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId, amount: '10.00', currency: 643, payway: PAYMENT.cardSuccess });
    expect(res.status).toBe(201);
    await eventually(async () => {
      const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      expect(got.body.status).toBe('succeeded');
    });
    ids.push(shopOrderId);
  }
  const dispatcher = ctx.service.app.get(WebhookDispatcher);
  await eventually(async () => {
    await dispatcher.runOnce();
    expect(
      await count(`SELECT count(*) AS n FROM webhook_deliveries WHERE state <> 'delivered'`),
    ).toBe(0);
  });
  return ids;
}

/** Every audit column of every event: what retention must never change. */
const AUDIT_COLUMNS = `id, entity_type, entity_id, from_status, to_status, cause, details, key_id,
  type, sequence, position, created_at`;

async function financialSnapshot(): Promise<unknown[]> {
  return [
    await rows(`SELECT * FROM invoices ORDER BY id`),
    await rows(`SELECT * FROM refunds ORDER BY id`),
    await rows(`SELECT * FROM payouts ORDER BY id`),
    await rows(`SELECT ${AUDIT_COLUMNS} FROM events ORDER BY id`),
  ];
}

function cursorOf(position: string | number | bigint): string {
  return Buffer.from(`p${position}`).toString('base64url');
}

async function horizon(): Promise<string> {
  const [h] = await rows<{ position: string }>(`SELECT position::text FROM feed_horizon`);
  return h.position;
}

describe('webhook deliveries', () => {
  it('deletes delivered ones older than RETENTION_DELIVERIES_DAYS; younger, pending, failed and dead ones stay', async () => {
    await paidInvoices(3);
    const all = await rows<{ id: string }>(
      `SELECT d.id::text FROM webhook_deliveries d ORDER BY d.id`,
    );
    expect(all.length).toBeGreaterThanOrEqual(6);
    const [oldDelivered, edge, young, failed, pending, dead] = all.map((r) => r.id);
    await db.query(
      `UPDATE webhook_deliveries SET created_at = now() - 40 * ${DAY}, delivered_at = now() - 31 * ${DAY} WHERE id = $1`,
      [oldDelivered],
    );
    await db.query(
      `UPDATE webhook_deliveries SET created_at = now() - 40 * ${DAY}, delivered_at = now() - 29 * ${DAY} WHERE id = $1`,
      [edge],
    );
    // Old, but still work (or an operator's to redeliver): never pruned.
    for (const [id, state] of [
      [failed, 'failed'],
      [pending, 'pending'],
      [dead, 'dead'],
    ])
      await db.query(
        `UPDATE webhook_deliveries SET state = $2, delivered_at = NULL, created_at = now() - 400 * ${DAY},
                updated_at = now() - 400 * ${DAY}, next_attempt_at = now() + 400 * ${DAY} WHERE id = $1`,
        [id, state],
      );
    const before = await financialSnapshot();

    const pruned = await eventRetention().runOnce();

    expect(pruned.deliveries).toBe(1);
    const left = (await rows<{ id: string }>(`SELECT id::text FROM webhook_deliveries`)).map(
      (r) => r.id,
    );
    expect(left).not.toContain(oldDelivered);
    for (const id of [edge, young, failed, pending, dead]) expect(left).toContain(id);
    expect(await financialSnapshot()).toEqual(before);
    // The open ones go back to being delivered, so later tests start clean.
    await db.query(
      `UPDATE webhook_deliveries SET state = 'delivered', delivered_at = now(), next_attempt_at = now() WHERE id = ANY($1::bigint[])`,
      [[failed, pending, dead]],
    );
  });
});

describe('the feed', () => {
  it('prunes events older than RETENTION_EVENTS_DAYS from the feed only: 410 with the oldest cursor, every audit entry and financial row stays', async () => {
    await paidInvoices(2);
    const events = await rows<{ id: string; position: string }>(
      `SELECT e.id::text, e.position::text FROM events e WHERE e.position IS NOT NULL ORDER BY e.position`,
    );
    const feedBefore = await ctx.http.get('/api/v1/events?limit=500').set(auth());
    expect(feedBefore.body.items).toHaveLength(events.length);
    // The first two thirds of the feed are old (by position, as time runs).
    const cut = events[Math.floor((events.length * 2) / 3) - 1];
    await db.query(
      `UPDATE events SET created_at = now() - 91 * ${DAY} WHERE position <= $1 OR position IS NULL`,
      [cut.position],
    );
    await db.query(`UPDATE invoices SET created_at = now() - 400 * ${DAY}`);
    const before = await financialSnapshot();
    const adminBefore = await ctx.http.get('/api/v1/admin/events?limit=500').set(admin());

    const pruned = await eventRetention().runOnce();

    expect(pruned.events).toBe(events.indexOf(cut) + 1);
    expect(await horizon()).toBe(cut.position);
    expect(await financialSnapshot()).toEqual(before);
    // The audit view is unchanged, entry for entry (type and sequence included).
    const adminAfter = await ctx.http.get('/api/v1/admin/events?limit=500').set(admin());
    expect(adminAfter.body).toEqual(adminBefore.body);
    expect(
      await count(`SELECT count(*) AS n FROM events WHERE data IS NULL AND type IS NOT NULL`),
    ).toBe(pruned.events);
    expect(
      await count(`SELECT count(*) AS n FROM events WHERE data IS NULL AND position > $1`, [
        cut.position,
      ]),
    ).toBe(0);

    // Any cursor before the horizon, including the start of the feed, is 410 naming the oldest.
    // (Leading zeros spell the same position: no way around the horizon.)
    const justBefore = BigInt(cut.position) - 1n;
    for (const old of [
      cursorOf(0),
      cursorOf(1),
      cursorOf(justBefore),
      cursorOf(`000${justBefore}`),
    ]) {
      const gone = await ctx.http.get(`/api/v1/events?after=${old}`).set(auth());
      expect(gone.status).toBe(410);
      expect(gone.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(gone.body).toMatchObject({
        status: 410,
        type: expect.stringMatching(/cursor-expired$/),
        oldestCursor: cursorOf(cut.position),
      });
      expect(gone.body.detail).toContain('RETENTION_EVENTS_DAYS');
    }
    // Following the oldest cursor serves exactly the events after the horizon; so does no cursor.
    const rest = feedBefore.body.items.slice(events.indexOf(cut) + 1);
    const follow = await ctx.http
      .get(`/api/v1/events?limit=500&after=${cursorOf(cut.position)}`)
      .set(auth());
    expect(follow.status).toBe(200);
    expect(follow.body.items).toEqual(rest);
    const fresh = await ctx.http.get('/api/v1/events?limit=500').set(auth());
    expect(fresh.body.items).toEqual(rest);
    // A cursor at or after the horizon is served as before.
    const last = await ctx.http.get(`/api/v1/events?after=${follow.body.nextCursor}`).set(auth());
    expect(last.status).toBe(200);
    expect(last.body.items).toEqual([]);

    // A pruned event: 410 by id and for redelivery; its deliveries are still listed.
    const [{ id: prunedId }] = await rows<{ id: string }>(
      `SELECT e.public_id AS id FROM events e JOIN webhook_deliveries d ON d.event_id = e.id
        WHERE e.data IS NULL ORDER BY e.id LIMIT 1`,
    );
    const one = await ctx.http.get(`/api/v1/events/${prunedId}`).set(auth());
    expect(one.status).toBe(410);
    expect(one.body.type).toMatch(/event-pruned$/);
    const again = await ctx.http.post(`/api/v1/admin/events/${prunedId}/redeliver`).set(admin());
    expect(again.status).toBe(410);
    const deliveries = await ctx.http
      .get('/api/v1/admin/webhook-deliveries?limit=500')
      .set(admin());
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.items.map((d: { eventId: string }) => d.eventId)).toContain(prunedId);

    // A second run finds nothing more (the rest is young).
    expect((await eventRetention().runOnce()).events).toBe(0);
  });

  it('never passes an event whose delivery is still open; a delivery left on a pruned event ends dead, unsent', async () => {
    await paidInvoices(1);
    const open = await rows<{ id: string; position: string }>(
      `SELECT e.id::text, e.position::text FROM events e WHERE e.position > $1 ORDER BY e.position`,
      [await horizon()],
    );
    expect(open.length).toBeGreaterThanOrEqual(2);
    await db.query(`UPDATE events SET created_at = now() - 91 * ${DAY} WHERE position > $1`, [
      await horizon(),
    ]);
    const [blocked] = await rows<{ id: string }>(
      `UPDATE webhook_deliveries SET state = 'failed', delivered_at = NULL, created_at = now() - 400 * ${DAY},
              next_attempt_at = now() + 400 * ${DAY}
        WHERE event_id = $1 RETURNING id::text`,
      [open[1].id],
    );

    await eventRetention().runOnce();
    // Stops right before it: that event keeps its payload and the delivery is untouched.
    expect(await horizon()).toBe(open[0].position);
    expect(
      await count(`SELECT count(*) AS n FROM events WHERE id = $1 AND data IS NOT NULL`, [
        open[1].id,
      ]),
    ).toBe(1);
    expect(
      await count(
        `SELECT count(*) AS n FROM webhook_deliveries WHERE id = $1 AND state = 'failed'`,
        [blocked.id],
      ),
    ).toBe(1);

    // Once the delivery is over, the horizon moves on.
    await db.query(`UPDATE webhook_deliveries SET state = 'dead' WHERE id = $1`, [blocked.id]);
    await eventRetention().runOnce();
    expect(await horizon()).toBe(open[open.length - 1].position);

    // A delivery written for a pruned event (an instance with another address list) is never
    // POSTed: the dispatcher ends it dead, saying why.
    receiver.received.length = 0;
    await db.query(
      `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = now(), delivered_at = NULL WHERE id = $1`,
      [blocked.id],
    );
    await ctx.service.app.get(WebhookDispatcher).runOnce();
    const [after] = await rows<{ state: string; last_error: string }>(
      `SELECT state, last_error FROM webhook_deliveries WHERE id = $1`,
      [blocked.id],
    );
    expect(after).toEqual({ state: 'dead', last_error: 'event pruned by retention' });
    expect(receiver.received).toEqual([]);
  });
});

describe('gateway notifications', () => {
  async function notification(verified: boolean, status: string, daysAgo: number): Promise<string> {
    const [r] = await rows<{ id: string }>(
      `INSERT INTO notifications (type, content_key, payload, content_type, verified, status,
              received_at, last_received_at)
       VALUES ('invoice', $1, '{}', 'application/json', $2, $3,
               now() - make_interval(days => $4), now() - make_interval(days => $4))
       RETURNING id::text`,
      [randomBytes(32).toString('hex'), verified, status, daysAgo],
    );
    return r.id;
  }

  it('deletes applied and repeated (stale) ones older than RETENTION_NOTIFICATIONS_DAYS; the rest stay; the unverified sample is kept to NOTIFY_UNVERIFIED_KEEP', async () => {
    await db.query(`DELETE FROM notifications`);
    const gone = [await notification(true, 'applied', 181), await notification(true, 'stale', 200)];
    const kept = [
      await notification(true, 'applied', 179),
      await notification(true, 'stale', 10),
      await notification(true, 'pending', 400),
      await notification(true, 'rejected', 400),
      await notification(true, 'ignored', 400),
    ];
    // A repeat received lately keeps an old notification.
    const repeated = await notification(true, 'applied', 300);
    await db.query(`UPDATE notifications SET last_received_at = now() WHERE id = $1`, [repeated]);
    kept.push(repeated);
    // Six unverified, bypassing the trim on receipt: the three newest stay.
    const unverified: string[] = [];
    for (let i = 6; i >= 1; i--) unverified.push(await notification(false, 'rejected', i));
    const before = await financialSnapshot();

    const pruned = await notificationRetention().runOnce();

    expect(pruned).toEqual({ settled: 2, unverified: 3 });
    const left = (await rows<{ id: string }>(`SELECT id::text FROM notifications`)).map(
      (r) => r.id,
    );
    expect(left.sort()).toEqual([...kept, ...unverified.slice(3)].sort());
    for (const id of gone) expect(left).not.toContain(id);
    expect(await financialSnapshot()).toEqual(before);
  });
});

describe('several instances', () => {
  let a: TestContext;
  let b: TestContext;

  beforeAll(async () => {
    a = await startTestApp({
      env: { SHOP_WEBHOOK_URL: receiver.url, SHOP_WEBHOOK_SECRET: WHSEC },
    });
    b = await startTestApp({
      databaseUrl: a.databaseUrl,
      sandbox: a.sandbox,
      env: { SHOP_WEBHOOK_URL: receiver.url, SHOP_WEBHOOK_SECRET: WHSEC },
    });
  }, 120000);

  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('two instances prune thousands of rows side by side, in batches, without errors', async () => {
    const q = new Client({ connectionString: a.databaseUrl });
    await q.connect();
    try {
      const N = 3500;
      await q.query(
        `INSERT INTO events (entity_type, entity_id, to_status, cause, type, sequence, data, position, created_at)
         SELECT 'payout', 'bulk-' || i, 'processing', 'reconciliation', 'payout.processing', 1,
                '{"status":"processing"}', i, now() - 100 * ${DAY}
           FROM generate_series(1, $1) i`,
        [N],
      );
      await q.query(
        `INSERT INTO events (entity_type, entity_id, to_status, cause, type, sequence, data, position)
         SELECT 'payout', 'young-' || i, 'processing', 'reconciliation', 'payout.processing', 1,
                '{"status":"processing"}', $1 + i FROM generate_series(1, 5) i`,
        [N],
      );
      await q.query(
        `INSERT INTO webhook_deliveries (event_id, url, entity_type, entity_id, sequence, state, delivered_at)
         SELECT id, $1, entity_type, entity_id, sequence, 'delivered', created_at + interval '1 minute'
           FROM events`,
        [receiver.url],
      );
      await q.query(
        `INSERT INTO notifications (type, content_key, payload, content_type, verified, status, received_at, last_received_at)
         SELECT 'invoice', md5(i::text) || md5((i + 1)::text), '{}', 'application/json', true, 'applied',
                now() - 200 * ${DAY}, now() - 200 * ${DAY}
           FROM generate_series(1, $1) i`,
        [N],
      );

      const results = await Promise.all([
        eventRetention(a).runOnce(),
        eventRetention(b).runOnce(),
        notificationRetention(a).runOnce(),
        notificationRetention(b).runOnce(),
      ]);

      const [ea, eb, na, nb] = results as [
        { deliveries: number; events: number },
        { deliveries: number; events: number },
        { settled: number },
        { settled: number },
      ];
      expect(ea.deliveries + eb.deliveries).toBe(N);
      expect(na.settled + nb.settled).toBe(N);
      // The horizon moves under its row lock: one instance or the other, never both at once.
      const more = await eventRetention(b).runOnce();
      expect(ea.events + eb.events + more.events).toBe(N);
      const count2 = async (sql: string): Promise<number> =>
        Number(((await q.query(sql)).rows as Array<{ n: string }>)[0].n);
      expect(await count2(`SELECT count(*) AS n FROM events`)).toBe(N + 5);
      expect(await count2(`SELECT count(*) AS n FROM events WHERE data IS NULL`)).toBe(N);
      expect(await count2(`SELECT count(*) AS n FROM webhook_deliveries`)).toBe(5);
      expect(await count2(`SELECT count(*) AS n FROM notifications`)).toBe(0);
      expect(
        (
          (await q.query(`SELECT position::text FROM feed_horizon`)).rows as Array<{
            position: string;
          }>
        )[0].position,
      ).toBe(String(N));
      const feed = await a.http.get(`/api/v1/events?after=${cursorOf(N - 1)}`).set(auth());
      expect(feed.status).toBe(410);
      expect(feed.body.oldestCursor).toBe(cursorOf(N));
      // The suite's own rows (data written by hand): read unchecked against the document.
      const served = await unvalidatedHttp(b).get(`/api/v1/events?after=${cursorOf(N)}`).set(auth());
      expect(served.body.items.map((e: { objectId: string }) => e.objectId)).toEqual(
        [1, 2, 3, 4, 5].map((i) => `young-${i}`),
      );
    } finally {
      await q.end();
    }
  });
});
