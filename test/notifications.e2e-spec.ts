import { randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { GatewayService, signNotificationFields } from '../src/gateway';
import {
  admin,
  PAYOUT_SECRET,
  PAYOUT_SHOP_ID,
  SECRET,
  SHOP_ID,
  startTestApp,
  TestContext,
  tokenOf,
} from './support/app';
import { PAYMENT } from './support/payways';

/**
 * The gateway webhook end to end: real notifications from the sandbox, hand-signed ones for the
 * edge cases, the inbox rows and the audit trail in PostgreSQL.
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

interface TestInvoice {
  shopOrderId: string;
  gatewayId: number | null;
}

/** An invoice row as the invoices module leaves it (awaiting the payer), optionally created on the sandbox. */
async function invoice(
  opts: { amount?: string; twoStep?: boolean; status?: string; onGateway?: boolean } = {},
): Promise<TestInvoice> {
  const shopOrderId = `ord-${randomUUID()}`;
  const amount = opts.amount ?? '100.00';
  await db.query(
    `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, two_step, pay_token)
     VALUES ($1, $2, $3, $4, $5, 643, $8, $6, $7)`,
    [
      SHOP_ID,
      shopOrderId,
      'f'.repeat(64),
      opts.status ?? 'awaiting_payer',
      amount,
      opts.twoStep ?? false,
      randomBytes(16).toString('hex'),
      PAYMENT.card,
    ],
  );
  if (opts.onGateway === false) return { shopOrderId, gatewayId: null };
  const gateway = ctx.service.app.get(GatewayService);
  const req = {
    shop_order_id: shopOrderId,
    amount,
    currency: 643,
    payway: PAYMENT.card,
    callback_url: `${ctx.url}/webhooks/gateway`,
  };
  const created = opts.twoStep ? await gateway.holdInvoice(req) : await gateway.createInvoice(req);
  await db.query(`UPDATE invoices SET invoice_id = $2 WHERE shop_order_id = $1`, [
    shopOrderId,
    created.id,
  ]);
  return { shopOrderId, gatewayId: created.id };
}

async function payerActs(inv: TestInvoice, action: 'pay' | 'decline'): Promise<void> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/invoices/${inv.gatewayId}/${action}`, {
    method: 'POST',
  });
  expect(res.status).toBe(200);
}

async function sandboxSettings(settings: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/settings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(settings),
  });
  expect(res.status).toBe(200);
}

async function row(shopOrderId: string): Promise<Record<string, unknown>> {
  const r = await db.query(`SELECT * FROM invoices WHERE shop_order_id = $1`, [shopOrderId]);
  return r.rows[0] as Record<string, unknown>;
}

async function statusOf(shopOrderId: string): Promise<string> {
  return (await row(shopOrderId)).status as string;
}

async function eventsOf(
  shopOrderId: string,
): Promise<Array<{ from_status: string; to_status: string; cause: string }>> {
  const r = await db.query(
    `SELECT from_status, to_status, cause FROM events WHERE entity_type = 'invoice' AND entity_id = $1 ORDER BY id`,
    [shopOrderId],
  );
  return r.rows as Array<{ from_status: string; to_status: string; cause: string }>;
}

async function waitFor<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 10000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A payment notification as the gateway sends it (all values text), signed by the spec's rule. */
function notification(
  shopOrderId: string,
  overrides: Record<string, string> = {},
  secret = SECRET,
): Record<string, string> {
  const fields: Record<string, string> = {
    shop_id: String(SHOP_ID),
    shop_order_id: shopOrderId,
    description: 'order',
    shop_amount: '100.00',
    shop_refund: '0',
    shop_currency: '643',
    payment_id: '987654',
    client_price: '104.00',
    ps_currency: '643',
    payway: PAYMENT.card,
    ps_data: '{"account":"411111******1111"}',
    created: '2026-01-01T10:00:00+03:00',
    updated: '2026-01-01T10:05:00+03:00',
    status: 'success',
    addons: '{}',
    ...overrides,
  };
  return { ...fields, sign: signNotificationFields(fields, secret) };
}

function postJson(body: Record<string, string>, type = 'invoice') {
  return ctx.http
    .post(`/webhooks/gateway?type=${type}`)
    .set('content-type', 'application/json')
    .send(JSON.stringify(body));
}

function postForm(body: Record<string, string>, type = 'invoice') {
  return ctx.http
    .post(`/webhooks/gateway?type=${type}`)
    .set('content-type', 'application/x-www-form-urlencoded')
    .send(new URLSearchParams(body).toString());
}

describe('gateway notifications from the sandbox', () => {
  it('a successful payment moves the invoice to succeeded', async () => {
    const inv = await invoice();
    await payerActs(inv, 'pay');
    expect(
      await waitFor(
        () => statusOf(inv.shopOrderId),
        (s) => s === 'succeeded',
      ),
    ).toBe('succeeded');
    const r = await row(inv.shopOrderId);
    expect(String(r.payment_id)).toBe(String(inv.gatewayId));
    expect(await eventsOf(inv.shopOrderId)).toEqual([
      { from_status: 'awaiting_payer', to_status: 'succeeded', cause: 'notification' },
    ]);
  });

  it('a declined payment moves the invoice to rejected', async () => {
    const inv = await invoice();
    await payerActs(inv, 'decline');
    expect(
      await waitFor(
        () => statusOf(inv.shopOrderId),
        (s) => s === 'rejected',
      ),
    ).toBe('rejected');
  });

  it('a hold moves a two-step invoice to held', async () => {
    const inv = await invoice({ twoStep: true });
    await payerActs(inv, 'pay');
    expect(
      await waitFor(
        () => statusOf(inv.shopOrderId),
        (s) => s === 'held',
      ),
    ).toBe('held');
  });

  it('the form-encoded variant is verified and applied', async () => {
    await sandboxSettings({ notifyFormat: 'form' });
    try {
      const inv = await invoice();
      await payerActs(inv, 'pay');
      expect(
        await waitFor(
          () => statusOf(inv.shopOrderId),
          (s) => s === 'succeeded',
        ),
      ).toBe('succeeded');
      const n = await db.query(
        `SELECT content_type, status FROM notifications WHERE shop_order_id = $1`,
        [inv.shopOrderId],
      );
      expect(n.rows).toEqual([
        {
          content_type: expect.stringContaining('application/x-www-form-urlencoded'),
          status: 'applied',
        },
      ]);
    } finally {
      await sandboxSettings({ notifyFormat: 'json' });
    }
  });

  it('the sandbox sees OK replies and the inbox never stores sign', async () => {
    const inv = await invoice();
    await payerActs(inv, 'pay');
    await waitFor(
      () => statusOf(inv.shopOrderId),
      (s) => s === 'succeeded',
    );
    const res = await fetch(`${ctx.sandbox.origin}/sandbox/notifications`);
    const deliveries = (
      (await res.json()) as { data: Array<{ url: string; ok: boolean; status: number }> }
    ).data;
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries.every((d) => d.ok && d.status === 200)).toBe(true);
    const stored = await db.query(`SELECT payload FROM notifications WHERE shop_order_id = $1`, [
      inv.shopOrderId,
    ]);
    expect(stored.rows[0].payload).not.toHaveProperty('sign');
  });
});

describe('redelivery', () => {
  it('the same notification 25 times in a row and 25 times at once changes the invoice exactly once', async () => {
    const inv = await invoice({ onGateway: false });
    const body = notification(inv.shopOrderId, {
      ps_data: '{"account":"411111******1111","payment_token":"tok_recurrent_1"}',
    });
    const sequential: number[] = [];
    for (let i = 0; i < 25; i += 1) {
      const res = await postJson(body);
      expect(res.text).toBe('OK');
      sequential.push(res.status);
    }
    const concurrent = await Promise.all(Array.from({ length: 25 }, () => postJson(body)));
    const replies = [...sequential, ...concurrent.map((r) => r.status)];
    expect(replies).toEqual(Array(50).fill(200));
    expect(
      concurrent.every(
        (r) => r.text === 'OK' && r.headers['content-type'].startsWith('text/plain'),
      ),
    ).toBe(true);

    expect(await eventsOf(inv.shopOrderId)).toHaveLength(1);
    const r = await row(inv.shopOrderId);
    expect(r.status).toBe('succeeded');
    expect(String(r.payment_id)).toBe('987654');
    expect(r.payment_token).not.toContain('tok_recurrent_1');
    expect(tokenOf(ctx, r)).toBe('tok_recurrent_1');
    const n = await db.query(
      `SELECT status, delivery_count FROM notifications WHERE shop_order_id = $1`,
      [inv.shopOrderId],
    );
    expect(n.rows).toEqual([{ status: 'applied', delivery_count: 50 }]);
  });

  it('the same notification concurrently while the invoice is fresh: exactly one event', async () => {
    const inv = await invoice({ onGateway: false });
    const body = notification(inv.shopOrderId);
    const replies = await Promise.all(Array.from({ length: 25 }, () => postJson(body)));
    expect(replies.map((r) => r.status)).toEqual(Array(25).fill(200));
    expect(await eventsOf(inv.shopOrderId)).toHaveLength(1);
  });
});

describe('forged or unreadable input changes nothing', () => {
  it('one altered field → 401, no change', async () => {
    const inv = await invoice({ onGateway: false });
    const body = { ...notification(inv.shopOrderId), shop_amount: '1.00' };
    const res = await postJson(body);
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(await statusOf(inv.shopOrderId)).toBe('awaiting_payer');
    expect(await eventsOf(inv.shopOrderId)).toHaveLength(0);
  });

  it('a wrong signature → 401, no change; kept unverified for operators', async () => {
    const inv = await invoice({ onGateway: false });
    const body = { ...notification(inv.shopOrderId), sign: 'a'.repeat(64) };
    expect((await postJson(body)).status).toBe(401);
    expect((await postForm(body)).status).toBe(401);
    expect(await statusOf(inv.shopOrderId)).toBe('awaiting_payer');
    const n = await db.query(
      `SELECT verified, status FROM notifications WHERE shop_order_id = $1`,
      [inv.shopOrderId],
    );
    expect(n.rows.length).toBeGreaterThan(0);
    expect(
      n.rows.every(
        (x: { verified: boolean; status: string }) => !x.verified && x.status === 'rejected',
      ),
    ).toBe(true);
    // The genuine notification still applies afterwards.
    expect((await postJson(notification(inv.shopOrderId))).status).toBe(200);
    expect(await statusOf(inv.shopOrderId)).toBe('succeeded');
  });

  it('a source address not on NOTIFY_ALLOWED_IPS → 403, nothing stored', async () => {
    const other = await startTestApp({
      databaseUrl: ctx.databaseUrl,
      sandbox: ctx.sandbox,
      env: { NOTIFY_ALLOWED_IPS: '35.198.100.222,35.198.175.25' },
    });
    try {
      const inv = await invoice({ onGateway: false });
      const res = await other.http
        .post('/webhooks/gateway?type=invoice')
        .set('content-type', 'application/json')
        .send(JSON.stringify(notification(inv.shopOrderId)));
      expect(res.status).toBe(403);
      expect(await statusOf(inv.shopOrderId)).toBe('awaiting_payer');
      const n = await db.query(`SELECT 1 FROM notifications WHERE shop_order_id = $1`, [
        inv.shopOrderId,
      ]);
      expect(n.rows).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  it('a missing signature → 401', async () => {
    const inv = await invoice({ onGateway: false });
    const { sign: _sign, ...unsigned } = notification(inv.shopOrderId);
    expect((await postJson(unsigned)).status).toBe(401);
    expect(await statusOf(inv.shopOrderId)).toBe('awaiting_payer');
  });

  it('an unparsable body → 400, an oversize body → 413, another media type → 400', async () => {
    const bad = await ctx.http
      .post('/webhooks/gateway?type=invoice')
      .set('content-type', 'application/json')
      .send('{"shop_id":');
    expect(bad.status).toBe(400);
    const big = await ctx.http
      .post('/webhooks/gateway?type=invoice')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ pad: 'x'.repeat(70 * 1024) }));
    expect(big.status).toBe(413);
    const text = await ctx.http
      .post('/webhooks/gateway?type=invoice')
      .set('content-type', 'text/plain')
      .send('shop_id=1');
    expect(text.status).toBe(400);
  });

  it('counts refusals in the metrics', async () => {
    const res = await ctx.http.get('/metrics');
    expect(res.text).toMatch(
      /gateway_notifications_total\{type="invoice",result="bad_signature"\} [1-9]/,
    );
    // Refused by the body parser before the webhook ran, counted all the same.
    expect(res.text).toMatch(
      /gateway_notifications_total\{type="other",result="bad_request"\} [1-9]/,
    );
    expect(res.text).toMatch(
      /gateway_notifications_total\{type="other",result="too_large"\} [1-9]/,
    );
    expect(res.text).toMatch(
      /gateway_notifications_total\{type="invoice",result="applied"\} [1-9]/,
    );
  });
});

describe('two gateway shops: the shop_id picks the secret', () => {
  async function inbox(
    shopOrderId: string,
  ): Promise<
    Array<{ verified: boolean; status: string; outcome: string; shop_id: number | null }>
  > {
    const n = await db.query(
      `SELECT verified, status, outcome, shop_id FROM notifications WHERE shop_order_id = $1`,
      [shopOrderId],
    );
    return n.rows as Array<{
      verified: boolean;
      status: string;
      outcome: string;
      shop_id: number | null;
    }>;
  }

  it('a payment-shop notification verified with the payment shop secret applies, and records its shop', async () => {
    const inv = await invoice({ onGateway: false });
    expect((await postJson(notification(inv.shopOrderId))).status).toBe(200);
    expect(await statusOf(inv.shopOrderId)).toBe('succeeded');
    expect(await inbox(inv.shopOrderId)).toEqual([
      expect.objectContaining({ verified: true, status: 'applied', shop_id: SHOP_ID }),
    ]);
  });

  it("the payment shop's invoice signed with the agent shop's secret → 401, refused, nothing changed", async () => {
    const inv = await invoice({ onGateway: false });
    const forged = notification(inv.shopOrderId, {}, PAYOUT_SECRET);
    expect((await postJson(forged)).status).toBe(401);
    expect((await postForm(forged)).status).toBe(401);
    expect(await statusOf(inv.shopOrderId)).toBe('awaiting_payer');
    const rows = await inbox(inv.shopOrderId);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r).toMatchObject({ verified: false, status: 'rejected' });
    expect(await eventsOf(inv.shopOrderId)).toEqual([]);
  });

  it('a notification naming a shop that is not configured → 403, stored as refused, nothing changed', async () => {
    const inv = await invoice({ onGateway: false });
    // Signed "correctly" with a secret we know: the shop it names is still not ours.
    for (const secret of [SECRET, PAYOUT_SECRET, 'whatever-secret']) {
      const res = await postJson(notification(inv.shopOrderId, { shop_id: '999' }, secret));
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(JSON.stringify(res.body)).not.toContain(secret);
    }
    const noShop = notification(inv.shopOrderId);
    delete noShop.shop_id;
    expect((await postJson(noShop)).status).toBe(403);
    expect(await statusOf(inv.shopOrderId)).toBe('awaiting_payer');
    const rows = await inbox(inv.shopOrderId);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r).toMatchObject({ verified: false, status: 'rejected' });
      expect(r.outcome).toContain('not a configured shop');
    }
    expect(rows.some((r) => r.shop_id === 999)).toBe(true);
    expect(await eventsOf(inv.shopOrderId)).toEqual([]);
  });

  it('a refund notification signed by the agent shop for our refund changes nothing', async () => {
    const res = await postJson(
      notification(
        `ord-${randomUUID()}`,
        { shop_id: String(PAYOUT_SHOP_ID), shop_refund_id: 'r-1', status: 'SUCCESS' },
        PAYOUT_SECRET,
      ),
      'refund',
    );
    expect(res.status).toBe(200);
    const n = await db.query(
      `SELECT status, verified FROM notifications WHERE shop_refund_id = 'r-1'`,
    );
    expect(n.rows).toEqual([{ status: 'rejected', verified: true }]);
  });
});

describe('checks before applying', () => {
  it('#13 case 3: a notification contradicting a final invoice changes no money state and raises attention', async () => {
    const inv = await invoice({ onGateway: false });
    expect((await postJson(notification(inv.shopOrderId))).status).toBe(200);
    const late = notification(inv.shopOrderId, {
      status: 'rejected',
      updated: '2026-01-01T10:06:00+03:00',
    });
    const res = await postJson(late);
    expect(res.status).toBe(200);
    expect(res.text).toBe('OK');
    expect(await statusOf(inv.shopOrderId)).toBe('succeeded');
    const events = await eventsOf(inv.shopOrderId);
    // The status change, then the attention entry (status unchanged).
    expect(events.map((e) => e.to_status)).toEqual(['succeeded', 'succeeded']);
    const n = await db.query(
      `SELECT status, outcome FROM notifications WHERE shop_order_id = $1 AND payload->>'status' = 'rejected'`,
      [inv.shopOrderId],
    );
    expect(n.rows[0].status).toBe('stale');
    expect(n.rows[0].outcome).toContain('needs attention');
    const flagged = await db.query(
      `SELECT needs_attention, attention_reason FROM invoices WHERE shop_order_id = $1`,
      [inv.shopOrderId],
    );
    expect(flagged.rows[0].needs_attention).toBe(true);
    expect(flagged.rows[0].attention_reason).toMatch(/^contradiction/);
    // A repeat of the same contradiction raises nothing new.
    const again = notification(inv.shopOrderId, {
      status: 'rejected',
      updated: '2026-01-01T10:07:00+03:00',
    });
    expect((await postJson(again)).status).toBe(200);
    expect(await eventsOf(inv.shopOrderId)).toHaveLength(2);
  });

  it('an out-of-order "waiting" after "hold" does not move the invoice back', async () => {
    const inv = await invoice({ onGateway: false, twoStep: true });
    expect((await postJson(notification(inv.shopOrderId, { status: 'hold' }))).status).toBe(200);
    expect(
      (
        await postJson(
          notification(inv.shopOrderId, {
            status: 'waiting',
            updated: '2026-01-01T10:01:00+03:00',
          }),
        )
      ).status,
    ).toBe(200);
    expect(await statusOf(inv.shopOrderId)).toBe('held');
  });

  it.each([
    ['amount', { shop_amount: '100.01' }, SECRET],
    ['currency', { shop_currency: '840' }, SECRET],
    ['shop', { shop_id: String(PAYOUT_SHOP_ID) }, PAYOUT_SECRET],
  ])('a %s mismatch is stored as rejected and changes nothing', async (_what, override, secret) => {
    const inv = await invoice({ onGateway: false });
    const res = await postJson(notification(inv.shopOrderId, override, secret));
    expect(res.status).toBe(200);
    expect(await statusOf(inv.shopOrderId)).toBe('awaiting_payer');
    const n = await db.query(`SELECT status FROM notifications WHERE shop_order_id = $1`, [
      inv.shopOrderId,
    ]);
    expect(n.rows).toEqual([{ status: 'rejected' }]);
  });

  it('an amount with another scale but the same value matches', async () => {
    const inv = await invoice({ onGateway: false, amount: '100.10' });
    expect((await postJson(notification(inv.shopOrderId, { shop_amount: '100.1' }))).status).toBe(
      200,
    );
    expect(await statusOf(inv.shopOrderId)).toBe('succeeded');
  });

  it('an unknown shop_order_id is stored as rejected', async () => {
    const res = await postJson(notification(`nope-${randomUUID()}`));
    expect(res.status).toBe(200);
  });

  it('unknown types and unknown fields are tolerated', async () => {
    const res = await postJson(notification('whatever', { brand_new_field: 'x' }), 'chargeback');
    expect(res.status).toBe(200);
    expect(res.text).toBe('OK');
    const n = await db.query(`SELECT status FROM notifications WHERE type = 'chargeback'`);
    expect(n.rows).toEqual([{ status: 'ignored' }]);
    const inv = await invoice({ onGateway: false });
    expect((await postJson(notification(inv.shopOrderId, { brand_new_field: 'y' }))).status).toBe(
      200,
    );
    expect(await statusOf(inv.shopOrderId)).toBe('succeeded');
  });
});

describe('admin views', () => {
  it('lists notifications with filters and cursor pagination, and replays a rejected one', async () => {
    const inv = await invoice({ onGateway: false });
    // Arrives for an order this instance does not have yet (e.g. restored later): rejected.
    await db.query(`UPDATE invoices SET shop_order_id = $2 WHERE shop_order_id = $1`, [
      inv.shopOrderId,
      `${inv.shopOrderId}-x`,
    ]);
    expect((await postJson(notification(inv.shopOrderId))).status).toBe(200);
    await db.query(`UPDATE invoices SET shop_order_id = $1 WHERE shop_order_id = $2`, [
      inv.shopOrderId,
      `${inv.shopOrderId}-x`,
    ]);

    const list = await ctx.http
      .get(`/api/v1/admin/notifications?shopOrderId=${inv.shopOrderId}`)
      .set(admin());
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    const item = list.body.items[0];
    expect(item).toMatchObject({
      type: 'invoice',
      verified: true,
      status: 'rejected',
      shopOrderId: inv.shopOrderId,
    });
    expect(item.fields).not.toHaveProperty('sign');

    const replay = await ctx.http
      .post(`/api/v1/admin/notifications/${item.id}/replay`)
      .set(admin());
    expect(replay.status).toBe(200);
    expect(replay.body.status).toBe('applied');
    expect(await statusOf(inv.shopOrderId)).toBe('succeeded');
    const again = await ctx.http.post(`/api/v1/admin/notifications/${item.id}/replay`).set(admin());
    expect(again.body.status).toBe('applied');
    expect(await eventsOf(inv.shopOrderId)).toHaveLength(1);

    const page1 = await ctx.http
      .get('/api/v1/admin/notifications?limit=2&type=invoice')
      .set(admin());
    expect(page1.body.items).toHaveLength(2);
    const page2 = await ctx.http
      .get(`/api/v1/admin/notifications?limit=2&type=invoice&cursor=${page1.body.nextCursor}`)
      .set(admin());
    expect(page2.body.items).toHaveLength(2);
    const ids = [...page1.body.items, ...page2.body.items].map((x: { id: string }) => x.id);
    expect(new Set(ids).size).toBe(4);

    const unverified = await ctx.http
      .get('/api/v1/admin/notifications?verified=false')
      .set(admin());
    expect(unverified.body.items.every((x: { verified: boolean }) => !x.verified)).toBe(true);
    const applied = await ctx.http.get('/api/v1/admin/notifications?status=applied').set(admin());
    expect(applied.body.items.every((x: { status: string }) => x.status === 'applied')).toBe(true);
  });

  it('replaying an unknown notification is a 404; the admin routes need the admin role', async () => {
    expect(
      (await ctx.http.post(`/api/v1/admin/notifications/${randomUUID()}/replay`).set(admin()))
        .status,
    ).toBe(404);
    expect((await ctx.http.get('/api/v1/admin/notifications')).status).toBe(401);
  });

  it('lists the audit trail by entity, newest first, with a cursor', async () => {
    const inv = await invoice({ onGateway: false, twoStep: true });
    await postJson(notification(inv.shopOrderId, { status: 'hold' }));
    await postJson(
      notification(inv.shopOrderId, { status: 'success', updated: '2026-01-01T11:00:00+03:00' }),
    );
    const res = await ctx.http
      .get(`/api/v1/admin/events?entityType=invoice&entityId=${inv.shopOrderId}&limit=1`)
      .set(admin());
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([
      expect.objectContaining({ fromStatus: 'held', toStatus: 'succeeded', cause: 'notification' }),
    ]);
    const next = await ctx.http
      .get(
        `/api/v1/admin/events?entityType=invoice&entityId=${inv.shopOrderId}&limit=1&cursor=${res.body.nextCursor}`,
      )
      .set(admin());
    expect(next.body.items).toEqual([
      expect.objectContaining({ fromStatus: 'awaiting_payer', toStatus: 'held' }),
    ]);
    expect(next.body.nextCursor).toBeNull();
  });
});

describe('storage failure', () => {
  it('answers 5xx (so the gateway retries) when the inbox cannot be written, and applies on the retry', async () => {
    const inv = await invoice({ onGateway: false });
    const body = notification(inv.shopOrderId);
    await db.query(`ALTER TABLE notifications RENAME TO notifications_away`);
    try {
      const res = await postJson(body);
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(res.text).not.toContain('SELECT');
    } finally {
      await db.query(`ALTER TABLE notifications_away RENAME TO notifications`);
    }
    expect(await statusOf(inv.shopOrderId)).toBe('awaiting_payer');
    expect((await postJson(body)).status).toBe(200);
    expect(await statusOf(inv.shopOrderId)).toBe('succeeded');
  });
});
