import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { EventRetention } from '../../src/events/event-retention';
import { WebhookDispatcher } from '../../src/events/webhook-dispatcher';
import { signNotificationFields } from '../../src/gateway';
import { NotificationRetention } from '../../src/notifications/notification-retention';
import type { SandboxHandle } from '../../src/sandbox/sandbox.server';
import {
  admin,
  auth,
  SECRET,
  SHOP_ID,
  startTestApp,
  startTestSandbox,
  TestContext,
} from '../support/app';
import { createTestDatabase } from '../support/database';
import { PAYMENT } from '../support/payways';
import { eventually, WebhookReceiver } from '../support/webhook-receiver';

/**
 * Retention never deletes evidence, against the running service and real PostgreSQL (ages are
 * made by moving timestamps back in the suite's own database): a notification whose status was
 * not applied is stored as such and kept; a notification about an object still flagged is kept
 * until the flag is gone; an event still owed to an address removed from the configuration (the
 * service restarted without it) keeps its data.
 */
const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;
const DAY = `interval '1 day'`;

let database: { url: string; drop(): Promise<void> };
let sandbox: SandboxHandle;
let ctx: TestContext;
let db: Client;
const kept = new WebhookReceiver();
/** An address that fails every delivery, then is removed from the configuration. */
const removed = new WebhookReceiver();

beforeAll(async () => {
  await kept.start();
  await removed.start();
  removed.respond = () => 500;
  database = await createTestDatabase();
  sandbox = await startTestSandbox();
  ctx = await startApp([kept.url, removed.url]);
  db = new Client({ connectionString: database.url });
  await db.connect();
}, 120000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
  await sandbox?.close();
  await database?.drop();
  await kept.close();
  await removed.close();
});

function startApp(urls: string[]): Promise<TestContext> {
  return startTestApp({
    sandbox,
    databaseUrl: database.url,
    env: { SHOP_WEBHOOK_URL: urls.join(','), SHOP_WEBHOOK_SECRET: WHSEC },
  });
}

async function rows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.query(sql, params)).rows as T[];
}

/** An invoice row as the invoices module leaves it, in the given status (not on the gateway). */
async function invoice(status: string): Promise<string> {
  const shopOrderId = `evd-${randomUUID()}`;
  await db.query(
    `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token)
     VALUES ($1, $2, $3, $4, '100.00', 643, $5, $6)`,
    [SHOP_ID, shopOrderId, 'f'.repeat(64), status, PAYMENT.card, randomBytes(16).toString('hex')],
  );
  return shopOrderId;
}

/** A signed payment notification as the gateway sends it (all values text). */
async function notify(
  shopOrderId: string,
  status: string,
  over: Record<string, string> = {},
): Promise<void> {
  const fields: Record<string, string> = {
    shop_id: String(SHOP_ID),
    shop_order_id: shopOrderId,
    shop_amount: '100.00',
    shop_currency: '643',
    payment_id: '987654',
    client_price: '104.00',
    ps_currency: '643',
    payway: PAYMENT.card,
    created: '2026-01-01T10:00:00+03:00',
    updated: '2026-01-01T10:05:00+03:00',
    status,
    ...over,
  };
  const res = await ctx.http
    .post('/webhooks/gateway?type=invoice')
    .set('content-type', 'application/json')
    .send(JSON.stringify({ ...fields, sign: signNotificationFields(fields, SECRET) }));
  expect(res.status).toBe(200);
}

interface Stored {
  id: string;
  status: string;
  statusEffect: string | null;
  outcome: string;
  fields: Record<string, string>;
}

/** The inbox as operators see it (GET /admin/notifications), oldest first. */
async function inbox(shopOrderId: string): Promise<Stored[]> {
  const res = await ctx.http
    .get(`/api/v1/admin/notifications?shopOrderId=${shopOrderId}`)
    .set(admin());
  expect(res.status).toBe(200);
  return (res.body.items as Stored[]).reverse();
}

/** Every notification of the invoice last received `days` ago. */
async function age(shopOrderId: string, days: number): Promise<void> {
  await db.query(
    `UPDATE notifications SET received_at = now() - make_interval(days => $2),
            last_received_at = now() - make_interval(days => $2)
      WHERE shop_order_id = $1`,
    [shopOrderId, days],
  );
}

async function flagged(shopOrderId: string): Promise<boolean> {
  const [r] = await rows<{ needs_attention: boolean }>(
    `SELECT needs_attention FROM invoices WHERE shop_order_id = $1`,
    [shopOrderId],
  );
  return r.needs_attention;
}

/** An operator settles the invoice's flag (what `resolve` ends with). */
async function clearFlag(shopOrderId: string): Promise<void> {
  await db.query(
    `UPDATE invoices SET needs_attention = false, attention_reason = NULL, attention_at = NULL
      WHERE shop_order_id = $1`,
    [shopOrderId],
  );
}

const pruneNotifications = (): Promise<unknown> =>
  ctx.service.app.get(NotificationRetention).runOnce();

describe('gateway notifications past RETENTION_NOTIFICATIONS_DAYS', () => {
  it('a success for an invoice we had rejected is stored as "status not applied" beside the price it taught, and is kept past retention, flag open or not', async () => {
    const shopOrderId = await invoice('rejected');
    await notify(shopOrderId, 'success');

    const [n] = await inbox(shopOrderId);
    // Something was learnt (the payer's price), the status was not applied: the outcome says both.
    expect(n.outcome).toContain('payer price learnt');
    expect(n.outcome).toContain('status not applied, needs attention');
    expect(n.statusEffect).toBe('not_applied');
    expect(await flagged(shopOrderId)).toBe(true);
    const [inv] = await rows<{ status: string }>(
      `SELECT status FROM invoices WHERE shop_order_id = $1`,
      [shopOrderId],
    );
    expect(inv.status).toBe('rejected');

    await age(shopOrderId, 181);
    await pruneNotifications();
    expect((await inbox(shopOrderId)).map((x) => x.id)).toEqual([n.id]);

    // Settled by an operator, it is still the evidence of a contradiction: kept.
    await clearFlag(shopOrderId);
    await pruneNotifications();
    expect((await inbox(shopOrderId)).map((x) => x.id)).toEqual([n.id]);
  });

  it('applied and repeated notifications of an invoice stay while it is flagged, and go once the flag is settled; the contradiction stays', async () => {
    const shopOrderId = await invoice('awaiting_payer');
    await notify(shopOrderId, 'success');
    // The same status again (another copy the gateway signed later): a repeat.
    await notify(shopOrderId, 'success', { updated: '2026-01-01T10:06:00+03:00' });
    // Then a contradiction: flagged.
    await notify(shopOrderId, 'rejected', { updated: '2026-01-01T10:07:00+03:00' });
    const stored = await inbox(shopOrderId);
    expect(stored.map((x) => [x.fields.status, x.status, x.statusEffect])).toEqual([
      ['success', 'applied', 'applied'],
      ['success', 'stale', 'unchanged'],
      ['rejected', 'stale', 'not_applied'],
    ]);
    expect(await flagged(shopOrderId)).toBe(true);

    // An invoice of the same age that nobody flagged: its notification goes.
    const plain = await invoice('awaiting_payer');
    await notify(plain, 'success');

    await age(shopOrderId, 181);
    await age(plain, 181);
    await pruneNotifications();
    expect((await inbox(shopOrderId)).map((x) => x.id).sort()).toEqual(
      stored.map((x) => x.id).sort(),
    );
    expect(await inbox(plain)).toEqual([]);

    await clearFlag(shopOrderId);
    await pruneNotifications();
    expect((await inbox(shopOrderId)).map((x) => x.id)).toEqual([stored[2].id]);
  });
  it('a refund notification stays while its refund is flagged, and goes once the flag is settled', async () => {
    const shopOrderId = await invoice('succeeded');
    const shopRefundId = `evd-r-${randomUUID()}`;
    await db.query(
      `INSERT INTO refunds (shop_id, shop_refund_id, invoice_pk, shop_order_id, request_fingerprint,
              amount, currency, status, submit_state, needs_attention, attention_reason, attention_at)
       SELECT $1, $2, id, $3::text, $4, '10.00', 643, 'WAITING', 'accepted', true, 'deadline: x', now()
         FROM invoices WHERE shop_order_id = $3::text`,
      [SHOP_ID, shopRefundId, shopOrderId, 'f'.repeat(64)],
    );
    // As the refund applier leaves one (the notification itself is ours and applied).
    const [n] = await rows<{ id: string }>(
      `INSERT INTO notifications (type, content_key, payload, content_type, verified, status,
              outcome, status_effect, shop_id, shop_order_id, shop_refund_id, received_at, last_received_at)
       VALUES ('refund', $1, '{}', 'application/json', true, 'applied', 'refund WAITING -> SUCCESS',
               'applied', $2, $3, $4, now() - 200 * ${DAY}, now() - 200 * ${DAY})
       RETURNING id::text`,
      [randomBytes(32).toString('hex'), SHOP_ID, shopOrderId, shopRefundId],
    );
    const left = async (): Promise<number> =>
      (await rows(`SELECT 1 FROM notifications WHERE id = $1`, [n.id])).length;

    await pruneNotifications();
    expect(await left()).toBe(1);
    await db.query(`UPDATE refunds SET needs_attention = false WHERE shop_refund_id = $1`, [
      shopRefundId,
    ]);
    await pruneNotifications();
    expect(await left()).toBe(0);
  });
});

describe('feed events past RETENTION_EVENTS_DAYS', () => {
  it('an event still owed to an address removed from the configuration keeps its data after a restart; once given up on, it is pruned', async () => {
    const shopOrderId = `evd-${randomUUID()}`;
    const created = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId, amount: '10.00', currency: 643, payway: PAYMENT.cardSuccess });
    expect(created.status).toBe(201);
    await eventually(async () => {
      const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      expect(got.body.status).toBe('succeeded');
    });
    const dispatcher = ctx.service.app.get(WebhookDispatcher);
    await eventually(async () => {
      await dispatcher.runOnce();
      const open = await rows<{ url: string; state: string }>(
        `SELECT url, state FROM webhook_deliveries WHERE state <> 'delivered'`,
      );
      expect(open.filter((d) => d.url === kept.url)).toEqual([]);
      // The removed address failed its first event of each object; the later ones wait behind.
      expect(open.filter((d) => d.url === removed.url && d.state === 'failed')).not.toEqual([]);
    });
    const owed = await rows<{ id: string }>(
      `SELECT DISTINCT event_id::text AS id FROM webhook_deliveries
        WHERE url = $1 AND state IN ('pending', 'failed')`,
      [removed.url],
    );
    expect(owed.length).toBeGreaterThanOrEqual(2);

    // The failing address is taken out of the configuration; the service restarts without it.
    await ctx.close();
    ctx = await startApp([kept.url]);
    await db.query(`UPDATE events SET created_at = now() - 91 * ${DAY}`);
    await ctx.service.app.get(EventRetention).runOnce();
    const cleared = await rows<{ id: string }>(
      `SELECT id::text FROM events WHERE data IS NULL AND id = ANY($1::bigint[])`,
      [owed.map((e) => e.id)],
    );
    expect(cleared).toEqual([]);

    // Once nobody is owed them (the deliveries given up on), retention takes their data.
    await db.query(`UPDATE webhook_deliveries SET state = 'dead' WHERE url = $1`, [removed.url]);
    await ctx.service.app.get(EventRetention).runOnce();
    const left = await rows<{ id: string }>(
      `SELECT id::text FROM events WHERE data IS NOT NULL AND id = ANY($1::bigint[])`,
      [owed.map((e) => e.id)],
    );
    expect(left).toEqual([]);
  });
});
