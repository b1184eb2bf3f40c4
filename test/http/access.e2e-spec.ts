import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { ADMIN_KEY, admin, SHOP_KEY, startTestApp, TestContext, unvalidatedHttp } from '../support/app';
import { concrete, rawRequest, registeredRoutes, sandboxPost, sandboxRequests, sleep } from '../support/hostile';
import { PAYMENT } from '../support/payways';

/**
 * Who may call what: the role and scopes of a route are its own metadata, so no spelling of a
 * path gets a shop key into an admin route; scoped keys stay in their scopes; every audit entry
 * names the acting key by its id; a recurrent charge needs no raw token.
 */

const PAYMENTS_KEY = 'payments-refunds-key-0123';
const PAYOUTS_KEY = 'payouts-only-key-0123456';
const READ_KEY = 'read-only-key-0123456789';
const PAYMENTS_ONLY_KEY = 'payments-only-key-012345';
const REFUNDS_KEY = 'refunds-only-key-0123456';
const PAYMENTS_READ_KEY = 'payments-read-key-012345';
const keyId = (k: string): string => createHash('sha256').update(k).digest('hex').slice(0, 12);
const bearer = (k: string): Record<string, string> => ({ Authorization: `Bearer ${k}` });

/** Spellings of one path that a router or proxy might treat as the same route; `seg` is its first segment after /api/v1. */
function variants(path: string, origin: string, seg: string): string[] {
  const at = `/${seg}`;
  const enc = (t: string): string => [...t].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
  const swapCase = [...seg].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
  const out = new Set<string>([
    path.toUpperCase(),
    path.replace(at, at.toUpperCase()),
    path.replace(at, `/${seg[0].toUpperCase()}${seg.slice(1)}`),
    path.replace(at, `/${swapCase}`),
    path.replace('/api/v1', '/API/V1'),
    path.replace(at, `/${enc(seg[0])}${seg.slice(1)}`),
    path.replace(at, `/${enc(seg)}`),
    path.replace(at, `/${enc(seg).toLowerCase()}`),
    path.replace(at, `/%25${seg.charCodeAt(0).toString(16)}${seg.slice(1)}`),
    path.replace(`${at}/`, `${at}%2F`),
    path.replace(`${at}/`, `${at}%2f`),
    `${path}/`,
    `${path}//`,
    `/${path}`,
    path.replace(at, `/${at}`),
    path.split('/').join('//'),
    path.replace(at, `/.${at}`),
    path.replace(at, `/x/..${at}`),
    path.replace(at, `/x/%2E%2E${at}`),
    path.replace(at, `${at};x=1`),
    `${path}?x=/api/v1/admin`,
    `${path}%23`,
    `${path}%00`,
    `${path}.json`,
    `${origin}${path}`,
    `${origin}${path.toUpperCase()}`,
    `${origin}${path.replace(at, at.toUpperCase())}`,
    `http://evil.example${path.replace(at, at.toUpperCase())}`,
    `${origin}//${path}`,
  ]);
  out.delete(path);
  out.delete(`${origin}${path}`);
  return [...out];
}

const firstSegment = (path: string): string => path.split('/')[3];

describe('access by route metadata, key scopes and keyId (attacks against the running app)', () => {
  let ctx: TestContext;
  let db: Client;

  beforeAll(async () => {
    ctx = await startTestApp({
      env: {
        API_KEYS: [
          SHOP_KEY,
          `${PAYMENTS_KEY}:payments+refunds`,
          `${PAYOUTS_KEY}:payouts`,
          `${READ_KEY}:read`,
          `${PAYMENTS_ONLY_KEY}:payments`,
          `${REFUNDS_KEY}:refunds`,
          `${PAYMENTS_READ_KEY}:payments+read`,
        ].join(','),
      },
    });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  it('a shop key never gets a 2xx from an admin route, however the path is spelled', async () => {
    const routes = registeredRoutes(ctx.service).filter(([, p]) => p.startsWith('/api/v1/admin'));
    expect(routes.length).toBeGreaterThanOrEqual(6);
    const seen: string[] = [];
    for (const [method, path] of routes) {
      const plain = concrete(path);
      const asAdmin = await rawRequest(ctx.url, method, plain, { ...bearer(ADMIN_KEY), 'Content-Type': 'application/json' }, '{}');
      expect([method, plain, asAdmin.status === 403]).toEqual([method, plain, false]);
      for (const target of [plain, `${ctx.url}${plain}`, ...variants(plain, ctx.url, 'admin')]) {
        const res = await rawRequest(ctx.url, method, target, { ...bearer(SHOP_KEY), 'Content-Type': 'application/json' }, '{}');
        seen.push(`${res.status} ${method} ${target}`);
        // Refused by the guard (403), or no route at all (404), or not a request (400): never the handler.
        expect([method, target, [400, 403, 404].includes(res.status)]).toEqual([method, target, true]);
        expect([target, res.status, res.headers['content-type']]).toEqual([target, res.status, expect.stringMatching(/application\/problem\+json/)]);
      }
    }
    expect(seen.length).toBeGreaterThan(150);
  });

  it('no spelling of a shop route reaches a handler the plain path would not', async () => {
    const routes = registeredRoutes(ctx.service).filter(
      // Payways and the events feed are open to every shop scope: no shop key is outside them.
      ([, p]) =>
        p.startsWith('/api/v1/') &&
        !p.startsWith('/api/v1/admin') &&
        !p.startsWith('/api/v1/payways') &&
        !p.startsWith('/api/v1/events'),
    );
    expect(routes.length).toBeGreaterThan(10);
    for (const [method, path] of routes) {
      const plain = concrete(path);
      // A key outside the route's scope: the plain path is 403, and so is every spelling that routes.
      const key = /payouts|balance/.test(path) ? PAYMENTS_KEY : PAYOUTS_KEY;
      for (const target of [plain, ...variants(plain, ctx.url, firstSegment(plain))]) {
        const res = await rawRequest(ctx.url, method, target, { ...bearer(key), 'Content-Type': 'application/json' }, '{}');
        expect([method, target, [400, 403, 404].includes(res.status)]).toEqual([method, target, true]);
      }
    }
  });

  it('every guarded route declares its access: none refuses the admin key for lack of a rule', async () => {
    const routes = registeredRoutes(ctx.service).filter(([, p]) => p.startsWith('/api/v1/'));
    for (const [method, path] of routes) {
      const res = await rawRequest(ctx.url, method, concrete(path), { ...bearer(ADMIN_KEY), 'Content-Type': 'application/json' }, '{}');
      expect([method, path, res.body.includes('declares no access rule')]).toEqual([method, path, false]);
      expect([method, path, res.status === 401 || res.status === 403]).toEqual([method, path, false]);
    }
  });

  it.each([
    // [key, method, path, body, allowed]
    [PAYMENTS_KEY, 'GET', '/api/v1/invoices', undefined, true],
    [PAYMENTS_KEY, 'POST', '/api/v1/invoices', {}, true],
    [PAYMENTS_KEY, 'POST', '/api/v1/invoices/x1/refunds', {}, true],
    [PAYMENTS_KEY, 'GET', '/api/v1/payways?direction=payment', undefined, true],
    [PAYMENTS_KEY, 'GET', '/api/v1/payouts', undefined, false],
    [PAYMENTS_KEY, 'POST', '/api/v1/payouts', {}, false],
    [PAYMENTS_KEY, 'GET', '/api/v1/balance', undefined, false],
    [PAYOUTS_KEY, 'POST', '/api/v1/invoices', {}, false],
    [PAYOUTS_KEY, 'POST', '/api/v1/invoices/quote', {}, false],
    [PAYOUTS_KEY, 'GET', '/api/v1/invoices', undefined, false],
    [PAYOUTS_KEY, 'POST', '/api/v1/invoices/x1/refunds', {}, false],
    [PAYOUTS_KEY, 'POST', '/api/v1/payouts', {}, true],
    [PAYOUTS_KEY, 'GET', '/api/v1/balance', undefined, true],
    [PAYOUTS_KEY, 'GET', '/api/v1/payways?direction=payout', undefined, true],
    [READ_KEY, 'GET', '/api/v1/invoices', undefined, true],
    [READ_KEY, 'GET', '/api/v1/payouts', undefined, true],
    [READ_KEY, 'GET', '/api/v1/invoices/x1/refunds', undefined, true],
    [READ_KEY, 'POST', '/api/v1/invoices', {}, false],
    [READ_KEY, 'POST', '/api/v1/invoices/x1/charge', {}, false],
    [READ_KEY, 'POST', '/api/v1/payouts/check-account', {}, false],
    [READ_KEY, 'GET', '/api/v1/admin/events', undefined, false],
    [SHOP_KEY, 'POST', '/api/v1/payouts', {}, true],
    [SHOP_KEY, 'GET', '/api/v1/admin/notifications', undefined, false],
  ] as const)('%s %s %s (body %j) → allowed: %s', async (key, method, path, body, allowed) => {
    const req = method === 'GET' ? ctx.http.get(path) : ctx.http.post(path).send(body);
    const res = await req.set(bearer(key));
    if (allowed) {
      expect(res.status).not.toBe(403);
      expect(res.status).not.toBe(401);
    } else {
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
  });

  it('every audit entry of a request names the acting key by its id, never the key', async () => {
    const shopOrderId = `acc-${Date.now()}`;
    await ctx.http
      .post('/api/v1/invoices')
      .set(bearer(PAYMENTS_KEY))
      .send({ shopOrderId, amount: '10.00', currency: 643, payway: PAYMENT.card })
      .expect(201);
    const events = await ctx.http.get(`/api/v1/admin/events?entityId=${shopOrderId}`).set(admin()).expect(200);
    const items = events.body.items as Array<{ keyId: string | null; cause: string }>;
    expect(items.length).toBeGreaterThanOrEqual(1);
    for (const e of items) expect(e.keyId).toBe(keyId(PAYMENTS_KEY));
    const dump = await db.query(`SELECT row_to_json(e)::text AS t FROM events e`);
    for (const { t } of dump.rows as Array<{ t: string }>) {
      for (const k of [SHOP_KEY, PAYMENTS_KEY, PAYOUTS_KEY, READ_KEY, ADMIN_KEY]) expect(t).not.toContain(k);
    }
  });

  describe('the event feed shows a key only the object types its scopes cover', () => {
    type Kind = 'invoice' | 'refund' | 'payout' | 'reconciliation';
    // A reconciliation's event is in the feed of keys that read everything (every shop scope,
    // read-only, admin); no payments/refunds/payouts scope alone covers it.
    const ALL: Kind[] = ['invoice', 'refund', 'payout', 'reconciliation'];
    const MATRIX: Array<[string, string, Kind[]]> = [
      ['payments only', PAYMENTS_ONLY_KEY, ['invoice']],
      ['refunds only (no invoice events: their payUrl carries the payer token)', REFUNDS_KEY, ['refund']],
      ['payouts only', PAYOUTS_KEY, ['payout']],
      ['read only (everything)', READ_KEY, ALL],
      ['payments + read (what payments covers)', PAYMENTS_READ_KEY, ['invoice']],
      ['payments + refunds', PAYMENTS_KEY, ['invoice', 'refund']],
      ['every shop scope (what the webhooks deliver, reconciliation included)', SHOP_KEY, ALL],
      ['admin', ADMIN_KEY, ALL],
    ];
    const run = `fs${Date.now().toString(36)}`;
    /** Event ids by object type, as the database holds them once the whole suite's events are in. */
    const idsOf = async (types: Kind[]): Promise<string[]> =>
      (await db.query(`SELECT public_id AS id FROM events WHERE type IS NOT NULL AND entity_type = ANY($1) ORDER BY position`, [types])).rows.map(
        (r: { id: string }) => r.id,
      );

    beforeAll(async () => {
      // Interleaved, so every page of a restricted key skips over others' events.
      for (let i = 0; i < 5; i++) {
        for (const [kind, type] of [['invoice', 'invoice.awaiting_payer'], ['refund', 'refund.waiting'], ['payout', 'payout.pending'], ['reconciliation', 'reconciliation.completed']]) {
          await db.query(
            `INSERT INTO events (entity_type, entity_id, from_status, to_status, cause, type, sequence, data)
             VALUES ($1, $2, NULL, 'x', 'api', $3, 1, $4)`,
            [kind, `${run}-${kind}-${i}`, type, JSON.stringify({ payUrl: `https://pay.example/p?t=secret-${i}` })],
          );
        }
      }
    });

    /** Every event the key reads following nextCursor to the end (an empty page), `limit` at a time. */
    async function readAll(key: string, from?: string, limit = 2): Promise<Array<{ id: string; objectType: string }>> {
      const seen: Array<{ id: string; objectType: string }> = [];
      let cursor = from;
      for (let pages = 0; pages < 500; pages++) {
        // The events are the suite's own rows (data written by hand): not checked against the document.
        const res = await unvalidatedHttp(ctx)
          .get('/api/v1/events')
          .query({ limit, ...(cursor ? { after: cursor } : {}) })
          .set(bearer(key))
          .expect(200);
        const items = res.body.items as Array<{ id: string; objectType: string }>;
        if (items.length === 0) return seen;
        seen.push(...items);
        cursor = res.body.nextCursor as string;
      }
      throw new Error('the feed did not end');
    }

    it.each(MATRIX)('%s: reads exactly its types, following nextCursor to the end', async (_name, key, types) => {
      const seen = await readAll(key);
      expect(new Set(seen.map((e) => e.objectType))).toEqual(new Set(types));
      expect(seen.map((e) => e.id)).toEqual(await idsOf(types));
    });

    it.each(MATRIX)('%s: GET /events/{id} answers its types and 404 (not 403) for the others', async (_name, key, types) => {
      for (const kind of ALL) {
        const [id] = (await db.query(`SELECT public_id AS id FROM events WHERE entity_id = $1`, [`${run}-${kind}-0`])).rows.map((r: { id: string }) => r.id);
        const res = await unvalidatedHttp(ctx).get(`/api/v1/events/${id}`).set(bearer(key));
        if (types.includes(kind)) expect([kind, res.status, res.body.objectType]).toEqual([kind, 200, kind]);
        else expect([kind, res.status, res.body.type]).toEqual([kind, 404, expect.stringContaining('not-found')]);
        // The 404 of an event outside the scope is the 404 of one that does not exist.
        const missing = 'evt_00000000-0000-7000-8000-000000000000';
        const none = await ctx.http.get(`/api/v1/events/${missing}`).set(bearer(key));
        if (!types.includes(kind)) expect(res.body.detail.replace(id, 'ID')).toBe(none.body.detail.replace(missing, 'ID'));
      }
    });

    it.each(MATRIX)('%s: a type or objectType filter outside its scopes is 403, inside it only that type', async (_name, key, types) => {
      for (const kind of ALL) {
        const eventType = { invoice: 'invoice.awaiting_payer', refund: 'refund.waiting', payout: 'payout.pending', reconciliation: 'reconciliation.completed' }[kind];
        for (const q of [{ objectType: kind }, { type: eventType }, { objectType: kind, objectId: `${run}-${kind}-3` }]) {
          const res = await unvalidatedHttp(ctx).get('/api/v1/events').query({ limit: 500, ...q }).set(bearer(key));
          if (!types.includes(kind)) {
            expect([q, res.status]).toEqual([q, 403]);
            continue;
          }
          expect([q, res.status]).toEqual([q, 200]);
          const items = res.body.items as Array<{ objectType: string; objectId: string; type: string }>;
          expect(items.length).toBeGreaterThan(0);
          expect(items.every((e) => e.objectType === kind)).toBe(true);
          if ('type' in q) expect(items.every((e) => e.type === eventType)).toBe(true);
          if ('objectId' in q) expect(items.map((e) => e.objectId)).toEqual([`${run}-${kind}-3`]);
        }
      }
    });

    it('other spellings of a filter never widen a key: repeated, bracketed, cased or padded values are 400 or 403', async () => {
      for (const q of [
        'objectType=invoice&objectType=payout',
        'objectType[]=payout',
        'objectType=Payout',
        'objectType=payout%20',
        'type=payout.pending&type=invoice.created',
        'type[0]=payout.pending',
        'type=PAYOUT.PENDING',
        'objectType=invoice&type=payout.pending',
      ]) {
        const res = await ctx.http.get(`/api/v1/events?${q}`).set(bearer(PAYMENTS_ONLY_KEY));
        expect([q, [400, 403].includes(res.status)]).toEqual([q, true]);
      }
    });

    it("cursors from one key used by another never reveal the other's types", async () => {
      // Every cursor the admin key passes through, and the payouts key's, and one forged at position 0.
      const cursors: string[] = [Buffer.from('p0').toString('base64url')];
      for (const key of [ADMIN_KEY, PAYOUTS_KEY]) {
        let cursor: string | undefined;
        for (;;) {
          const res = await unvalidatedHttp(ctx).get('/api/v1/events').query({ limit: 3, ...(cursor ? { after: cursor } : {}) }).set(bearer(key)).expect(200);
          if ((res.body.items as unknown[]).length === 0) break;
          cursor = res.body.nextCursor as string;
          cursors.push(cursor);
        }
      }
      for (const [, key, types] of MATRIX) {
        for (const cursor of cursors) {
          const seen = await readAll(key, cursor, 500);
          expect(seen.filter((e) => !types.includes(e.objectType as Kind))).toEqual([]);
        }
      }
    });
  });

  describe('paymentTokenFrom: a recurrent charge with a shop key, no raw token', () => {
    const create = (body: Record<string, unknown>): ReturnType<TestContext['http']['post']> =>
      ctx.http.post('/api/v1/invoices').set(bearer(PAYMENTS_KEY)).send(body);

    it('charges with the token the named invoice was issued', async () => {
      const first = { shopOrderId: `tokfrom-${Date.now()}`, amount: '15.00', currency: 643, payway: PAYMENT.card, savePaymentToken: true };
      const inv = (await create(first).expect(201)).body as { invoiceId: string };
      await sandboxPost(ctx, `invoices/${inv.invoiceId}/pay`);
      let token: string | undefined;
      for (let i = 0; i < 80 && !token; i++) {
        await sleep(100);
        const shown = await ctx.http.get(`/api/v1/invoices/${first.shopOrderId}?refresh=true`).set(admin());
        token = (shown.body.paymentToken as { token?: string } | null)?.token;
      }
      expect(token).toMatch(/^tok_/);

      const second = { shopOrderId: `${first.shopOrderId}-r`, amount: '15.00', currency: 643, payway: PAYMENT.card, paymentTokenFrom: first.shopOrderId };
      const charged = await create(second).expect(201);
      expect(charged.body).toMatchObject({ status: 'created', redirect: null });
      expect(JSON.stringify(charged.body)).not.toContain(token);
      const sent = (await sandboxRequests(ctx)).find((r) => r.path === 'invoice/create' && r.body.shop_order_id === second.shopOrderId);
      expect(sent?.body.payment_token).toBe(token);
      // The same request again replays the stored answer.
      const again = await create(second).expect(201);
      expect(again.body).toEqual(charged.body);
    });

    it.each([
      ['an invoice without a token', (id: string) => ({ paymentTokenFrom: id })],
      ['an unknown invoice', () => ({ paymentTokenFrom: 'no-such-order' })],
      ['paymentToken as well', (id: string) => ({ paymentTokenFrom: id, paymentToken: 'tok_x' })],
    ])('names paymentTokenFrom and writes nothing for %s', async (_what, extra) => {
      const plain = { shopOrderId: `plain-${Date.now()}`, amount: '100.10', currency: 643, payway: PAYMENT.card };
      const made = await create(plain);
      expect([made.status, made.body]).toEqual([201, expect.anything()]);
      const before = await db.query('SELECT count(*)::int AS n FROM invoices');
      const res = await create({ ...plain, shopOrderId: `${plain.shopOrderId}-r`, ...extra(plain.shopOrderId) }).expect(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'paymentTokenFrom' })]);
      const after = await db.query('SELECT count(*)::int AS n FROM invoices');
      expect(after.rows[0].n).toBe(before.rows[0].n);
    });
  });
});
