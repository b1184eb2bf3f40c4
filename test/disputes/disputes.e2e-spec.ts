// Over 500 lines on purpose: one app and database, started once in its beforeAll, serve all its
// tests; a split would start another.
import { Client } from 'pg';
import { createHash, randomUUID } from 'node:crypto';
import { admin, ADMIN_KEY, auth, SHOP_KEY, startTestApp, TestContext } from '../support/app';
import { rawRequest } from '../support/hostile';
import { PAYMENT } from '../support/payways';
import { eventually } from '../support/webhook-receiver';

const PROBLEM = 'https://problems.piastrix-orchestrator.dev/';
const keyId = (k: string): string => createHash('sha256').update(k).digest('hex').slice(0, 12);

/** A dispute's create body, valid unless overridden. */
const body = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  amount: '30.00',
  reason: 'goods not received',
  reportedAt: '2026-01-15T09:30:00Z',
  respondBy: '2026-01-29T23:59:59Z',
  note: 'reported by the gateway manager',
  ...over,
});

describe('disputes and chargebacks (sandbox + PostgreSQL)', () => {
  let ctx: TestContext;
  let db: Client;

  beforeAll(async () => {
    ctx = await startTestApp();
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  // ------------------------------------------------------------ helpers


  /** Builder: an invoice paid through the service's own API (the sandbox completes it). */
  async function paidInvoice(amount = '100.00'): Promise<string> {
    const shopOrderId = `order-${randomUUID()}`;
    const created = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId, amount, currency: 643, payway: PAYMENT.cardSuccess });
    expect(created.status).toBe(201);
    await eventually(async () => {
      const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      expect(got.body.status).toBe('succeeded');
    });
    return shopOrderId;
  }

  function dispute(shopOrderId: string, b: Record<string, unknown>, headers = admin()) {
    return ctx.http.post(`/api/v1/admin/invoices/${shopOrderId}/disputes`).set(headers).send(b);
  }

  function resolve(id: string, b: Record<string, unknown>) {
    return ctx.http.post(`/api/v1/admin/disputes/${id}/resolve`).set(admin()).send(b);
  }

  function refund(shopOrderId: string, amount: string, shopRefundId = `refund-${randomUUID()}`) {
    return ctx.http
      .post(`/api/v1/invoices/${shopOrderId}/refunds`)
      .set(auth())
      .send({ shopRefundId, amount });
  }

  async function invoice(shopOrderId: string): Promise<Record<string, unknown>> {
    return (await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth()).expect(200)).body as Record<
      string,
      unknown
    >;
  }

  async function count(sql: string, params: unknown[] = []): Promise<number> {
    return ((await db.query(sql, params)).rows[0] as { n: number }).n;
  }

  async function disputeRows(shopOrderId: string): Promise<number> {
    return count(`SELECT count(*)::int AS n FROM disputes WHERE shop_order_id = $1`, [shopOrderId]);
  }

  async function entriesOf(publicId: string): Promise<Array<{ kind: string; legs: string }>> {
    return (
      await db.query(
        `SELECT kind, (SELECT string_agg(l.account || ' ' || l.amount::text, ', ' ORDER BY l.account) FROM unnest(e.legs) l) AS legs
           FROM ledger_entries e WHERE object_type = 'dispute' AND object_id = $1 ORDER BY id`,
        [publicId],
      )
    ).rows as Array<{ kind: string; legs: string }>;
  }

  async function ledgerCheck(): Promise<unknown[]> {
    const res = await ctx.http.get('/api/v1/admin/ledger/check').set(admin()).expect(200);
    return res.body.mismatches as unknown[];
  }

  // ------------------------------------------------------------ create

  it('records a dispute of a paid invoice: 201 with its body, its amount leaves the refundable room, dispute.opened, audited', async () => {
    const shopOrderId = await paidInvoice();
    const res = await dispute(shopOrderId, body({ gatewayReference: `CB-${randomUUID()}` }));
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(res.body).toMatchObject({
      invoice: shopOrderId,
      amount: '30.00',
      currency: 643,
      currencyCode: 'RUB',
      reason: 'goods not received',
      status: 'open',
      reportedAt: '2026-01-15T09:30:00.000Z',
      respondBy: '2026-01-29T23:59:59.000Z',
      resolvedAt: null,
      notes: [{ action: 'opened', keyId: keyId(ADMIN_KEY), note: 'reported by the gateway manager' }],
    });
    expect(res.body.id).toMatch(/^dp_[A-Za-z0-9_-]{24}$/);
    const inv = await invoice(shopOrderId);
    expect([inv.disputedAmount, inv.refundableAmount]).toEqual(['30.00', '70.00']);

    // The shop's events: the dispute's own, and the invoice's refund sums.
    const feed = await ctx.http
      .get(`/api/v1/events?objectType=dispute&objectId=${res.body.id}`)
      .set(auth())
      .expect(200);
    expect(feed.body.items.map((e: { type: string }) => e.type)).toEqual(['dispute.opened']);
    expect(feed.body.items[0].data).toEqual(res.body);
    expect(feed.body.items[0].keyId).toBe(keyId(ADMIN_KEY));
    const updates = await db.query(
      `SELECT data->>'disputedAmount' AS d, data->>'refundableAmount' AS r FROM events
        WHERE entity_type = 'invoice' AND entity_id = $1 AND type = 'invoice.refund_updated'`,
      [shopOrderId],
    );
    expect(updates.rows).toEqual([{ d: '30.00', r: '70.00' }]);

    // The audit trail names the admin's key, never the key.
    const audit = await ctx.http
      .get(`/api/v1/admin/events?entityType=dispute&entityId=${res.body.id}`)
      .set(admin())
      .expect(200);
    expect(audit.body.items).toHaveLength(1);
    expect(audit.body.items[0]).toMatchObject({ fromStatus: null, toStatus: 'open' });
    const raw = await db.query(`SELECT key_id, cause FROM events WHERE entity_type = 'dispute' AND entity_id = $1`, [
      res.body.id,
    ]);
    expect(raw.rows).toEqual([{ key_id: keyId(ADMIN_KEY), cause: 'admin' }]);
    expect(JSON.stringify(audit.body)).not.toContain(ADMIN_KEY);

    // Listed, paged like the other admin lists.
    const listed = await ctx.http
      .get(`/api/v1/admin/disputes?status=open&shopOrderId=${shopOrderId}`)
      .set(admin())
      .expect(200);
    expect(listed.body).toEqual({ items: [res.body], nextCursor: null });
    expect((await ctx.http.get('/api/v1/admin/disputes?status=closed').set(admin())).status).toBe(400);
    expect(await ledgerCheck()).toEqual([]);
  });

  it('bad input is a 400 naming the field, nothing written, nothing sent', async () => {
    const shopOrderId = await paidInvoice();
    const cases: Array<[Record<string, unknown>, string]> = [
      [body({ amount: 30 }), 'amount'],
      [body({ amount: '30.001' }), 'amount'],
      [body({ amount: '0.00' }), 'amount'],
      [body({ amount: '-5.00' }), 'amount'],
      [body({ amount: '1e2' }), 'amount'],
      [body({ amount: '70.01', reason: 'x' }), 'amount'],
      [body({ amount: undefined }), 'amount'],
      [body({ reason: '' }), 'reason'],
      [body({ reason: 'x'.repeat(501) }), 'reason'],
      [body({ reason: 'card 4111 1111 1111 1111 disputed' }), 'reason'],
      [body({ note: undefined }), 'note'],
      [body({ note: 'pan 4111-1111-1111-1111' }), 'note'],
      [body({ reportedAt: '2026-01-15T09:30:00' }), 'reportedAt'],
      [body({ reportedAt: '2026-01-15' }), 'reportedAt'],
      [body({ reportedAt: '2999-01-15T09:30:00Z' }), 'reportedAt'],
      [body({ respondBy: '2026-01-01T00:00:00Z' }), 'respondBy'],
      [body({ respondBy: '20260129T235959Z' }), 'respondBy'],
      [body({ gatewayReference: 'has space' }), 'gatewayReference'],
      [body({ gatewayReference: '' }), 'gatewayReference'],
      [body({ status: 'lost' }), 'status'],
      [body({ currency: 840 }), 'currency'],
    ];
    // What is left to dispute: 100 paid − 30 refunded.
    expect((await refund(shopOrderId, '30.00')).status).toBe(201);
    for (const [b, field] of cases) {
      const res = await dispute(shopOrderId, b);
      expect([JSON.stringify(b), res.status]).toEqual([JSON.stringify(b), 400]);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      // The card's digits are never echoed (the request id, a random UUID, may hold "4111").
      const { requestId: _requestId, ...shown } = res.body as Record<string, unknown>;
      expect(JSON.stringify(shown)).not.toContain('4111');
    }
    const over = await dispute(shopOrderId, body({ amount: '70.01' }));
    expect(over.body.errors[0].message).toContain('70.00');
    // An Idempotency-Key that is not one.
    const badKey = await dispute(shopOrderId, body(), { ...admin(), 'Idempotency-Key': 'has space' });
    expect(badKey.status).toBe(400);
    expect(badKey.body.errors[0].field).toBe('Idempotency-Key');
    // Not JSON.
    const form = await ctx.http
      .post(`/api/v1/admin/invoices/${shopOrderId}/disputes`)
      .set(admin())
      .type('form')
      .send('amount=1.00');
    expect(form.status).toBe(415);
    expect(await disputeRows(shopOrderId)).toBe(0);
    const inv = await invoice(shopOrderId);
    expect([inv.disputedAmount, inv.refundableAmount]).toEqual(['0.00', '70.00']);
    expect(
      await count(`SELECT count(*)::int AS n FROM events WHERE entity_type = 'dispute' AND details->>'shopOrderId' = $1`, [shopOrderId]),
    ).toBe(0);
    expect(
      await count(`SELECT count(*)::int AS n FROM events WHERE entity_id = $1 AND details ? 'disputedAmount'`, [shopOrderId]),
    ).toBe(0);
  });

  it('only a succeeded invoice can be disputed; an unknown invoice is 404', async () => {
    const pending = `order-${randomUUID()}`;
    const created = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId: pending, amount: '50.00', currency: 643, payway: PAYMENT.cardSuccess, twoStep: true });
    expect(created.status).toBe(201);
    const res = await dispute(pending, body());
    expect(res.status).toBe(409);
    expect(res.body.type).toBe(PROBLEM + 'invalid-state');
    expect(await disputeRows(pending)).toBe(0);
    const missing = await dispute(`order-${randomUUID()}`, body());
    expect(missing.status).toBe(404);
  });

  it('needs the admin key: none is 401, a shop key 403, however the path is spelled', async () => {
    const shopOrderId = await paidInvoice();
    expect((await ctx.http.post(`/api/v1/admin/invoices/${shopOrderId}/disputes`).send(body())).status).toBe(401);
    expect((await dispute(shopOrderId, body(), auth())).status).toBe(403);
    expect((await ctx.http.get('/api/v1/admin/disputes').set(auth())).status).toBe(403);
    expect((await ctx.http.post('/api/v1/admin/disputes/dp_x/resolve').set(auth()).send({ outcome: 'won', note: 'x' })).status).toBe(403);
    const path = `/api/v1/admin/invoices/${shopOrderId}/disputes`;
    for (const target of [
      path.replace('/admin', '/ADMIN'),
      path.replace('/admin', '/Admin'),
      path.replace('/admin', '/%61dmin'),
      path.replace('/admin', '/%2561dmin'),
      path.replace('/admin/', '/admin%2F'),
      `${path}/`,
      path.replace('/admin', '//admin'),
      path.replace('/admin', '/x/../admin'),
      path.replace('/admin', '/admin;x=1'),
      `${ctx.url}${path.replace('/admin', '/ADMIN')}`,
    ]) {
      for (const authorization of [`Bearer ${SHOP_KEY}`, `bearer ${ADMIN_KEY.toUpperCase()}`, `Bearer  ${SHOP_KEY}`]) {
        const res = await rawRequest(
          ctx.url,
          'POST',
          target,
          { Authorization: authorization, 'Content-Type': 'application/json' },
          JSON.stringify(body()),
        );
        expect([target, authorization, [400, 401, 403, 404].includes(res.status)]).toEqual([target, authorization, true]);
      }
    }
    expect(await disputeRows(shopOrderId)).toBe(0);
  });

  // ------------------------------------------------------------ idempotency

  it('is idempotent by Idempotency-Key and by gatewayReference: the same facts replay, others are 409 naming them', async () => {
    const shopOrderId = await paidInvoice();
    const key = { ...admin(), 'Idempotency-Key': `key-${randomUUID()}` };
    const first = await dispute(shopOrderId, body(), key);
    expect(first.status).toBe(201);
    const again = await dispute(shopOrderId, body({ amount: '30.0' }), key);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    const other = await dispute(shopOrderId, body({ amount: '31.00', note: 'another' }), key);
    expect(other.status).toBe(409);
    expect(other.body.type).toBe(PROBLEM + 'idempotency-conflict');
    expect(other.body.errors.map((e: { field: string }) => e.field)).toEqual(['amount', 'note']);

    // The gateway's reference of the chargeback names one dispute of the shop.
    const reference = `CB-${randomUUID()}`;
    const byRef = await dispute(shopOrderId, body({ amount: '10.00', gatewayReference: reference }));
    expect(byRef.status).toBe(201);
    const refAgain = await dispute(shopOrderId, body({ amount: '10.00', gatewayReference: reference }));
    expect([refAgain.status, refAgain.headers['idempotent-replayed'], refAgain.body.id]).toEqual([201, 'true', byRef.body.id]);
    const refOther = await dispute(shopOrderId, body({ amount: '11.00', gatewayReference: reference }));
    expect(refOther.status).toBe(409);
    expect(refOther.body.errors.map((e: { field: string }) => e.field)).toEqual(['amount']);
    // The same reference on another invoice of the shop is the same chargeback: a conflict.
    const elsewhere = await paidInvoice();
    const refElsewhere = await dispute(elsewhere, body({ amount: '10.00', gatewayReference: reference }));
    expect(refElsewhere.status).toBe(409);
    expect(refElsewhere.body.errors.map((e: { field: string }) => e.field)).toEqual(['shopOrderId']);

    // Concurrent repeats of one key: one dispute.
    const burstKey = { ...admin(), 'Idempotency-Key': `burst-${randomUUID()}` };
    const burst = await Promise.all(Array.from({ length: 8 }, () => dispute(shopOrderId, body({ amount: '5.00' }), burstKey)));
    expect(burst.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(new Set(burst.map((r) => r.body.id)).size).toBe(1);
    expect(await disputeRows(shopOrderId)).toBe(3);
    expect((await invoice(shopOrderId)).disputedAmount).toBe('45.00');
  });

  // ------------------------------------------------------------ the refund cap

  it('a refund never cuts into a dispute: 422 refund-exceeds-refundable naming disputedAmount; won gives the room back, lost never', async () => {
    const shopOrderId = await paidInvoice();
    const a = await dispute(shopOrderId, body({ amount: '40.00' }));
    const b = await dispute(shopOrderId, body({ amount: '20.00' }));
    expect([a.status, b.status]).toEqual([201, 201]);
    const over = await refund(shopOrderId, '40.01');
    expect(over.status).toBe(422);
    expect(over.body).toMatchObject({
      type: PROBLEM + 'refund-exceeds-refundable',
      paidAmount: '100.00',
      refundedOrPending: '0.00',
      requestedAmount: '40.01',
      disputedAmount: '60.00',
    });
    expect((await refund(shopOrderId, '40.00')).status).toBe(201);
    // Nothing left: neither a refund nor a dispute fits.
    expect((await refund(shopOrderId, '0.01')).status).toBe(422);
    expect((await dispute(shopOrderId, body({ amount: '0.01' }))).status).toBe(400);

    // Won: its 40 is refundable again.
    const won = await resolve(a.body.id, { outcome: 'won', note: 'evidence accepted by the issuer' });
    expect(won.status).toBe(200);
    expect(won.body).toMatchObject({ status: 'won', notes: [{ action: 'opened' }, { action: 'won', note: 'evidence accepted by the issuer' }] });
    expect(won.body.resolvedAt).not.toBeNull();
    expect((await invoice(shopOrderId)).refundableAmount).toBe('40.00');
    // Lost: its 20 never again.
    const lost = await resolve(b.body.id, { outcome: 'lost', note: 'issuer ruled for the cardholder' });
    expect(lost.status).toBe(200);
    const inv = await invoice(shopOrderId);
    expect([inv.disputedAmount, inv.refundableAmount]).toEqual(['20.00', '40.00']);
    expect((await refund(shopOrderId, '40.01')).body.type).toBe(PROBLEM + 'refund-exceeds-refundable');
    expect((await refund(shopOrderId, '40.00')).status).toBe(201);
    // Without disputes the refusal keeps its own type, and names disputedAmount as zero.
    const plain = await paidInvoice();
    const plainOver = await refund(plain, '100.01');
    expect(plainOver.body).toMatchObject({ type: PROBLEM + 'refund-exceeds-paid-amount', disputedAmount: '0.00' });
  });

  it('refunds and disputes at once never together exceed the paid amount (the refund cap’s lock)', async () => {
    for (let round = 0; round < 3; round++) {
      const shopOrderId = await paidInvoice();
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          i % 2 === 0 ? refund(shopOrderId, '15.00') : dispute(shopOrderId, body({ amount: '15.00' })),
        ),
      );
      const accepted = results.filter((r) => r.status === 201);
      const refused = results.filter((r) => r.status !== 201);
      // 6 × 15 = 90 fit into 100; the seventh would be 105.
      expect(accepted).toHaveLength(6);
      for (const r of refused) expect([400, 422]).toContain(r.status);
      const [sums] = (
        await db.query(
          `SELECT (SELECT COALESCE(sum(amount), 0) FROM refunds WHERE shop_order_id = $1 AND status <> 'FAILED')::text AS refunds,
                  (SELECT COALESCE(sum(amount), 0) FROM disputes WHERE shop_order_id = $1 AND status IN ('open','lost','accepted'))::text AS disputes,
                  (SELECT disputed_amount::text FROM invoices WHERE shop_order_id = $1) AS column`,
          [shopOrderId],
        )
      ).rows as Array<{ refunds: string; disputes: string; column: string }>;
      expect(Number(sums.refunds) * 100 + Number(sums.disputes) * 100).toBe(9000);
      expect(sums.column).toBe(sums.disputes);
    }
  });

  // ------------------------------------------------------------ resolve and the books

  it('lost and accepted are chargebacks posted by position; won posts nothing; the check covers disputes', async () => {
    const shopOrderId = await paidInvoice();
    const lost = (await dispute(shopOrderId, body({ amount: '30.00' }))).body as { id: string };
    const accepted = (await dispute(shopOrderId, body({ amount: '20.00' }))).body as { id: string };
    const won = (await dispute(shopOrderId, body({ amount: '10.00' }))).body as { id: string };
    expect(await entriesOf(lost.id)).toEqual([]);
    expect((await resolve(lost.id, { outcome: 'lost', note: 'lost' })).status).toBe(200);
    expect((await resolve(accepted.id, { outcome: 'accepted', note: 'not contested' })).status).toBe(200);
    expect((await resolve(won.id, { outcome: 'won', note: 'won' })).status).toBe(200);
    expect(await entriesOf(lost.id)).toEqual([{ kind: 'dispute.lost', legs: 'chargebacks 30.00, gateway_payment_shop -30.00' }]);
    expect(await entriesOf(accepted.id)).toEqual([{ kind: 'dispute.lost', legs: 'chargebacks 20.00, gateway_payment_shop -20.00' }]);
    expect(await entriesOf(won.id)).toEqual([]);
    // Through the API: the entries of a dispute by its id.
    const api = await ctx.http
      .get(`/api/v1/admin/ledger/entries?objectType=dispute&objectId=${lost.id}`)
      .set(admin())
      .expect(200);
    expect(api.body.items[0].postings).toEqual(
      expect.arrayContaining([
        { account: 'chargebacks', currency: 643, amount: '30.00' },
        { account: 'gateway_payment_shop', currency: 643, amount: '-30.00' },
      ]),
    );
    expect(await ledgerCheck()).toEqual([]);

    // Resolving again, to the same or another outcome: 409, nothing changes, nothing posted.
    for (const outcome of ['lost', 'won', 'accepted']) {
      const again = await resolve(lost.id, { outcome, note: 'again' });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ type: PROBLEM + 'invalid-state', currentStatus: 'lost' });
    }
    expect(await entriesOf(lost.id)).toHaveLength(1);
    const events = await db.query(
      `SELECT type FROM events WHERE entity_type = 'dispute' AND entity_id = ANY($1) AND type IS NOT NULL ORDER BY id`,
      [[lost.id, accepted.id, won.id]],
    );
    expect(events.rows.map((r: { type: string }) => r.type).sort()).toEqual(
      ['dispute.accepted', 'dispute.lost', 'dispute.opened', 'dispute.opened', 'dispute.opened', 'dispute.won'].sort(),
    );

    // The position check sees a dispute whose books were changed behind the rule's back.
    await db.query(`ALTER TABLE disputes DISABLE TRIGGER USER`);
    try {
      await db.query(`UPDATE disputes SET status = 'won' WHERE public_id = $1`, [accepted.id]);
    } finally {
      await db.query(`ALTER TABLE disputes ENABLE TRIGGER USER`);
    }
    expect(await ledgerCheck()).toEqual([
      {
        objectType: 'dispute',
        objectId: accepted.id,
        status: 'won',
        posted: expect.arrayContaining([{ account: 'chargebacks', currency: 643, amount: '20.00' }]),
        position: [],
      },
    ]);
    // Put back through the rule: accepted again posts nothing more and the check is empty.
    await db.query(`UPDATE disputes SET status = 'accepted' WHERE public_id = $1`, [accepted.id]);
    expect(await ledgerCheck()).toEqual([]);
    expect(await entriesOf(accepted.id)).toHaveLength(1);
  });

  it('bad resolves: unknown dispute 404, an outcome that is not one 400, concurrent resolves one 200 and the rest 409', async () => {
    const shopOrderId = await paidInvoice();
    const d = (await dispute(shopOrderId, body())).body as { id: string };
    expect((await resolve('dp_nope', { outcome: 'won', note: 'x' })).status).toBe(404);
    for (const b of [{ outcome: 'open', note: 'x' }, { outcome: 'LOST', note: 'x' }, { outcome: 'lost' }, { outcome: 'lost', note: '' }, { outcome: 'lost', note: 'x', amount: '1.00' }]) {
      const res = await resolve(d.id, b);
      expect([JSON.stringify(b), res.status]).toEqual([JSON.stringify(b), 400]);
    }
    const all = await Promise.all(
      ['lost', 'won', 'accepted', 'lost', 'won', 'accepted'].map((outcome) => resolve(d.id, { outcome, note: 'race' })),
    );
    expect(all.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    const winner = all.find((r) => r.status === 200)!.body as { status: string };
    const count = await db.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE object_type = 'dispute' AND object_id = $1`, [d.id]);
    expect((count.rows[0] as { n: number }).n).toBe(winner.status === 'won' ? 0 : 1);
    expect(await ledgerCheck()).toEqual([]);
    const typed = await db.query(`SELECT count(*)::int AS n FROM events WHERE entity_type = 'dispute' AND entity_id = $1 AND type IS NOT NULL`, [d.id]);
    expect((typed.rows[0] as { n: number }).n).toBe(2);
  });

  it('the daily report counts the day’s chargebacks, from the books', async () => {
    const shopOrderId = await paidInvoice();
    const d = (await dispute(shopOrderId, body({ amount: '12.34' }))).body as { id: string };
    const day = new Date().toISOString().slice(0, 10);
    const before = await ctx.http.get(`/api/v1/admin/reports/daily?date=${day}`).set(admin()).expect(200);
    const rub = (r: { body: { currencies: Array<{ currency: number; chargebacks: { count: number; amount: string } }> } }) =>
      r.body.currencies.find((c) => c.currency === 643)!.chargebacks;
    await resolve(d.id, { outcome: 'lost', note: 'lost' });
    const after = await ctx.http.get(`/api/v1/admin/reports/daily?date=${day}`).set(admin()).expect(200);
    expect(rub(after).count).toBe(rub(before).count + 1);
    expect(Math.round((Number(rub(after).amount) - Number(rub(before).amount)) * 100)).toBe(1234);
    const csv = await ctx.http.get(`/api/v1/admin/reports/daily?date=${day}&format=csv`).set(admin()).expect(200);
    expect(csv.text).toMatch(new RegExp(`^chargebacks,643,${rub(after).count},${rub(after).amount.replace('.', '\\.')},`, 'm'));
  });

  // ------------------------------------------------------------ the sandbox's chargeback

  it('the sandbox reports a chargeback: the payment shop’s balance drops, within what is left of the payment', async () => {
    const shopOrderId = await paidInvoice('50.00');
    const post = async (id: string, b: unknown): Promise<{ status: number; body: { result: boolean; data?: Record<string, unknown>; message?: string } }> => {
      const res = await fetch(`${ctx.sandbox.origin}/sandbox/invoices/${encodeURIComponent(id)}/chargeback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(b),
      });
      return { status: res.status, body: (await res.json()) as { result: boolean; data?: Record<string, unknown> } };
    };
    const ok = await post(shopOrderId, { amount: '20.00' });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ shop_order_id: shopOrderId, amount: 20, charged_back: 20 });
    for (const [b, status] of [
      [{ amount: 20 }, 400],
      [{ amount: '0' }, 400],
      [{ amount: '-1.00' }, 400],
      [{ amount: '30.01' }, 409],
    ] as const) {
      expect((await post(shopOrderId, b)).status).toBe(status);
    }
    expect((await post(shopOrderId, { amount: '30.00' })).status).toBe(200);
    expect((await post(`order-${randomUUID()}`, { amount: '1.00' })).status).toBe(404);
  });
});
