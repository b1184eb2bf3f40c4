// Over 500 lines on purpose: one app and database, started once in its beforeAll, serve all its
// tests; a split would start another.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { KeyRing } from '../../src/common/key-ring';
import { rekeyNotifications } from '../../src/notifications/notification-rekey';
import { GatewayService } from '../../src/gateway';
import {
  admin,
  PAYOUT_SECRET,
  PAYOUT_SHOP_ID,
  SECRET,
  SHOP_ID,
  startTestApp,
  TestContext,
  tokenOf,
} from '../support/app';
import { paymentNotification } from '../support/notifications';
import { PAYMENT } from '../support/payways';

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

/** A payment notification as the gateway sends it, signed (test/support/notifications.ts). */
const notification = paymentNotification;

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

// Empty values are outside the signature but were inside the inbox key, so `"zz":""`
// made a new verified row that was applied again.
describe('one key for a notification: what the signature covers', () => {
  function postRaw(text: string, contentType: string, type = 'invoice') {
    return ctx.http.post(`/webhooks/gateway?type=${type}`).set('content-type', contentType).send(text);
  }

  async function inbox(shopOrderId: string): Promise<Array<{ status: string; delivery_count: number }>> {
    const r = await db.query(
      `SELECT status, delivery_count FROM notifications WHERE shop_order_id = $1 AND verified ORDER BY received_at`,
      [shopOrderId],
    );
    return r.rows as Array<{ status: string; delivery_count: number }>;
  }

  it('the same signed values with empty, null or unsigned extras, in JSON or form spelling, are one notification applied once', async () => {
    const inv = await invoice({ onGateway: false });
    const body = notification(inv.shopOrderId);
    expect((await postJson(body)).text).toBe('OK');
    const json = JSON.stringify(body);
    const psData = body.ps_data;
    const cut = psData.indexOf(':');
    const copies: Array<[string, () => ReturnType<typeof postJson>]> = [
      ['JSON + "zz":""', () => postJson({ ...body, zz: '' })],
      ['JSON + "zz":null', () => postRaw(JSON.stringify({ ...body, zz: null }), 'application/json')],
      ['JSON + several empty and null fields', () => postRaw(JSON.stringify({ a: '', ...body, b: null, zz: '', ' ': '' }), 'application/json')],
      ['form spelling', () => postForm(body)],
      ['form + an empty field', () => postForm({ ...body, zz: '' })],
      ['form + an empty field first', () => postRaw(`zz=&${new URLSearchParams(body).toString()}&yy=`, 'application/x-www-form-urlencoded')],
      [
        'JSON numbers for the same digits',
        () => postRaw(json.replace(`"shop_id":"${SHOP_ID}"`, `"shop_id":${SHOP_ID}`).replace('"shop_amount":"100.00"', '"shop_amount":100.00'), 'application/json'),
      ],
      [
        'ps_data re-split at a ":" (same signed text)',
        () => postJson({ ...body, ps_data: psData.slice(0, cut), ps_data_: psData.slice(cut + 1) }),
      ],
    ];
    for (const [name, send] of copies) {
      const res = await send();
      expect([name, res.status, res.text]).toEqual([name, 200, 'OK']);
    }
    expect(await inbox(inv.shopOrderId)).toEqual([{ status: 'applied', delivery_count: 1 + copies.length }]);
    expect(await eventsOf(inv.shopOrderId)).toHaveLength(1);
    expect(await statusOf(inv.shopOrderId)).toBe('succeeded');
    // A changed signed value is another notification (here a forgery: refused, nothing stored as verified).
    expect((await postJson({ ...body, shop_amount: '100.01' })).status).toBe(401);
    expect(await inbox(inv.shopOrderId)).toHaveLength(1);
    // The kind is part of what was received: the same body as a refund does not fit it (400).
    expect((await postJson(body, 'refund')).status).toBe(400);
    expect(await inbox(inv.shopOrderId)).toEqual([{ status: 'applied', delivery_count: 1 + copies.length }]);
  });

  it('an older ps_data replayed with an added empty field does not overwrite the stored payment token', async () => {
    const inv = await invoice({ onGateway: false });
    const older = notification(inv.shopOrderId, {
      ps_data: '{"account":"411111******1111","payment_token":"tok_older"}',
      updated: '2026-01-01T10:05:00+03:00',
    });
    const newer = notification(inv.shopOrderId, {
      ps_data: '{"account":"411111******1111","payment_token":"tok_newer"}',
      updated: '2026-01-01T10:06:00+03:00',
    });
    expect((await postJson(older)).status).toBe(200);
    expect((await postJson(newer)).status).toBe(200);
    expect(tokenOf(ctx, await row(inv.shopOrderId))).toBe('tok_newer');
    for (const replay of [
      () => postJson({ ...older, zz: '' }),
      () => postRaw(JSON.stringify({ ...older, zz: null }), 'application/json'),
      () => postForm({ ...older, zz: '' }),
    ]) {
      expect((await replay()).text).toBe('OK');
      expect(tokenOf(ctx, await row(inv.shopOrderId))).toBe('tok_newer');
    }
    expect((await inbox(inv.shopOrderId)).map((n) => n.delivery_count)).toEqual([4, 1]);
  });

  it('rows keyed by the old recipe are re-keyed at start-up: their redeliveries, with added empty fields, still find them', async () => {
    const inv = await invoice({ onGateway: false });
    const body = notification(inv.shopOrderId, { description: '', payment_token_hint: '' });
    expect((await postJson(body)).status).toBe(200);
    // As the old code left it: key over every field (empty ones too) and the type, version 1;
    // and the same notification a second time under another key, stored by a `"zz":""` replay.
    const oldKey = (fields: Record<string, string>): string => {
      const sorted = Object.keys(fields)
        .filter((k) => k !== 'sign')
        .sort()
        .map((k) => [k, fields[k]]);
      return createHash('sha256').update(JSON.stringify(['v', 'invoice', sorted]), 'utf8').digest('hex');
    };
    const first = (await db.query(`SELECT id FROM notifications WHERE shop_order_id = $1`, [inv.shopOrderId])).rows[0].id as string;
    await db.query(`UPDATE notifications SET content_key = $2, key_version = 1 WHERE id = $1`, [first, oldKey(body)]);
    await db.query(
      `INSERT INTO notifications (type, content_key, payload, content_type, verified, status, shop_order_id, received_at)
       SELECT type, $2, payload || jsonb_build_object('zz', '', 'ps_data', $3::text), content_type, true, 'stale', shop_order_id, received_at + interval '1 second'
         FROM notifications WHERE id = $1`,
      // Sealed values are bound to their row: the copy holds ps_data as rows before sealing did.
      [first, oldKey({ ...body, zz: '' }), body.ps_data],
    );
    const report = await rekeyNotifications(ctx.service.app.get(DataSource), ctx.service.app.get(KeyRing));
    expect(report).toMatchObject({ failed: [] });
    expect(report.rekeyed).toBeGreaterThanOrEqual(1);
    expect(report.superseded).toBeGreaterThanOrEqual(1);
    const rows = await db.query(`SELECT id, key_version FROM notifications WHERE shop_order_id = $1 ORDER BY received_at`, [inv.shopOrderId]);
    expect(rows.rows.map((r: { key_version: number }) => r.key_version)).toEqual([3, 3]);
    for (const copy of [body, { ...body, zz: '' }, { ...body, yy: '' }]) {
      expect((await postJson(copy)).text).toBe('OK');
    }
    expect(await inbox(inv.shopOrderId)).toEqual([
      { status: 'applied', delivery_count: 4 },
      { status: 'stale', delivery_count: 1 },
    ]);
    expect(await eventsOf(inv.shopOrderId)).toHaveLength(1);
    // Nothing left to do at the next start.
    expect(await rekeyNotifications(ctx.service.app.get(DataSource), ctx.service.app.get(KeyRing))).toEqual({ rekeyed: 0, superseded: 0, failed: [] });
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
  it('a notification contradicting a final invoice changes no money state and raises attention', async () => {
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

  it('an unknown type is refused and stores nothing; unknown fields are tolerated', async () => {
    const res = await postJson(notification('whatever', { brand_new_field: 'x' }), 'chargeback');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ errors: [{ field: 'type', message: 'must be invoice or refund' }] });
    const n = await db.query(`SELECT status FROM notifications WHERE type = 'chargeback'`);
    expect(n.rows).toEqual([]);
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
