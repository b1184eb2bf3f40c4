import { createHash, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ADMIN_KEY, admin, SHOP_ID, startTestApp, TestContext } from '../support/app';
import { signIn } from '../console/console-session';
import { sandboxPost, sandboxRequests, sleep } from '../support/hostile';
import { PAYMENT } from '../support/payways';

/**
 * The token registry: tokens issued to this shop's invoices are listed masked and
 * revoked by the shop; a revoked token is never charged (no gateway call, no row), whether named
 * by its issuing invoice or given raw.
 */

const PAYMENTS_KEY = 'tokens-payments-key-0123';
const PAYOUTS_KEY = 'tokens-payouts-key-01234';
const READ_KEY = 'tokens-read-key-01234567';
const REFUNDS_KEY = 'tokens-refunds-key-01234';
const keyId = (k: string): string => createHash('sha256').update(k).digest('hex').slice(0, 12);
const bearer = (k: string): Record<string, string> => ({ Authorization: `Bearer ${k}` });

interface TokenItem {
  id: string;
  account: string | null;
  status: string;
  invoiceShopOrderId: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
}

describe('payment token registry', () => {
  let ctx: TestContext;
  let db: Client;
  const issuing = `tok-issue-${Date.now()}`;
  let token = '';

  const create = (body: Record<string, unknown>, key = PAYMENTS_KEY) =>
    ctx.http.post('/api/v1/invoices').set(bearer(key)).send(body);
  const invoice = (shopOrderId: string, extra: Record<string, unknown> = {}) => ({
    shopOrderId,
    amount: '15.00',
    currency: 643,
    payway: PAYMENT.card,
    ...extra,
  });
  const list = async (query = ''): Promise<TokenItem[]> =>
    (await ctx.http.get(`/api/v1/payment-tokens${query}`).set(bearer(PAYMENTS_KEY)).expect(200)).body
      .items as TokenItem[];
  const entryOf = async (): Promise<TokenItem> =>
    (await list()).find((t) => t.invoiceShopOrderId === issuing)!;

  /** An invoice paid with savePaymentToken, and the raw token the gateway issued it. */
  async function issueToken(shopOrderId: string): Promise<string> {
    const inv = (await create(invoice(shopOrderId, { savePaymentToken: true })).expect(201)).body as {
      invoiceId: string;
    };
    await sandboxPost(ctx, `invoices/${inv.invoiceId}/pay`);
    for (let i = 0; i < 80; i++) {
      await sleep(100);
      const shown = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(admin());
      const t = (shown.body.paymentToken as { token?: string } | null)?.token;
      if (t) return t;
    }
    throw new Error('no token issued');
  }

  beforeAll(async () => {
    ctx = await startTestApp({
      env: {
        API_KEYS: [`${PAYMENTS_KEY}:payments`, `${PAYOUTS_KEY}:payouts`, `${READ_KEY}:read`, `${REFUNDS_KEY}:refunds`].join(','),
      },
    });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    token = await issueToken(issuing);
  });

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  it('lists the token masked, with its issuing invoice and expiry, never the raw token', async () => {
    const res = await ctx.http.get('/api/v1/payment-tokens').set(bearer(PAYMENTS_KEY)).expect(200);
    expect(token).toMatch(/^tok_/);
    expect(JSON.stringify(res.body)).not.toContain(token);
    const entry = (res.body.items as TokenItem[]).find((t) => t.invoiceShopOrderId === issuing);
    expect(entry).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      account: expect.stringContaining('*'),
      status: 'active',
      invoiceShopOrderId: issuing,
      createdAt: expect.any(String),
      lastUsedAt: null,
      expiresAt: expect.any(String),
      revokedAt: null,
    });
    expect(new Date(entry!.expiresAt!).getTime()).toBeGreaterThan(Date.now());
    expect(res.body).toHaveProperty('nextCursor', null);
    // A read-only key lists too; the filters narrow.
    await ctx.http.get('/api/v1/payment-tokens').set(bearer(READ_KEY)).expect(200);
    expect((await list(`?invoiceShopOrderId=${issuing}`)).map((t) => t.id)).toEqual([entry!.id]);
    expect(await list('?invoiceShopOrderId=no-such-order')).toEqual([]);
    expect(await list('?status=revoked')).toEqual([]);
    await ctx.http.get('/api/v1/payment-tokens?status=bogus').set(bearer(PAYMENTS_KEY)).expect(400);
  });

  it('keys without the payments scope get 403 (read keys may list, not revoke)', async () => {
    const { id } = await entryOf();
    await ctx.http.get('/api/v1/payment-tokens').set(bearer(PAYOUTS_KEY)).expect(403);
    await ctx.http.get('/api/v1/payment-tokens').set(bearer(REFUNDS_KEY)).expect(403);
    for (const key of [PAYOUTS_KEY, READ_KEY, REFUNDS_KEY])
      await ctx.http.delete(`/api/v1/payment-tokens/${id}`).set(bearer(key)).expect(403);
    expect((await entryOf()).status).toBe('active');
  });

  it('a token used by a later invoice shows lastUsedAt', async () => {
    expect((await entryOf()).lastUsedAt).toBeNull();
    const before = Date.now();
    await create(invoice(`${issuing}-use1`, { paymentTokenFrom: issuing })).expect(201);
    const used = await entryOf();
    expect(used.lastUsedAt).not.toBeNull();
    expect(new Date(used.lastUsedAt!).getTime()).toBeGreaterThanOrEqual(before - 1000);
    // Still one entry for the token.
    expect((await list()).filter((t) => t.invoiceShopOrderId === issuing)).toHaveLength(1);
  });

  it('an unknown or malformed id is 404', async () => {
    for (const id of [randomUUID(), 'not-a-uuid', '1', "x' OR '1'='1"])
      await ctx.http.delete(`/api/v1/payment-tokens/${encodeURIComponent(id)}`).set(bearer(PAYMENTS_KEY)).expect(404);
  });

  it("no spelling of another shop's token id revokes it", async () => {
    const owner = await db.query<{ invoice_id: string }>(`SELECT invoice_id FROM payment_tokens LIMIT 1`);
    const other = (
      await db.query<{ id: string }>(
        `INSERT INTO payment_tokens (shop_id, token_index, invoice_id, account) VALUES ($1, $2, $3, '411111******1111') RETURNING id`,
        [SHOP_ID + 777, 'f'.repeat(64), owner.rows[0].invoice_id],
      )
    ).rows[0].id;
    const enc = (t: string): string => [...t].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    for (const spelled of [
      other,
      other.toUpperCase(),
      `${other}/`,
      enc(other),
      other.replace(/-/g, '%2D'),
      ` ${other}`.replace(' ', '%20'),
      `${other}%00`,
      `${other}%2F`,
    ]) {
      const res = await ctx.http.delete(`/api/v1/payment-tokens/${spelled}`).set(bearer(PAYMENTS_KEY));
      expect([spelled, [400, 404].includes(res.status)]).toEqual([spelled, true]);
    }
    const after = await db.query(`SELECT status, revoked_at FROM payment_tokens WHERE id = $1`, [other]);
    expect(after.rows[0]).toEqual({ status: 'active', revoked_at: null });
    expect(JSON.stringify(await list())).not.toContain(other);
    await db.query(`DELETE FROM payment_tokens WHERE id = $1`, [other]);
  });

  it('an expiry in the past shows as expired (revoked still wins)', async () => {
    const owner = await db.query<{ invoice_id: string }>(`SELECT invoice_id FROM payment_tokens LIMIT 1`);
    const old = (
      await db.query<{ id: string }>(
        `INSERT INTO payment_tokens (shop_id, token_index, invoice_id, account, expires_at) VALUES ($1, $2, $3, '411111******1111', now() - interval '1 day') RETURNING id`,
        [SHOP_ID, 'e'.repeat(64), owner.rows[0].invoice_id],
      )
    ).rows[0].id;
    expect((await list()).find((t) => t.id === old)?.status).toBe('expired');
    expect((await list('?status=expired')).map((t) => t.id)).toEqual([old]);
    expect((await list('?status=active')).map((t) => t.id)).not.toContain(old);
    await db.query(`DELETE FROM payment_tokens WHERE id = $1`, [old]);
  });

  it('DELETE revokes once: 200, one event and one audit entry with the key id; a second DELETE is 200 with no second event', async () => {
    const { id } = await entryOf();
    const first = await ctx.http.delete(`/api/v1/payment-tokens/${id}`).set(bearer(PAYMENTS_KEY)).expect(200);
    expect(first.body).toMatchObject({ id, status: 'revoked', invoiceShopOrderId: issuing, revokedAt: expect.any(String) });
    expect(JSON.stringify(first.body)).not.toContain(token);
    const again = await ctx.http.delete(`/api/v1/payment-tokens/${id}`).set(bearer(PAYMENTS_KEY)).expect(200);
    expect(again.body).toEqual(first.body);

    const feed = await ctx.http
      .get('/api/v1/events?objectType=payment_token&limit=500')
      .set(bearer(PAYMENTS_KEY))
      .expect(200);
    const events = (feed.body.items as Array<Record<string, unknown>>).filter((e) => e.objectId === id);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'payment_token.revoked',
        objectType: 'payment_token',
        sequence: 1,
        keyId: keyId(PAYMENTS_KEY),
        data: expect.objectContaining({ id, status: 'revoked' }),
      }),
    ]);
    expect(JSON.stringify(feed.body)).not.toContain(token);
    // A key whose scopes do not cover payments sees no token events.
    await ctx.http.get('/api/v1/events?objectType=payment_token').set(bearer(PAYOUTS_KEY)).expect(403);
    const audit = await db.query(
      `SELECT key_id, to_status, cause FROM events WHERE entity_type = 'payment_token' AND entity_id = $1`,
      [id],
    );
    expect(audit.rows).toEqual([{ key_id: keyId(PAYMENTS_KEY), to_status: 'revoked', cause: 'api' }]);
    const row = await db.query(`SELECT revoked_by FROM payment_tokens WHERE id = $1`, [id]);
    expect(row.rows[0].revoked_by).toBe(keyId(PAYMENTS_KEY));
    expect((await list('?status=revoked')).map((t) => t.id)).toEqual([id]);
  });

  it.each([
    ['paymentTokenFrom the issuing invoice', () => ({ paymentTokenFrom: issuing }), 'paymentTokenFrom', PAYMENTS_KEY],
    ['the raw paymentToken', () => ({ paymentToken: token }), 'paymentToken', PAYMENTS_KEY],
    ['the raw paymentToken (admin key)', () => ({ paymentToken: token }), 'paymentToken', 'admin'],
  ])('an invoice naming a revoked token by %s is 409 token-revoked, no gateway call, no row', async (_what, extra, field, key) => {
    expect((await entryOf()).status).toBe('revoked');
    const shopOrderId = `${issuing}-after-${field}-${key === 'admin' ? 'a' : 's'}`;
    const before = (await sandboxRequests(ctx)).length;
    const req = ctx.http.post('/api/v1/invoices').send(invoice(shopOrderId, extra()));
    const res = await (key === 'admin' ? req.set(admin()) : req.set(bearer(key))).expect(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: expect.stringMatching(/token-revoked$/), status: 409 });
    expect(res.body.errors).toEqual([expect.objectContaining({ field })]);
    expect(JSON.stringify(res.body)).not.toContain(token);
    const sent = (await sandboxRequests(ctx)).slice(before);
    expect(sent.filter((r) => r.body.shop_order_id === shopOrderId)).toEqual([]);
    expect(sent.filter((r) => r.body.payment_token === token)).toEqual([]);
    const rows = await db.query(`SELECT 1 FROM invoices WHERE shop_order_id = $1`, [shopOrderId]);
    expect(rows.rowCount).toBe(0);
  });

  it('concurrent revokes write one event; creates racing a revoke are each charged or refused, never after it', async () => {
    const second = `${issuing}-second`;
    const raw = await issueToken(second);
    const { id } = (await list()).find((t) => t.invoiceShopOrderId === second)!;
    const before = (await sandboxRequests(ctx)).length;
    const racing = Array.from({ length: 8 }, (_, i) =>
      create(invoice(`${second}-race-${i}`, { paymentTokenFrom: second })),
    );
    const revokes = Array.from({ length: 6 }, () =>
      ctx.http.delete(`/api/v1/payment-tokens/${id}`).set(bearer(PAYMENTS_KEY)),
    );
    const [created, revoked] = await Promise.all([Promise.all(racing), Promise.all(revokes)]);
    expect(revoked.map((r) => r.status)).toEqual(revoked.map(() => 200));
    for (const r of created) expect([201, 409]).toContain(r.status);
    const accepted = created.filter((r) => r.status === 201).length;
    const charged = (await sandboxRequests(ctx))
      .slice(before)
      .filter((r) => r.path === 'invoice/create' && r.body.payment_token === raw);
    expect(charged).toHaveLength(accepted);
    const rows = await db.query(`SELECT count(*)::int AS n FROM invoices WHERE shop_order_id LIKE $1`, [`${second}-race-%`]);
    expect(rows.rows[0].n).toBe(accepted);
    const events = await db.query(`SELECT count(*)::int AS n FROM events WHERE entity_type = 'payment_token' AND entity_id = $1`, [id]);
    expect(events.rows[0].n).toBe(1);
    // Once a revoke has answered, nothing more is accepted.
    await create(invoice(`${second}-late`, { paymentTokenFrom: second })).expect(409);
    await create(invoice(`${second}-late-raw`, { paymentToken: raw })).expect(409);
  });

  it('a repeat of a create accepted before the revocation still replays its stored answer', async () => {
    const res = await create(invoice(`${issuing}-use1`, { paymentTokenFrom: issuing })).expect(201);
    expect(res.headers['idempotent-replayed']).toBe('true');
  });

  it('the token issued again to a later invoice is the same entry and stays revoked', async () => {
    const { id } = await entryOf();
    const inv = await db.query<{ id: string }>(
      `SELECT id FROM invoices WHERE shop_order_id = $1`,
      [`${issuing}-use1`],
    );
    // What storePaymentToken writes for a later invoice given the same token.
    const { storePaymentToken } = await import('../../src/invoices/payment-token');
    const { KeyRing } = await import('../../src/common/key-ring');
    const { InvoiceEntity } = await import('../../src/invoices/invoice.entity');
    const ds = ctx.service.app.get((await import('typeorm')).DataSource);
    await ds.transaction(async (m) => {
      const row = await m.findOneByOrFail(InvoiceEntity, { id: inv.rows[0].id });
      await storePaymentToken(m, row, token, { account: '555555******4444' }, ctx.service.app.get(KeyRing));
    });
    const entries = (await list()).filter((t) => t.invoiceShopOrderId.startsWith(issuing) && !t.invoiceShopOrderId.endsWith('-second'));
    expect(entries.map((t) => [t.id, t.status])).toEqual([[id, 'revoked']]);
    await create(invoice(`${issuing}-after-reissue`, { paymentTokenFrom: `${issuing}-use1` })).expect(409);
  });
  it('the console lists tokens masked and revokes one only with the CSRF token, as the signed-in admin', async () => {
    const owner = await db.query<{ invoice_id: string }>(`SELECT invoice_id FROM payment_tokens LIMIT 1`);
    const id = (
      await db.query<{ id: string }>(
        `INSERT INTO payment_tokens (shop_id, token_index, invoice_id, account, expires_at) VALUES ($1, $2, $3, '220000******0004', now() + interval '1 year') RETURNING id`,
        [SHOP_ID, 'd'.repeat(64), owner.rows[0].invoice_id],
      )
    ).rows[0].id;
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    const page = await ctx.http.get('/admin/ui/payment-tokens?status=active').set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain('220000******0004');
    expect(page.text).toContain(`/admin/ui/payment-tokens/${id}/revoke`);
    expect(page.text).not.toContain(token);
    const all = await ctx.http.get('/admin/ui/payment-tokens').set('Cookie', jar.header()).expect(200);
    expect(all.text).not.toContain(token);
    const path = `/admin/ui/payment-tokens/${id}/revoke`;
    for (const bad of [undefined, '', 'forged', csrf.slice(0, -1)]) {
      const body: Record<string, string> = bad === undefined ? {} : { _csrf: bad };
      await ctx.http.post(path).set('Cookie', jar.header()).type('form').send(body).expect(403);
    }
    // Without a session: nothing either.
    await ctx.http.post(path).type('form').send({ _csrf: csrf }).expect(401);
    expect((await db.query(`SELECT status FROM payment_tokens WHERE id = $1`, [id])).rows[0].status).toBe('active');
    await ctx.http.post(path).set('Cookie', jar.header()).type('form').send({ _csrf: csrf }).expect(303);
    const row = await db.query(`SELECT status, revoked_by FROM payment_tokens WHERE id = $1`, [id]);
    expect(row.rows[0]).toEqual({ status: 'revoked', revoked_by: keyId(ADMIN_KEY) });
    const audit = await db.query(`SELECT key_id, cause, type FROM events WHERE entity_type = 'payment_token' AND entity_id = $1`, [id]);
    expect(audit.rows).toEqual([{ key_id: keyId(ADMIN_KEY), cause: 'admin', type: 'payment_token.revoked' }]);
  });
});
