import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { KeyRing } from '../../src/common/key-ring';
import { notificationSignString, signNotificationFields } from '../../src/gateway';
import { rekeyNotifications } from '../../src/notifications/notification-rekey';
import { SECRET, SHOP_ID, startTestApp, TestContext } from '../support/app';
import { paymentNotification } from '../support/notifications';
import { PAYMENT } from '../support/payways';

/**
 * The notification's kind is part of what was received: a captured
 * notification replayed first under a wrong `?type=` is refused (400 naming `type`, nothing
 * stored), so the genuine one, when it comes, is applied and never taken as a repeat of it; and
 * rows an older version stored under a wrong kind no longer hold the genuine one's key.
 */
let ctx: TestContext;
let db: Pool;

beforeAll(async () => {
  ctx = await startTestApp();
  db = new Pool({ connectionString: ctx.databaseUrl });
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

/** An invoice awaiting its payer, as the invoices module leaves it (not on the sandbox). */
async function invoice(): Promise<string> {
  const shopOrderId = `kind-${randomUUID()}`;
  await db.query(
    `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, two_step, pay_token)
     VALUES ($1, $2, $3, 'awaiting_payer', '100.00', 643, $4, false, $5)`,
    [SHOP_ID, shopOrderId, 'f'.repeat(64), PAYMENT.card, randomBytes(16).toString('hex')],
  );
  return shopOrderId;
}

/** A payment notification as the gateway sends it, signed (test/support/notifications.ts). */
const paid = (shopOrderId: string): Record<string, string> => paymentNotification(shopOrderId);

/** A refund notification as the sandbox sends it, signed. */
function refunded(shopOrderId: string): Record<string, string> {
  const fields: Record<string, string> = {
    shop_id: String(SHOP_ID),
    shop_refund_id: `rf-${randomUUID()}`,
    invoice_id: '987654',
    shop_order_id: shopOrderId,
    status: 'SUCCESS',
    amount: '10.00',
    currency: 'RUB',
    error_code: '0',
  };
  return { ...fields, sign: signNotificationFields(fields, SECRET) };
}

/** POST with the query exactly as given (`type=...`, repeated, encoded or absent). */
function post(body: Record<string, string>, query: string) {
  return ctx.http
    .post(`/webhooks/gateway${query}`)
    .set('content-type', 'application/json')
    .send(JSON.stringify(body));
}

async function stored(shopOrderId: string): Promise<Array<{ type: string; status: string; delivery_count: number }>> {
  const r = await db.query(
    `SELECT type, status, delivery_count FROM notifications WHERE shop_order_id = $1 ORDER BY received_at`,
    [shopOrderId],
  );
  return r.rows as Array<{ type: string; status: string; delivery_count: number }>;
}

async function statusOf(shopOrderId: string): Promise<string> {
  const r = await db.query(`SELECT status FROM invoices WHERE shop_order_id = $1`, [shopOrderId]);
  return (r.rows[0] as { status: string }).status;
}

async function events(shopOrderId: string): Promise<number> {
  const r = await db.query(
    `SELECT count(*)::int AS n FROM events WHERE entity_type = 'invoice' AND entity_id = $1`,
    [shopOrderId],
  );
  return (r.rows[0] as { n: number }).n;
}

describe('a notification replayed first under a wrong type', () => {
  it.each([
    ['refund (it does not fit a payment body)', '?type=refund', /does not|names no shop_refund_id/],
    ['an unknown kind', '?type=chargeback', /must be invoice or refund/],
    ['another case', '?type=Invoice', /must be invoice or refund/],
    ['a trailing space', '?type=invoice%20', /must be invoice or refund/],
    ['empty', '?type=', /must be invoice or refund/],
    ['absent', '', /is required/],
    ['given twice, differently', '?type=refund&type=invoice', /more than once/],
    ['given twice, the other order', '?type=invoice&type=refund', /more than once/],
  ])(
    'as %s: 400 naming type, nothing stored, nothing applied; the genuine one then is applied',
    async (_name, query, message) => {
      const shopOrderId = await invoice();
      const body = paid(shopOrderId);
      const wrong = await post(body, query);
      expect(wrong.status).toBe(400);
      expect(wrong.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(wrong.body).toMatchObject({
        type: expect.stringMatching(/\/notification-type-invalid$/),
        errors: [{ field: 'type', message: expect.stringMatching(message) }],
      });
      expect(await stored(shopOrderId)).toEqual([]);
      expect(await statusOf(shopOrderId)).toBe('awaiting_payer');

      const genuine = await post(body, '?type=invoice');
      expect([genuine.status, genuine.text]).toEqual([200, 'OK']);
      expect(await statusOf(shopOrderId)).toBe('succeeded');
      expect(await stored(shopOrderId)).toEqual([
        { type: 'invoice', status: 'applied', delivery_count: 1 },
      ]);
      // Its real redelivery is the repeat, and a wrong one after it still stores nothing.
      expect((await post(body, '?type=invoice')).text).toBe('OK');
      expect((await post(body, query)).status).toBe(400);
      expect(await stored(shopOrderId)).toEqual([
        { type: 'invoice', status: 'applied', delivery_count: 2 },
      ]);
      expect(await events(shopOrderId)).toBe(1);
    },
  );

  it('the same type given twice is that kind', async () => {
    const shopOrderId = await invoice();
    const res = await post(paid(shopOrderId), '?type=invoice&type=invoice');
    expect([res.status, res.text]).toEqual([200, 'OK']);
    expect(await statusOf(shopOrderId)).toBe('succeeded');
  });

  it('a refund body under type=invoice is 400 and stores nothing; under type=refund it is received', async () => {
    const shopOrderId = await invoice();
    const body = refunded(shopOrderId);
    const wrong = await post(body, '?type=invoice');
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors).toEqual([{ field: 'type', message: expect.stringContaining('shop_refund_id') }]);
    expect(await stored(shopOrderId)).toEqual([]);
    const right = await post(body, '?type=refund');
    expect([right.status, right.text]).toEqual([200, 'OK']);
    expect((await stored(shopOrderId)).map((n) => n.type)).toEqual(['refund']);
  });

  it('a wrong type with a bad signature is refused and stores nothing either', async () => {
    const shopOrderId = await invoice();
    const res = await post({ ...paid(shopOrderId), sign: '0'.repeat(64) }, '?type=chargeback');
    expect(res.status).toBe(400);
    const r = await db.query(`SELECT 1 FROM notifications WHERE shop_order_id = $1`, [shopOrderId]);
    expect(r.rows).toEqual([]);
  });
});

describe('rows stored before the kind was part of the key', () => {
  /** The key the previous version gave a verified notification: the signed text alone. */
  const signedOnly = (body: Record<string, string>): string => {
    const { sign: _sign, ...fields } = body;
    return createHash('sha256')
      .update(JSON.stringify(['v', notificationSignString(fields)]), 'utf8')
      .digest('hex');
  };

  async function insertOld(
    shopOrderId: string,
    body: Record<string, string>,
    type: string,
    status: string,
  ): Promise<void> {
    await db.query(
      `INSERT INTO notifications (type, content_key, payload, content_type, verified, status, shop_order_id, key_version)
       VALUES ($1, $2, '{}'::jsonb, 'application/json', true, $3, $4, 2)`,
      [type, signedOnly(body), status, shopOrderId],
    );
  }

  it('a copy stored as ignored under a wrong type gives up the genuine key at start-up; an old genuine row keeps its redeliveries', async () => {
    const blocked = await invoice();
    const blockedBody = paid(blocked);
    await insertOld(blocked, blockedBody, 'chargeback', 'ignored');
    const done = await invoice();
    const doneBody = paid(done);
    expect((await post(doneBody, '?type=invoice')).text).toBe('OK');
    expect(await statusOf(done)).toBe('succeeded');
    // As the previous version left it: the applied row under the signed text's key.
    await db.query(
      `UPDATE notifications SET content_key = $2, key_version = 2 WHERE shop_order_id = $1`,
      [done, signedOnly(doneBody)],
    );

    const report = await rekeyNotifications(
      ctx.service.app.get(DataSource),
      ctx.service.app.get(KeyRing),
    );
    expect(report).toMatchObject({ failed: [], superseded: 0 });
    expect(report.rekeyed).toBeGreaterThanOrEqual(2);
    const versions = await db.query(`SELECT DISTINCT key_version FROM notifications`);
    expect(versions.rows).toEqual([{ key_version: 3 }]);

    const genuine = await post(blockedBody, '?type=invoice');
    expect([genuine.status, genuine.text]).toEqual([200, 'OK']);
    expect(await statusOf(blocked)).toBe('succeeded');
    expect((await stored(blocked)).map((n) => [n.type, n.status])).toEqual([
      ['chargeback', 'ignored'],
      ['invoice', 'applied'],
    ]);

    expect((await post(doneBody, '?type=invoice')).text).toBe('OK');
    expect(await stored(done)).toEqual([{ type: 'invoice', status: 'applied', delivery_count: 2 }]);
    expect(await events(done)).toBe(1);

    // Nothing left for the next start.
    expect(
      await rekeyNotifications(ctx.service.app.get(DataSource), ctx.service.app.get(KeyRing)),
    ).toEqual({ rekeyed: 0, superseded: 0, failed: [] });
  });
});
