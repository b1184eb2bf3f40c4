// Over 500 lines on purpose: one app and database, started once in its beforeAll, serve all its
// tests; a split would start another.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { raiseAttention, resolveAttention } from '../../src/common/attention';
import { keyIdOf } from '../../src/common/auth.guard';
import { EVENT_ID_PATTERN } from '../../src/audit/event-id';
import { WebhookDispatcher } from '../../src/events/webhook-dispatcher';
import { PayoutProcessor } from '../../src/payouts/payout-processor';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { admin, auth, SHOP_ID, SHOP_KEY, startTestApp, TestContext } from '../support/app';
import { insertPayoutRow } from '../support/payout-rows';
import { PAYMENT, PAYOUT } from '../support/payways';
import { eventually, WebhookReceiver, type Received } from '../support/webhook-receiver';

/**
 * Shop events end to end: the audit log as outbox, the feed, and signed push delivery to a real
 * HTTP receiver, over a real flow against the sandbox (pay, refunds, payouts, attention).
 */
const SECRET = randomBytes(32);
const WHSEC = `whsec_${SECRET.toString('base64')}`;

interface FeedEvent {
  id: string;
  type: string;
  createdAt: string;
  objectType: string;
  objectId: string;
  sequence: number;
  keyId?: string;
  data: Record<string, unknown>;
}

let ctx: TestContext;
let db: Client;
const receiver = new WebhookReceiver();

beforeAll(async () => {
  await receiver.start();
  ctx = await startTestApp({
    env: {
      SHOP_WEBHOOK_URL: receiver.url,
      SHOP_WEBHOOK_SECRET: WHSEC,
      SHOP_WEBHOOK_RETRY_BASE_S: '0.05',
      SHOP_WEBHOOK_RETRY_MAX_INTERVAL_S: '0.2',
      PAYOUT_POLL_INTERVAL_S: '0.2',
      DOCS_ENABLED: 'true',
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

const dispatcher = (): WebhookDispatcher => ctx.service.app.get(WebhookDispatcher);

/** Every event the feed has, following nextCursor. */
async function readFeed(query = ''): Promise<FeedEvent[]> {
  const all: FeedEvent[] = [];
  let after: string | null = null;
  for (;;) {
    const res = await ctx.http
      .get(`/api/v1/events?limit=500${query}${after ? `&after=${after}` : ''}`)
      .set(auth());
    expect(res.status).toBe(200);
    all.push(...(res.body.items as FeedEvent[]));
    if (res.body.items.length === 0) return all;
    after = res.body.nextCursor as string;
  }
}

async function lastEventOf(objectType: string, objectId: string): Promise<FeedEvent> {
  const events = (await readFeed()).filter(
    (e) => e.objectType === objectType && e.objectId === objectId,
  );
  return events[events.length - 1];
}

/** Drives delivery until the receiver has acknowledged `n` distinct events. */
async function deliverUntil(n: number): Promise<void> {
  await eventually(
    async () => {
      await dispatcher().runOnce();
      const acked = new Set(receiver.received.map((r) => r.id));
      expect(acked.size).toBeGreaterThanOrEqual(n);
    },
    30000,
    50,
  );
}

function verifyBoth(r: Received): void {
  expect(new Webhook(WHSEC).verify(r.body, receiver.headersOf(r))).toEqual(JSON.parse(r.body));
  const mac = createHmac('sha256', SECRET)
    .update(`${r.id}.${r.timestamp}.${r.body}`)
    .digest('base64');
  expect(r.signature).toBe(`v1,${mac}`);
}

/** Raises or resolves an invoice's attention flag through the one raise/resolve pair. */
async function setAttention(shopOrderId: string, raised: boolean): Promise<void> {
  await ctx.service.app.get(DataSource).transaction(async (m) => {
    const [row] = (await m.query(
      `SELECT id, status FROM invoices WHERE shop_order_id = $1 FOR UPDATE`,
      [shopOrderId],
    )) as Array<{ id: string; status: string }>;
    const target = {
      object: 'invoice' as const,
      id: row.id,
      shopId: shopOrderId,
      status: row.status,
    };
    if (raised) await raiseAttention(m, target, 'mismatch', 'test', 'reconciliation');
    else await resolveAttention(m, target, { action: 'accept', note: 'test' });
  });
}

describe('a flow of pay, partial refund, refund, payout, payout rejected, attention raised and resolved', () => {
  const shopOrderId = `order-${randomUUID()}`;
  const refund1 = `refund-${randomUUID()}`;
  const refund2 = `refund-${randomUUID()}`;
  const payoutOk = `po-${randomUUID()}`;
  const payoutRejected = `po-${randomUUID()}`;

  it('writes each change as an event carrying the view its GET returned at that moment', async () => {
    const created = await ctx.http.post('/api/v1/invoices').set(auth()).send({
      shopOrderId,
      amount: '100.00',
      currency: 643,
      payway: PAYMENT.cardSuccess,
    });
    expect(created.status).toBe(201);
    const paid = await eventually(async () => {
      const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      expect(got.body.status).toBe('succeeded');
      return got.body as Record<string, unknown>;
    });
    expect((await lastEventOf('invoice', shopOrderId)).data).toEqual(paid);

    for (const [shopRefundId, amount] of [
      [refund1, '40.00'],
      [refund2, '60.00'],
    ]) {
      const res = await ctx.http
        .post(`/api/v1/invoices/${shopOrderId}/refunds`)
        .set(auth())
        .send({ shopRefundId, amount });
      expect(res.status).toBe(201);
      const done = await eventually(async () => {
        const list = await ctx.http
          .get(`/api/v1/invoices/${shopOrderId}/refunds?refresh=true`)
          .set(auth());
        const r = (list.body.items as Array<Record<string, unknown>>).find(
          (x) => x.shopRefundId === shopRefundId,
        )!;
        expect(r.status).toBe('SUCCESS');
        return r;
      });
      expect((await lastEventOf('refund', shopRefundId)).data).toEqual(done);
    }

    const body = {
      amount: '1000.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      account: '4111111111111111',
    };
    expect(
      (
        await ctx.http
          .post('/api/v1/payouts')
          .set(auth())
          .send({ ...body, shopPaymentId: payoutOk, payway: PAYOUT.card })
      ).status,
    ).toBe(202);
    // Still polled: the event's view has the next poll time the same transaction committed.
    const answered = (await ctx.http.get(`/api/v1/payouts/${payoutOk}`).set(auth())).body;
    expect(answered.nextPollAt).not.toBeNull();
    expect((await lastEventOf('payout', payoutOk)).data).toEqual(answered);
    const payout = await eventually(async () => {
      await ctx.service.app.get(PayoutPoller).runOnce();
      const got = await ctx.http.get(`/api/v1/payouts/${payoutOk}`).set(auth());
      expect(got.body.status).toBe('succeeded');
      return got.body as Record<string, unknown>;
    });
    expect((await lastEventOf('payout', payoutOk)).data).toEqual(payout);

    const rejected = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({ ...body, shopPaymentId: payoutRejected, payway: PAYOUT.sandboxCard('reject') });
    expect(rejected.body.status).toBe('rejected');
    const rejectedView = (await ctx.http.get(`/api/v1/payouts/${payoutRejected}`).set(auth())).body;
    expect((await lastEventOf('payout', payoutRejected)).data).toEqual(rejectedView);

    await setAttention(shopOrderId, true);
    await setAttention(shopOrderId, false);
    const attention = await lastEventOf('invoice', shopOrderId);
    expect(attention.type).toBe('invoice.attention_resolved');
    expect(attention.data).toEqual(
      (await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth())).body,
    );
  });

  it("writes a create's event with the view its answer and a GET give (written from the answer, not read back)", async () => {
    const id = `inv-${randomUUID()}`;
    const created = await ctx.http.post('/api/v1/invoices').set(auth()).send({
      shopOrderId: id,
      amount: '12.30',
      currency: 643,
      payway: PAYMENT.card,
      description: 'view of the create',
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('awaiting_payer');
    const got = await ctx.http.get(`/api/v1/invoices/${id}`).set(auth());
    const event = await lastEventOf('invoice', id);
    expect(event.type).toBe('invoice.awaiting_payer');
    expect(event.data).toEqual(created.body);
    expect(event.data).toEqual(got.body);
  });

  it('has every event type of the flow in the feed, each object numbered 1, 2, … in order', async () => {
    const mine = (await readFeed()).filter((e) =>
      [shopOrderId, refund1, refund2, payoutOk, payoutRejected].includes(e.objectId),
    );
    const types = new Set(mine.map((e) => e.type));
    for (const t of [
      'invoice.succeeded',
      'invoice.attention_raised',
      'invoice.attention_resolved',
      'invoice.refund_updated',
      'refund.waiting',
      'refund.success',
      'payout.succeeded',
      'payout.rejected',
    ])
      expect(types).toContain(t);
    const byObject = new Map<string, number[]>();
    for (const e of mine)
      byObject.set(e.objectId, [...(byObject.get(e.objectId) ?? []), e.sequence]);
    for (const seqs of byObject.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    // Every status change is an event, and nothing else: each event's status differs from the
    // previous one's. Attention events and an invoice's refund_updated (its refund sums changed)
    // are the events that keep the status.
    const keepsStatus = (type: string) =>
      type.includes('attention') || type === 'invoice.refund_updated';
    for (const [objectId, seqs] of byObject) {
      const events = mine.filter((e) => e.objectId === objectId);
      expect(events).toHaveLength(seqs.length);
      events.forEach((e, i) => {
        if (!keepsStatus(e.type) && i > 0 && !keepsStatus(events[i - 1].type))
          expect(e.data.status).not.toEqual(events[i - 1].data.status);
      });
    }
    // One refund_updated per change of the sums: each refund counted as pending, then as refunded.
    expect(
      mine
        .filter((e) => e.type === 'invoice.refund_updated')
        .map((e) => [e.data.refundedAmount, e.data.refundPendingAmount, e.data.refundStatus]),
    ).toEqual([
      ['0.00', '40.00', 'none'],
      ['40.00', '0.00', 'partial'],
      ['40.00', '60.00', 'partial'],
      ['100.00', '0.00', 'full'],
    ]);
    const refundCreated = mine.find((e) => e.objectId === refund1 && e.type === 'refund.waiting')!;
    expect(refundCreated.keyId).toBe(keyIdOf(SHOP_KEY));
    expect(mine.find((e) => e.type === 'invoice.attention_raised')!.keyId).toBeUndefined();
    // The raw payment token never leaves in an event, whoever made the change.
    for (const e of mine.filter((x) => x.objectType === 'invoice'))
      expect((e.data.paymentToken as { token?: string } | null)?.token).toBeUndefined();

    const one = await ctx.http.get(`/api/v1/events/${refundCreated.id}`).set(auth());
    expect(one.body).toEqual(refundCreated);
    const onlyRefunds = await readFeed('&type=refund.success');
    expect(onlyRefunds.length).toBeGreaterThanOrEqual(2);
    expect(onlyRefunds.every((e) => e.type === 'refund.success')).toBe(true);
  });

  it('names every event by a globally unique, time-ordered evt_ id (a UUIDv7), never the row number', async () => {
    const feed = await readFeed();
    expect(feed.length).toBeGreaterThan(0);
    for (const e of feed) expect(e.id).toMatch(EVENT_ID_PATTERN);
    expect(new Set(feed.map((e) => e.id)).size).toBe(feed.length);
    // The id carries the moment it was written (UUIDv7's first 48 bits, milliseconds): inside
    // the transaction whose start is the event's createdAt.
    for (const e of feed) {
      const ms = parseInt(e.id.slice(4, 12) + e.id.slice(13, 17), 16);
      expect(ms - Date.parse(e.createdAt)).toBeGreaterThanOrEqual(0);
      expect(ms - Date.parse(e.createdAt)).toBeLessThan(10_000);
    }
    // Found by it; the same event through the row number of the audit view too (older links).
    const one = feed[feed.length - 1];
    const byId = await ctx.http.get(`/api/v1/events/${one.id}`).set(auth()).expect(200);
    expect(byId.body).toEqual(one);
    const [row] = (
      await db.query(`SELECT id::text AS id FROM events WHERE public_id = $1`, [one.id])
    ).rows as Array<{ id: string }>;
    expect(row.id).toMatch(/^\d+$/);
    expect((await ctx.http.get(`/api/v1/events/${row.id}`).set(auth()).expect(200)).body.id).toBe(
      one.id,
    );
    // Other spellings of an id find nothing.
    for (const spelled of [one.id.toUpperCase(), one.id.slice(4), `${one.id} `, `evt_${row.id}`])
      expect(
        (await ctx.http.get(`/api/v1/events/${encodeURIComponent(spelled)}`).set(auth())).status,
      ).toBe(404);
  });

  it('is one log with the audit trail: audit-only entries stay out of the feed', async () => {
    const audit = await ctx.http
      .get(`/api/v1/admin/events?entityId=${refund1}&limit=500`)
      .set(admin());
    const feed = (await readFeed()).filter((e) => e.objectId === refund1);
    expect(audit.body.items.length).toBeGreaterThan(feed.length);
    // The admin view of the same rows names the event each one is.
    const typed = (
      audit.body.items as Array<{ eventId: string | null; eventType: string | null }>
    ).filter((e) => e.eventType !== null);
    expect(typed.map((e) => e.eventId).sort()).toEqual(feed.map((e) => e.id).sort());
    const rows = await db.query(
      `SELECT count(*)::int AS n FROM events WHERE entity_id = $1 AND type IS NOT NULL`,
      [refund1],
    );
    expect(rows.rows[0].n).toBe(feed.length);
  });

  it('pushes every event signed, in order per object, each body equal to the feed item', async () => {
    const feed = await readFeed();
    await deliverUntil(feed.length);
    const firstById = new Map<string, Received>();
    for (const r of receiver.received) {
      verifyBoth(r);
      if (!firstById.has(r.id)) firstById.set(r.id, r);
    }
    for (const e of feed) expect(firstById.get(e.id)!.event).toEqual(e);
    const seen = new Map<string, number>();
    for (const r of receiver.received) {
      const key = `${r.event.objectType}/${r.event.objectId}`;
      expect(r.event.sequence).toBeGreaterThanOrEqual(seen.get(key) ?? 0);
      seen.set(key, r.event.sequence);
    }
  });

  it('answers a bad cursor or type with 400 naming the field, an unknown event with 404, a shop key on admin routes with 403', async () => {
    for (const after of [
      'garbage',
      Buffer.from('p-1').toString('base64url'),
      Buffer.from('p1; DROP').toString('base64url'),
    ]) {
      const res = await ctx.http
        .get(`/api/v1/events?after=${encodeURIComponent(after)}`)
        .set(auth());
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.body.errors[0].field).toBe('after');
    }
    const badType = await ctx.http.get('/api/v1/events?type=invoice.nope').set(auth());
    expect(badType.status).toBe(400);
    expect((await ctx.http.get('/api/v1/events/99999999').set(auth())).status).toBe(404);
    expect((await ctx.http.get('/api/v1/events/abc').set(auth())).status).toBe(404);
    expect((await ctx.http.get('/api/v1/events')).status).toBe(401);
    expect((await ctx.http.get('/api/v1/admin/webhook-deliveries').set(auth())).status).toBe(403);
    expect((await ctx.http.post('/api/v1/admin/events/1/redeliver').set(auth())).status).toBe(403);
  });
});

/** A payout row and `n` status changes through the payout's one write path (PayoutProcessor.write). */
async function payoutWithEvents(n: number): Promise<string> {
  const { shopPaymentId } = await insertPayoutRow((sql, params) => db.query(sql, params));
  const processor = ctx.service.app.get(PayoutProcessor);
  for (let i = 0; i < n; i++) {
    await ctx.service.app.get(DataSource).transaction(async (m) => {
      const p = (await processor.lock(m, { shopId: SHOP_ID, shopPaymentId }))!;
      await processor.write(
        m,
        p,
        p.status === 'processing' ? 'unknown' : 'processing',
        'reconciliation',
        {},
      );
    });
  }
  return shopPaymentId;
}

it('documents the event shape and the feed in the OpenAPI document', async () => {
  const doc = (await ctx.http.get('/docs-json')).body as {
    paths: Record<string, unknown>;
    components: { schemas: Record<string, { properties: Record<string, unknown> }> };
  };
  expect(Object.keys(doc.paths)).toEqual(
    expect.arrayContaining([
      '/api/v1/events',
      '/api/v1/events/{id}',
      '/api/v1/admin/webhook-deliveries',
      '/api/v1/admin/events/{id}/redeliver',
    ]),
  );
  // One schema per object type (the event is a oneOf told apart by objectType), same fields.
  for (const name of ['InvoiceEvent', 'RefundEvent', 'PayoutEvent'])
    expect(Object.keys(doc.components.schemas[name].properties).sort()).toEqual([
      'createdAt',
      'data',
      'id',
      'keyId',
      'objectId',
      'objectType',
      'sequence',
      'type',
    ]);
});

describe('push delivery', () => {
  it('retries a receiver that answers 500 three times: 4 deliveries with one webhook-id, then the next event', async () => {
    const objectId = await payoutWithEvents(2);
    const failures = new Map<string, number>();
    receiver.respond = (r) => {
      if (r.event.objectId !== objectId) return 200;
      const n = failures.get(r.id) ?? 0;
      failures.set(r.id, n + 1);
      return n < 3 ? 500 : 200;
    };
    try {
      await eventually(
        async () => {
          await dispatcher().runOnce();
          expect(receiver.received.filter((r) => r.event.objectId === objectId)).toHaveLength(8);
        },
        30000,
        50,
      );
    } finally {
      receiver.respond = () => 200;
    }
    const mine = receiver.received.filter((r) => r.event.objectId === objectId);
    expect(mine.map((r) => r.event.sequence)).toEqual([1, 1, 1, 1, 2, 2, 2, 2]);
    expect(new Set(mine.slice(0, 4).map((r) => r.id)).size).toBe(1);
    expect(new Set(mine.slice(4).map((r) => r.id)).size).toBe(1);
    mine.forEach(verifyBoth);
    const rows = await db.query(
      `SELECT state, attempts, last_status FROM webhook_deliveries WHERE entity_id = $1 ORDER BY sequence`,
      [objectId],
    );
    expect(rows.rows).toEqual([
      { state: 'delivered', attempts: 4, last_status: 200 },
      { state: 'delivered', attempts: 4, last_status: 200 },
    ]);
    const metrics = await ctx.http.get('/metrics');
    expect(metrics.text).toMatch(/shop_webhook_deliveries_total\{result="failed"\} [1-9]/);
    expect(metrics.text).toMatch(/shop_webhook_deliveries_total\{result="delivered"\} [1-9]/);
    expect(metrics.text).toContain('shop_webhook_lag_seconds');
  });

  it('logs one warn line per failed delivery with the event id, address, attempt and cause, and lastError says the same', async () => {
    const objectId = await payoutWithEvents(1);
    const log = (dispatcher() as unknown as { log: { warn: (o: object, m: string) => void } }).log;
    const warned: Array<Record<string, unknown>> = [];
    const original = log.warn.bind(log);
    log.warn = (o: object, m: string) => {
      if (m === 'shop event delivery failed') warned.push(o as Record<string, unknown>);
      original(o, m);
    };
    let failed = false;
    receiver.respond = (r) => {
      if (r.event.objectId !== objectId || failed) return 200;
      failed = true;
      return 500;
    };
    try {
      await eventually(
        async () => {
          await dispatcher().runOnce();
          expect(warned.length).toBeGreaterThan(0);
        },
        15000,
        50,
      );
    } finally {
      receiver.respond = () => 200;
      log.warn = original;
    }
    const [row] = (
      await db.query(
        `SELECT e.public_id AS event_id, d.last_error, d.attempts
           FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          WHERE d.entity_id = $1 AND d.attempts > 0 ORDER BY d.sequence LIMIT 1`,
        [objectId],
      )
    ).rows as Array<{ event_id: string; last_error: string | null; attempts: number }>;
    expect(warned[0]).toMatchObject({
      eventId: row.event_id,
      url: receiver.url,
      attempt: 1,
      cause: 'HTTP 500',
    });
    expect(row.last_error === null || row.last_error === 'HTTP 500').toBe(true);
  });

  it('never follows a redirect: the configured address is the only place an event goes', async () => {
    const elsewhere = await new WebhookReceiver().start();
    const redirect = createServer((_req, res) =>
      res.writeHead(307, { location: elsewhere.url }).end(),
    );
    await new Promise<void>((resolve) => redirect.listen(0, '127.0.0.1', resolve));
    const redirectUrl = `http://127.0.0.1:${(redirect.address() as { port: number }).port}/hooks`;
    const redirecting = await startTestApp({
      databaseUrl: ctx.databaseUrl,
      sandbox: ctx.sandbox,
      env: { SHOP_WEBHOOK_URL: redirectUrl, SHOP_WEBHOOK_SECRET: WHSEC },
    });
    try {
      await payoutWithEvents(1);
      const d = redirecting.service.app.get(WebhookDispatcher);
      await eventually(
        async () => {
          await d.runOnce();
          const rows = await db.query(
            `SELECT last_status FROM webhook_deliveries WHERE url = $1 AND attempts > 0`,
            [redirectUrl],
          );
          expect(rows.rows.length).toBeGreaterThan(0);
          expect(rows.rows.every((r) => r.last_status === 307)).toBe(true);
        },
        30000,
        50,
      );
      expect(elsewhere.received).toHaveLength(0);
    } finally {
      await redirecting.close();
      await new Promise((r) => redirect.close(r));
      await elsewhere.close();
    }
  });

  it('marks a delivery dead after the retry window, lists it for admins, and redelivers it on request', async () => {
    const short = await startTestApp({
      databaseUrl: ctx.databaseUrl,
      sandbox: ctx.sandbox,
      env: {
        SHOP_WEBHOOK_URL: receiver.url,
        SHOP_WEBHOOK_SECRET: WHSEC,
        SHOP_WEBHOOK_RETRY_BASE_S: '0.05',
        SHOP_WEBHOOK_RETRY_MAX_INTERVAL_S: '0.1',
        SHOP_WEBHOOK_RETRY_FOR_S: '0.3',
      },
    });
    try {
      const objectId = await payoutWithEvents(2);
      receiver.respond = (r) => (r.event.objectId === objectId ? 503 : 200);
      const shortDispatcher = short.service.app.get(WebhookDispatcher);
      await eventually(
        async () => {
          await shortDispatcher.runOnce();
          const rows = await db.query(
            `SELECT state FROM webhook_deliveries WHERE entity_id = $1 ORDER BY sequence`,
            [objectId],
          );
          expect(rows.rows.map((r) => r.state)).toEqual(['dead', 'dead']);
        },
        30000,
        50,
      );
      // Event 2 went out only after event 1 was dead.
      const mine = receiver.received.filter((r) => r.event.objectId === objectId);
      const lastOf1 = mine.map((r) => r.event.sequence).lastIndexOf(1);
      expect(mine.slice(0, lastOf1 + 1).every((r) => r.event.sequence === 1)).toBe(true);

      const dead = await short.http.get('/api/v1/admin/webhook-deliveries?state=dead').set(admin());
      expect(dead.status).toBe(200);
      const listed = (
        dead.body.items as Array<{ objectId: string; eventId: string; state: string }>
      ).filter((d) => d.objectId === objectId);
      expect(listed).toHaveLength(2);
      expect((await short.http.get('/metrics')).text).toMatch(/shop_webhook_dead_total [1-9]/);
      expect(
        (await short.http.get('/api/v1/admin/webhook-deliveries?state=nope').set(admin())).status,
      ).toBe(400);

      receiver.respond = () => 200;
      const before = receiver.received.length;
      const first = listed.find(
        (d) => d.eventId === listed.map((x) => x.eventId).sort((a, b) => Number(a) - Number(b))[0],
      )!;
      const redelivered = await short.http
        .post(`/api/v1/admin/events/${first.eventId}/redeliver`)
        .set(admin());
      expect(redelivered.status).toBe(200);
      expect(redelivered.body[0]).toMatchObject({ eventId: first.eventId, state: 'pending' });
      await eventually(
        async () => {
          await shortDispatcher.runOnce();
          expect(receiver.received.slice(before).some((r) => r.id === first.eventId)).toBe(true);
        },
        30000,
        50,
      );
      expect(
        (await short.http.post('/api/v1/admin/events/99999999/redeliver').set(admin())).status,
      ).toBe(404);
    } finally {
      receiver.respond = () => 200;
      await short.close();
    }
  });
});
