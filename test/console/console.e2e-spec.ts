// Over 500 lines on purpose: one app and database, started once, serve the console's tests; the
// restarts it checks start on that same database, which a split would have to build again.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import {
  ADMIN_KEY,
  auth,
  PAYOUT_SHOP_ID,
  SHOP_ID,
  SHOP_KEY,
  startTestApp,
  TestContext,
} from '../support/app';
import { PAYMENT } from '../support/payways';
import { keyIdOf } from '../../src/common/auth.guard';
import { CookieJar, hidden, signIn } from './console-session';

const md5Of = (text: string): string => createHash('md5').update(text).digest('hex');

/**
 * The operators' console over real HTTP: sign-in with admin keys only, server-side sessions in
 * HttpOnly SameSite=Strict cookies, CSRF on every form, rate-limited failures, escaped values.
 */
describe('admin console', () => {
  let ctx: TestContext;
  let db: Client;

  beforeAll(async () => {
    ctx = await startTestApp({
      env: { ADMIN_SIGNIN_MAX_FAILURES: '3', ADMIN_SIGNIN_WINDOW_S: '600' },
    });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  async function createInvoice(
    overrides: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const res = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId: `con-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
        amount: '100.10',
        currency: 643,
        payway: PAYMENT.card,
        description: 'Console order',
        ...overrides,
      })
      .expect(201);
    return res.body as Record<string, unknown>;
  }

  it('sends a visitor without a session to the sign-in page, on every page', async () => {
    for (const path of [
      '/admin',
      '/admin/ui/attention',
      '/admin/ui/invoices',
      '/admin/ui/invoices/x',
      '/admin/ui/notifications',
    ]) {
      const res = await ctx.http.get(path).expect(303);
      expect(res.headers.location).toBe('/admin/login');
    }
  });

  it('a bearer key is not a console session', async () => {
    const res = await ctx.http
      .get('/admin')
      .set('Authorization', `Bearer ${ADMIN_KEY}`)
      .expect(303);
    expect(res.headers.location).toBe('/admin/login');
  });

  it('signs an admin key in with an HttpOnly, SameSite=Strict session cookie that holds no key', async () => {
    const jar = new CookieJar();
    const form = await ctx.http.get('/admin/login').expect(200);
    expect(form.headers['content-type']).toMatch(/text\/html/);
    jar.take(form.headers['set-cookie']);
    const res = await ctx.http
      .post('/admin/login')
      .set('Cookie', jar.header())
      .type('form')
      .send({ _csrf: hidden(form.text, '_csrf'), key: ADMIN_KEY })
      .expect(303);
    const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    const session = cookies.find((c) => c.startsWith('console_session='))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Strict/);
    expect(session).toMatch(/Path=\/admin/);
    expect(session).not.toContain(ADMIN_KEY);
    // Not Secure on http; the database holds a hash of the id, not the id or the key.
    expect(session).not.toMatch(/Secure/);
    const id = decodeURIComponent(session.split(';')[0].split('=')[1]);
    const rows = await db.query(`SELECT * FROM admin_sessions`);
    expect(JSON.stringify(rows.rows)).not.toContain(id);
    expect(JSON.stringify(rows.rows)).not.toContain(ADMIN_KEY);
  });

  it('refuses a shop key, a wrong key and a sign-in form without its token, with no session', async () => {
    for (const key of [SHOP_KEY, 'not-a-key-at-all-0123']) {
      const jar = new CookieJar();
      const form = await ctx.http.get('/admin/login').expect(200);
      jar.take(form.headers['set-cookie']);
      const res = await ctx.http
        .post('/admin/login')
        .set('Cookie', jar.header())
        .set('X-Forwarded-For', '203.0.113.9')
        .type('form')
        .send({ _csrf: hidden(form.text, '_csrf'), key })
        .expect(401);
      expect(String(res.headers['set-cookie'] ?? '')).not.toContain('console_session');
    }
    // The token must match the form's cookie: a forged form from another site has neither.
    const res = await ctx.http
      .post('/admin/login')
      .type('form')
      .send({ _csrf: 'x', key: ADMIN_KEY })
      .expect(403);
    expect(String(res.headers['set-cookie'] ?? '')).not.toContain('console_session');
  });

  it('rate-limits failed sign-ins per address, with Retry-After, even for the right key afterwards', async () => {
    const sessionsBefore = (await db.query(`SELECT count(*)::int AS n FROM admin_sessions`)).rows[0]
      .n as number;
    let last = 0;
    for (let i = 0; i < 5; i++) {
      const jar = new CookieJar();
      const form = await ctx.http.get('/admin/login');
      jar.take(form.headers['set-cookie']);
      const res = await ctx.http
        .post('/admin/login')
        .set('Cookie', jar.header())
        .type('form')
        .send({
          _csrf: hidden(form.text, '_csrf'),
          key: i < 4 ? `wrong-key-${i}-0123456789` : ADMIN_KEY,
        });
      last = res.status;
      if (res.status === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(last).toBe(429);
    const sessionsAfter = (await db.query(`SELECT count(*)::int AS n FROM admin_sessions`)).rows[0]
      .n as number;
    expect(sessionsAfter).toBe(sessionsBefore);
    const metrics = await ctx.http.get('/metrics');
    expect(metrics.text).toMatch(/admin_console_signins_total\{result="rate_limited"\} [1-9]/);
  });

  it('refuses every state-changing form without its CSRF token, or with another session token, and changes nothing', async () => {
    // A separate app instance would share the limiter; the earlier test's failures came from
    // 127.0.0.1, so wait them out by signing in on a fresh app with its own limiter.
    const fresh = await startTestApp({ sandbox: ctx.sandbox, databaseUrl: ctx.databaseUrl });
    try {
      const { jar, csrf } = await signIn(fresh, ADMIN_KEY);
      const inv = await createInvoice();
      await db.query(
        `UPDATE invoices SET needs_attention = true, attention_reason = 'test flag' WHERE shop_order_id = $1`,
        [inv.shopOrderId],
      );
      const targets = [
        `/admin/ui/invoices/${String(inv.shopOrderId)}/resolve`,
        '/admin/logout',
        '/admin/ui/notifications/00000000-0000-0000-0000-000000000000/replay',
        '/admin/ui/sessions/revoke',
      ];
      for (const path of targets) {
        for (const token of [undefined, '', 'forged', csrf.slice(0, -1)]) {
          const body: Record<string, string> = {
            action: 'accept',
            status: 'succeeded',
            note: 'n',
            keyId: keyIdOf(ADMIN_KEY),
          };
          if (token !== undefined) body._csrf = token;
          await fresh.http
            .post(path)
            .set('Cookie', jar.header())
            .type('form')
            .send(body)
            .expect(403);
        }
      }
      const row = await db.query(
        `SELECT needs_attention, status FROM invoices WHERE shop_order_id = $1`,
        [inv.shopOrderId],
      );
      expect(row.rows[0].needs_attention).toBe(true);
      // Still signed in: logout (or revoking this key's sessions) without the token did not sign out.
      await fresh.http.get('/admin').set('Cookie', jar.header()).expect(200);
      // Without a session at all, a form is refused too.
      await fresh.http.post('/admin/logout').type('form').send({ _csrf: csrf }).expect(401);
      await db.query(
        `UPDATE invoices SET needs_attention = false, attention_reason = NULL WHERE shop_order_id = $1`,
        [inv.shopOrderId],
      );
    } finally {
      await fresh.service.close();
    }
  });

  it('a held flagged invoice offers Charge and Unhold; accept goes through the same guard (409 while the gateway says held); Charge makes the real call', async () => {
    const fresh = await startTestApp({ sandbox: ctx.sandbox, databaseUrl: ctx.databaseUrl });
    try {
      const { jar, csrf } = await signIn(fresh, ADMIN_KEY);
      const inv = await createInvoice({ twoStep: true });
      const shopOrderId = String(inv.shopOrderId);
      const paid = await fetch(
        `${ctx.sandbox.origin}/sandbox/invoices/${String(inv.invoiceId)}/pay`,
        { method: 'POST' },
      );
      expect(paid.status).toBe(200);
      for (let i = 0; i < 100; i++) {
        const r = await db.query(`SELECT status FROM invoices WHERE shop_order_id = $1`, [
          shopOrderId,
        ]);
        if (r.rows[0].status === 'held') break;
        await new Promise((res) => setTimeout(res, 50));
      }
      await db.query(
        `UPDATE invoices SET needs_attention = true, attention_reason = 'deadline: test', attention_at = now() WHERE shop_order_id = $1`,
        [shopOrderId],
      );
      const page = await fresh.http
        .get('/admin/ui/attention')
        .set('Cookie', jar.header())
        .expect(200);
      const action = `/admin/ui/invoices/${encodeURIComponent(shopOrderId)}/resolve`;
      const forms = page.text.split('<form').filter((f) => f.includes(`action="${action}"`));
      expect(forms.some((f) => f.includes('value="charge"') && f.includes('>Charge<'))).toBe(true);
      expect(forms.some((f) => f.includes('value="unhold"') && f.includes('>Unhold<'))).toBe(true);
      expect(forms.every((f) => f.includes(`name="_csrf" value="${csrf}"`))).toBe(true);

      const refused = await fresh.http
        .post(action)
        .set('Cookie', jar.header())
        .type('form')
        .send({ _csrf: csrf, action: 'accept', status: 'succeeded', note: 'looks paid' })
        .expect(409);
      expect(refused.text).toContain('it says held (8)');
      const still = await db.query(`SELECT status FROM invoices WHERE shop_order_id = $1`, [
        shopOrderId,
      ]);
      expect(still.rows[0].status).toBe('held');
      // A form without its token changes nothing, as every console form.
      await fresh.http
        .post(action)
        .set('Cookie', jar.header())
        .type('form')
        .send({ action: 'charge' })
        .expect(403);

      const charged = await fresh.http
        .post(action)
        .set('Cookie', jar.header())
        .type('form')
        .send({ _csrf: csrf, action: 'charge' })
        .expect(303);
      expect(charged.headers.location).toBe('/admin/ui/attention');
      // The message is the server's record of the action, shown once.
      const shown = await fresh.http.get('/admin/ui/attention').set('Cookie', jar.header()).expect(200);
      expect(shown.text).toContain(`Invoice ${shopOrderId} charged: now succeeded.`);
      const again = await fresh.http.get('/admin/ui/attention').set('Cookie', jar.header()).expect(200);
      expect(again.text).not.toContain('class="flash');
      const after = await db.query(
        `SELECT status, needs_attention FROM invoices WHERE shop_order_id = $1`,
        [shopOrderId],
      );
      expect(after.rows[0]).toEqual({ status: 'succeeded', needs_attention: false });
      expect(
        ctx.sandbox.state.requests.filter(
          (r) =>
            r.path === 'invoice/charge' &&
            String((r.body as Record<string, unknown>).invoice_id) === String(inv.invoiceId),
        ),
      ).toHaveLength(1);
    } finally {
      await fresh.service.close();
    }
  });

  it('escapes stored values: a description of <script> shows as text on the list and the detail page', async () => {
    const fresh = await startTestApp({ sandbox: ctx.sandbox, databaseUrl: ctx.databaseUrl });
    try {
      const { jar } = await signIn(fresh, ADMIN_KEY);
      const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>`;
      const inv = await createInvoice({ description: evil, amount: '1234.50' });
      const detail = await fresh.http
        .get(`/admin/ui/invoices/${encodeURIComponent(String(inv.shopOrderId))}`)
        .set('Cookie', jar.header())
        .expect(200);
      expect(detail.text).not.toContain('<script>alert');
      expect(detail.text).not.toContain('<img src=x');
      expect(detail.text).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
      // Exactly as stored, with the currency's code; the timeline lists the creation.
      expect(detail.text).toContain('1,234.50 RUB');
      expect(detail.text).toMatch(/pending|awaiting_payer/);
      // The refund sums with their currency (nothing refundable before the payment).
      for (const sum of ['Refunded amount', 'Refund pending amount', 'Refundable amount'])
        expect(detail.text).toContain(`<dt>${sum}</dt><dd class="num">0.00 RUB</dd>`);
      expect(detail.text).toContain('<dt>Refund status</dt><dd class="">none</dd>');
      const list = await fresh.http
        .get(`/admin/ui/invoices?q=${encodeURIComponent(String(inv.shopOrderId))}`)
        .set('Cookie', jar.header())
        .expect(200);
      expect(list.text).toContain('1,234.50 RUB');
      // A hostile search term is a bound parameter: no rows, no error.
      const injected = await fresh.http
        .get(`/admin/ui/invoices?q=${encodeURIComponent("' OR 1=1 --")}&from=2026-13-45`)
        .set('Cookie', jar.header())
        .expect(200);
      expect(injected.text).toContain('Dates are days');
      const injected2 = await fresh.http
        .get(`/admin/ui/invoices?q=${encodeURIComponent("' OR 1=1 --")}`)
        .set('Cookie', jar.header())
        .expect(200);
      expect(injected2.text).toContain('<caption>0 invoices');
    } finally {
      await fresh.service.close();
    }
  });

  describe("an invoice's refunds and webhook deliveries", () => {
    // A fresh instance on the same database: an earlier test leaves this address rate-limited.
    let fresh: TestContext;
    let jar: CookieJar;
    beforeAll(async () => {
      fresh = await startTestApp({ sandbox: ctx.sandbox, databaseUrl: ctx.databaseUrl });
      jar = (await signIn(fresh, ADMIN_KEY)).jar;
    });
    afterAll(async () => {
      await fresh?.service.close();
    });

    /** A paid invoice with two refunds (one with characters a URL must encode), as the console sees it. */
    async function paidWithRefunds(): Promise<{ order: string; refunds: string[] }> {
      const inv = await createInvoice({ amount: '300.00' });
      const pay = await fetch(
        `${ctx.sandbox.origin}/sandbox/invoices/${String(inv.invoiceId)}/pay`,
        { method: 'POST' },
      );
      expect(pay.status).toBe(200);
      const order = String(inv.shopOrderId);
      for (let i = 0; i < 100; i++) {
        const got = await ctx.http.get(`/api/v1/invoices/${order}`).set(auth());
        if (got.body.status === 'succeeded') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const refunds = [`${order}-r1`, `${order}/r 2?x=<b>&y#z`];
      for (const shopRefundId of refunds)
        await ctx.http
          .post(`/api/v1/invoices/${order}/refunds`)
          .set(auth())
          .send({ shopRefundId, amount: '100.00' })
          .expect(201);
      return { order, refunds };
    }

    /** Deliveries of the object's events as the dispatcher writes them (state, attempts, error). */
    async function deliveriesFor(type: string, id: string, state: string, error: string | null) {
      await db.query(
        `INSERT INTO webhook_deliveries (event_id, url, entity_type, entity_id, sequence, state, attempts, last_status, last_error)
         SELECT id, 'https://shop.example/hooks', entity_type, entity_id, sequence, $3, 4, NULL, $4
           FROM events WHERE entity_type = $1 AND entity_id = $2 AND sequence IS NOT NULL`,
        [type, id, state, error],
      );
      const rows = await db.query<{ id: string }>(
        `SELECT id FROM webhook_deliveries WHERE entity_type = $1 AND entity_id = $2 ORDER BY id`,
        [type, id],
      );
      return rows.rows.map((r) => String(r.id));
    }

    it("an invoice's page lists its refunds, each linked to its page, and only its own", async () => {
      const { order, refunds } = await paidWithRefunds();
      const other = await paidWithRefunds();
      const page = await fresh.http
        .get(`/admin/ui/invoices/${encodeURIComponent(order)}`)
        .set('Cookie', jar.header())
        .expect(200);
      const section = page.text.slice(page.text.indexOf('id="refunds-h"'));
      const table = section.slice(0, section.indexOf('</section>'));
      for (const id of refunds)
        expect(table).toContain(`<a href="/admin/ui/refunds/${encodeURIComponent(id)}">`);
      // The hostile id is text, its link encoded: no markup, no second query or fragment.
      expect(table).toContain('/r 2?x=&lt;b&gt;&amp;y#z</a>');
      expect(table).not.toContain('<b>');
      expect(table.slice(table.indexOf('<tbody>')).match(/<tr>/g)).toHaveLength(2);
      expect(table).toContain('100.00 RUB');
      for (const id of other.refunds) expect(table).not.toContain(encodeURIComponent(id));
      // The link leads to the refund's own page.
      const refundPage = await fresh.http
        .get(`/admin/ui/refunds/${encodeURIComponent(refunds[1])}`)
        .set('Cookie', jar.header())
        .expect(200);
      expect(refundPage.text).toContain(`<dt>Shop order id</dt><dd class="">${order}</dd>`);
      // An invoice without refunds says so.
      const bare = await createInvoice();
      const none = await fresh.http
        .get(`/admin/ui/invoices/${encodeURIComponent(String(bare.shopOrderId))}`)
        .set('Cookie', jar.header())
        .expect(200);
      expect(none.text).toContain('No refunds.');
      expect(none.text).toContain('No webhook deliveries.');
    });

    it("an invoice's page lists its webhook deliveries: state, attempts, last error, linked to the deliveries page", async () => {
      const { order } = await paidWithRefunds();
      const ids = await deliveriesFor('invoice', order, 'failed', 'ECONNREFUSED 127.0.0.1:9');
      expect(ids.length).toBeGreaterThan(1);
      const other = await createInvoice();
      await deliveriesFor('invoice', String(other.shopOrderId), 'dead', 'HTTP 500 <not this one>');
      const page = await fresh.http
        .get(`/admin/ui/invoices/${encodeURIComponent(order)}`)
        .set('Cookie', jar.header())
        .expect(200);
      const section = page.text.slice(page.text.indexOf('id="deliveries-h"'));
      const table = section.slice(0, section.indexOf('</section>'));
      expect(table.slice(table.indexOf('<tbody>')).match(/<tr>/g)).toHaveLength(ids.length);
      expect(table).toContain('invoice.succeeded #');
      expect(table).toContain('ECONNREFUSED 127.0.0.1:9');
      expect(table).toContain('<td class="num">4</td>');
      for (const id of ids)
        expect(table).toContain(
          `<a href="/admin/ui/deliveries?state=failed#delivery-${id}">failed</a>`,
        );
      expect(table).not.toContain('not this one');
      // The link's target: the deliveries page has the row under that anchor.
      const deliveries = await fresh.http
        .get('/admin/ui/deliveries?state=failed')
        .set('Cookie', jar.header())
        .expect(200);
      for (const id of ids) expect(deliveries.text).toContain(`<tr id="delivery-${id}">`);
    });

    it("the refunds list shows the refund's own id and its order (linked), not the invoice's gateway id", async () => {
      const { order, refunds } = await paidWithRefunds();
      const list = await fresh.http
        .get(`/admin/ui/refunds?q=${encodeURIComponent(order)}`)
        .set('Cookie', jar.header())
        .expect(200);
      const invoiceId = (
        await db.query<{ id: string }>(
          `SELECT invoice_id::text AS id FROM invoices WHERE shop_order_id = $1`,
          [order],
        )
      ).rows[0].id;
      const head = list.text.slice(list.text.indexOf('<thead>'), list.text.indexOf('</thead>'));
      expect(head).toContain('<th scope="col">Shop refund id</th><th scope="col">Order</th>');
      expect(head).not.toContain('Gateway id');
      const body = list.text.slice(list.text.indexOf('<tbody>'), list.text.indexOf('</tbody>'));
      expect(body.match(/<tr>/g)).toHaveLength(2);
      for (const id of refunds)
        expect(body).toContain(`<a href="/admin/ui/refunds/${encodeURIComponent(id)}">`);
      expect(body).toContain(
        `<td><a href="/admin/ui/invoices/${encodeURIComponent(order)}">${order}</a></td>`,
      );
      expect(body).not.toContain(`<td>${invoiceId}</td>`);
      // Found by its own id too, and the invoice list keeps its gateway id column.
      const one = await fresh.http
        .get(`/admin/ui/refunds?q=${encodeURIComponent(refunds[0])}`)
        .set('Cookie', jar.header())
        .expect(200);
      expect(one.text).toContain('<caption>1 refund,');
      const invoices = await fresh.http
        .get(`/admin/ui/invoices?q=${encodeURIComponent(order)}`)
        .set('Cookie', jar.header())
        .expect(200);
      expect(invoices.text).toContain('<th scope="col">Gateway id</th>');
      expect(invoices.text).toContain(`<td>${invoiceId}</td>`);
    });

    it('the overview chart dates its hour axis', async () => {
      const page = await fresh.http.get('/admin').set('Cookie', jar.header()).expect(200);
      const labels = [...page.text.matchAll(/<text class="axis"[^>]*>([^<]*)<\/text>/g)].map(
        (m) => m[1],
      );
      const dated = /^\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2}:00$/;
      expect(labels.slice(1).length).toBeGreaterThanOrEqual(2);
      for (const l of labels.slice(1)) expect(l).toMatch(dated);
      const now = new Date();
      expect(labels.at(-1)).toBe(
        `${now.getUTCDate()} ${now.toLocaleString('en-GB', { month: 'short', timeZone: 'UTC' })} ${String(now.getUTCHours()).padStart(2, '0')}:00`,
      );
    });
  });

  it('pages a search 100 at a time, newest first: every match exactly once, even 230 rows of one microsecond', async () => {
    const payway = `paging_${Date.now().toString(36)}`;
    // One statement: every row gets the same created_at (now() of the transaction).
    await db.query(
      `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token)
       SELECT $1, $2 || '-' || n, repeat('0', 64), 'awaiting_payer', '10.00', 643, $2, md5($2 || n)
         FROM generate_series(1, 230) n`,
      [SHOP_ID, payway],
    );
    // A fresh instance: an earlier test leaves this address rate-limited on the shared one.
    const fresh = await startTestApp({ sandbox: ctx.sandbox, databaseUrl: ctx.databaseUrl });
    try {
      const { jar } = await signIn(fresh, ADMIN_KEY);
      const seen: string[] = [];
      const captions: string[] = [];
      let url: string | null = `/admin/ui/invoices?payway=${payway}`;
      let pages = 0;
      while (url !== null && pages < 5) {
        const page: { text: string } = await ctx.http
          .get(url)
          .set('Cookie', jar.header())
          .expect(200);
        pages += 1;
        captions.push(/<caption>([^<]*)<\/caption>/.exec(page.text)?.[1] ?? '');
        for (const m of page.text.matchAll(/href="\/admin\/ui\/invoices\/([^"]+)"/g))
          seen.push(decodeURIComponent(m[1]));
        // The link keeps the search (HTML-escaped in the attribute).
        const older: string | undefined = /<a href="([^"]+)" rel="next">/.exec(page.text)?.[1];
        url = older === undefined ? null : older.replaceAll('&amp;', '&');
        if (url !== null) expect(url).toContain(`payway=${payway}`);
        if (pages > 1) expect(page.text).toContain('← Newest');
      }
      expect(pages).toBe(3);
      expect(captions).toEqual([
        '100 invoices, newest first',
        '100 invoices, older, newest first',
        '30 invoices, older, newest first',
      ]);
      expect(seen).toHaveLength(230);
      expect(new Set(seen).size).toBe(230);

      // A cursor that is not ours: a message and no rows, never a 500.
      // (the second is ["k1","1' OR 1=1"]; the last names no row at all: an empty page)
      const nobody = Buffer.from(JSON.stringify(['k1', randomUUID()])).toString('base64url');
      for (const bad of ['x', 'WyJrMSIsIjEnIE9SIDE9MSJd', 'a'.repeat(300), nobody]) {
        const page = await fresh.http
          .get(`/admin/ui/invoices?payway=${payway}&after=${encodeURIComponent(bad)}`)
          .set('Cookie', jar.header())
          .expect(200);
        expect(page.text).toContain('<caption>0 invoices');
        expect(page.text).toMatch(/not valid any more|newest first/);
      }
    } finally {
      await fresh.service.close();
    }
  });

  it('ends sessions when they expire and on sign-out', async () => {
    const fresh = await startTestApp({ sandbox: ctx.sandbox, databaseUrl: ctx.databaseUrl });
    try {
      const a = await signIn(fresh, ADMIN_KEY);
      await db.query(`UPDATE admin_sessions SET expires_at = now() - interval '1 second'`);
      await fresh.http.get('/admin').set('Cookie', a.jar.header()).expect(303);
      const b = await signIn(fresh, ADMIN_KEY);
      await fresh.http
        .post('/admin/logout')
        .set('Cookie', b.jar.header())
        .type('form')
        .send({ _csrf: b.csrf })
        .expect(303);
      await fresh.http.get('/admin').set('Cookie', b.jar.header()).expect(303);
    } finally {
      await fresh.service.close();
    }
  });

  describe('sessions end with their admin key', () => {
    const OLD_KEY = 'test-admin-key-retired-0123';
    const WHSEC = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const withHook = { SHOP_WEBHOOK_URL: 'http://127.0.0.1:9/hooks', SHOP_WEBHOOK_SECRET: WHSEC };
    const handleOf = (jar: CookieJar): string =>
      createHash('sha256')
        .update(decodeURIComponent(jar.get('console_session')!))
        .digest('hex');
    const rowsOf = async (key: string): Promise<number> =>
      (
        await db.query(`SELECT count(*)::int AS n FROM admin_sessions WHERE key_id = $1`, [
          keyIdOf(key),
        ])
      ).rows[0].n as number;

    it("a removed key's session is refused on every page and form, its rows are deleted at start-up, and a Redeliver with it changes nothing", async () => {
      const before = await startTestApp({
        sandbox: ctx.sandbox,
        databaseUrl: ctx.databaseUrl,
        env: { ADMIN_API_KEYS: `${ADMIN_KEY},${OLD_KEY}`, ...withHook },
      });
      let after: TestContext | undefined;
      try {
        const old = await signIn(before, OLD_KEY);
        const kept = await signIn(before, ADMIN_KEY);
        expect(await rowsOf(OLD_KEY)).toBe(1);
        const inv = await createInvoice();
        const [event] = (
          await db.query(`SELECT id::text FROM events WHERE entity_id = $1 AND type IS NOT NULL`, [
            inv.shopOrderId,
          ])
        ).rows as Array<{ id: string }>;

        // Restart without OLD_KEY: its session row is gone.
        after = await startTestApp({
          sandbox: ctx.sandbox,
          databaseUrl: ctx.databaseUrl,
          env: { ADMIN_API_KEYS: ADMIN_KEY, ...withHook },
        });
        expect(await rowsOf(OLD_KEY)).toBe(0);
        // A session of the removed key opened since (an instance still on the old
        // configuration): refused on every request of the new one even though its row exists.
        const late = await signIn(before, OLD_KEY);
        expect(await rowsOf(OLD_KEY)).toBe(1);

        const deliveries = async (): Promise<string> =>
          JSON.stringify((await db.query(`SELECT * FROM webhook_deliveries ORDER BY id`)).rows);
        const deliveriesBefore = await deliveries();
        for (const s of [old, late]) {
          for (const path of [
            '/admin',
            '/admin/ui/deliveries',
            '/admin/ui/sessions',
            '/admin/ui/invoices',
          ]) {
            const res = await after.http.get(path).set('Cookie', s.jar.header()).expect(303);
            expect(res.headers.location).toBe('/admin/login');
          }
          await after.http
            .post(`/admin/ui/events/${event.id}/redeliver`)
            .set('Cookie', s.jar.header())
            .type('form')
            .send({ _csrf: s.csrf })
            .expect(401);
          await after.http
            .post('/admin/ui/sessions/revoke')
            .set('Cookie', s.jar.header())
            .type('form')
            .send({ _csrf: s.csrf, keyId: keyIdOf(ADMIN_KEY) })
            .expect(401);
        }
        expect(await deliveries()).toBe(deliveriesBefore);
        // The key still configured keeps its session, and its Redeliver works.
        await after.http.get('/admin').set('Cookie', kept.jar.header()).expect(200);
        await after.http
          .post(`/admin/ui/events/${event.id}/redeliver`)
          .set('Cookie', kept.jar.header())
          .type('form')
          .send({ _csrf: kept.csrf })
          .expect(303);
        expect(await deliveries()).not.toBe(deliveriesBefore);
      } finally {
        await after?.service.close();
        await before.service.close();
      }
      // The next start-up without the key deletes the late row too.
      const again = await startTestApp({ sandbox: ctx.sandbox, databaseUrl: ctx.databaseUrl });
      await again.service.close();
      expect(await rowsOf(OLD_KEY)).toBe(0);
    });

    it('lists the sessions without their tokens, and revoking one from the console ends it at once', async () => {
      const fresh = await startTestApp({ sandbox: ctx.sandbox, databaseUrl: ctx.databaseUrl });
      try {
        const me = await signIn(fresh, ADMIN_KEY);
        const other = await signIn(fresh, ADMIN_KEY);
        const page = await fresh.http
          .get('/admin/ui/sessions')
          .set('Cookie', me.jar.header())
          .expect(200);
        expect(page.text).toContain(handleOf(other.jar));
        expect(page.text).toContain(keyIdOf(ADMIN_KEY));
        expect(page.text).toContain('127.0.0.1');
        // Neither session's cookie id nor the other's CSRF token is on the page.
        for (const secret of [
          decodeURIComponent(me.jar.get('console_session')!),
          decodeURIComponent(other.jar.get('console_session')!),
          other.csrf,
          ADMIN_KEY,
        ])
          expect(page.text).not.toContain(secret);

        // A handle that names no session, or a malformed one, ends nothing.
        for (const session of [randomBytes(32).toString('hex'), "' OR 1=1 --", 'x'.repeat(64)])
          await fresh.http
            .post('/admin/ui/sessions/revoke')
            .set('Cookie', me.jar.header())
            .type('form')
            .send({ _csrf: me.csrf, session })
            .expect(303);
        await fresh.http.get('/admin').set('Cookie', other.jar.header()).expect(200);

        const res = await fresh.http
          .post('/admin/ui/sessions/revoke')
          .set('Cookie', me.jar.header())
          .type('form')
          .send({ _csrf: me.csrf, session: handleOf(other.jar) })
          .expect(303);
        expect(res.headers.location).toBe('/admin/ui/sessions');
        const listed = await fresh.http.get('/admin/ui/sessions').set('Cookie', me.jar.header()).expect(200);
        expect(listed.text).toContain('1 session revoked.');
        const gone = await fresh.http.get('/admin').set('Cookie', other.jar.header()).expect(303);
        expect(gone.headers.location).toBe('/admin/login');
        await fresh.http.get('/admin').set('Cookie', me.jar.header()).expect(200);

        // Revoking every session of one's own key signs this browser out as well.
        const third = await signIn(fresh, ADMIN_KEY);
        const all = await fresh.http
          .post('/admin/ui/sessions/revoke')
          .set('Cookie', me.jar.header())
          .type('form')
          .send({ _csrf: me.csrf, keyId: keyIdOf(ADMIN_KEY) })
          .expect(303);
        expect(all.headers.location).toBe('/admin/login');
        for (const s of [me, third])
          await fresh.http.get('/admin').set('Cookie', s.jar.header()).expect(303);
        expect(await rowsOf(ADMIN_KEY)).toBe(0);
      } finally {
        await fresh.service.close();
      }
    });
  });

  describe('CSV export and saved searches of the lists', () => {
    const OTHER_KEY = 'test-admin-key-second-0123';
    let app: TestContext;
    let me: { jar: CookieJar; csrf: string };
    let other: { jar: CookieJar; csrf: string };

    beforeAll(async () => {
      app = await startTestApp({
        sandbox: ctx.sandbox,
        databaseUrl: ctx.databaseUrl,
        env: { ADMIN_API_KEYS: `${ADMIN_KEY},${OTHER_KEY}` },
      });
      me = await signIn(app, ADMIN_KEY);
      other = await signIn(app, OTHER_KEY);
    });

    afterAll(async () => {
      await app?.service.close();
    });

    /** RFC 4180: quoted fields may hold commas, doubled quotes and line breaks. */
    function parseCsv(text: string): string[][] {
      const rows: string[][] = [];
      let row: string[] = [];
      let cell = '';
      let quoted = false;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (quoted && c === '"' && text[i + 1] === '"') {
          cell += '"';
          i += 1;
        } else if (c === '"') {
          quoted = !quoted;
        } else if (!quoted && c === ',') {
          row.push(cell);
          cell = '';
        } else if (!quoted && c === '\r' && text[i + 1] === '\n') {
          row.push(cell);
          rows.push(row);
          row = [];
          cell = '';
          i += 1;
        } else {
          cell += c;
        }
      }
      if (cell !== '' || row.length > 0) rows.push([...row, cell]);
      return rows;
    }

    async function download(
      path: string,
      s: { jar: CookieJar } = me,
    ): Promise<{
      header: string[];
      rows: Array<Record<string, string>>;
      res: { headers: Record<string, string>; text: string };
    }> {
      const res = await app.http
        .get(path)
        .set('Cookie', s.jar.header())
        .buffer(true)
        .parse((r, cb) => {
          let data = '';
          r.setEncoding('utf8');
          r.on('data', (c: string) => (data += c));
          r.on('end', () => cb(null, data));
        })
        .expect(200);
      const text = res.body as string;
      const [header, ...rest] = parseCsv(text);
      return {
        header,
        rows: rest.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]]))),
        res: { headers: res.headers as Record<string, string>, text },
      };
    }

    it('exports every invoice matching status and a day range, across keyset batches, exactly as stored', async () => {
      const payway = `csv_${Date.now().toString(36)}`;
      // 2,400 rows over ten days, 120 sharing each (day, status) timestamp to the microsecond.
      await db.query(
        `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token, description, created_at, payment_token)
         SELECT $1, $2 || '-' || n, repeat('0', 64), CASE WHEN n % 2 = 0 THEN 'succeeded' ELSE 'awaiting_payer' END,
                CASE WHEN n = 2 THEN '123456789012345678.99' ELSE ((n::bigint * 1000003)::text || '.07') END::numeric, 643, $2, md5($2 || n),
                CASE WHEN n = 4 THEN '=HYPERLINK("http://evil")' WHEN n = 6 THEN 'a, "quoted"' ELSE 'order ' || n END,
                timestamptz '2026-01-01 00:00:00+00' + ((n % 10) || ' days')::interval,
                CASE WHEN n = 8 THEN 'SEALED-TOKEN-SECRET-' || n END
           FROM generate_series(1, 2400) n`,
        [SHOP_ID, payway],
      );
      const expected = (
        await db.query(
          `SELECT shop_order_id, amount::text AS amount FROM invoices
            WHERE payway = $1 AND status = 'succeeded'
              AND created_at >= '2026-01-03T00:00:00Z' AND created_at < '2026-01-08T00:00:00Z'`,
          [payway],
        )
      ).rows as Array<{ shop_order_id: string; amount: string }>;
      expect(expected.length).toBeGreaterThan(500); // more than one batch

      const { header, rows, res } = await download(
        `/admin/ui/lists/invoices/export.csv?payway=${payway}&status=succeeded&from=2026-01-03&to=2026-01-07`,
      );
      expect(res.headers['content-type']).toMatch(/^text\/csv; charset=utf-8/);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-disposition']).toBe(
        `attachment; filename="invoices-${new Date().toISOString().slice(0, 10)}.csv"`,
      );
      expect(header).toContain('amount');
      expect(rows).toHaveLength(expected.length);
      expect(new Set(rows.map((r) => r.shop_order_id)).size).toBe(expected.length);
      const byId = new Map(expected.map((e) => [e.shop_order_id, e.amount]));
      for (const r of rows) {
        expect(byId.get(r.shop_order_id)).toBe(r.amount);
        expect(r.status).toBe('succeeded');
        expect(r.created_at).toMatch(/^2026-01-0[3-7]T00:00:00\.000Z$/);
      }
      // Newest first, like the page.
      expect([...rows.map((r) => r.created_at)]).toEqual(
        [...rows.map((r) => r.created_at)].sort().reverse(),
      );
      // n = 2 is on day 2 (outside); n = 12 is the same shape of row inside the range.
      const all = await download(`/admin/ui/lists/invoices/export.csv?payway=${payway}`);
      expect(all.rows).toHaveLength(2400);
      const big = all.rows.find((r) => r.shop_order_id === `${payway}-2`)!;
      expect(big.amount).toBe('123456789012345678.99');
      expect(all.rows.find((r) => r.shop_order_id === `${payway}-4`)!.description).toBe(
        `'=HYPERLINK("http://evil")`,
      );
      expect(all.rows.find((r) => r.shop_order_id === `${payway}-6`)!.description).toBe(
        'a, "quoted"',
      );
      expect(all.res.text).not.toContain('SEALED-TOKEN-SECRET');
      expect(all.res.text).not.toContain(md5Of(`${payway}8`));

      // The page links to this export with its filters.
      const page = await app.http
        .get(`/admin/ui/invoices?payway=${payway}&status=succeeded`)
        .set('Cookie', me.jar.header())
        .expect(200);
      expect(page.text).toContain(
        `href="/admin/ui/lists/invoices/export.csv?status=succeeded&amp;payway=${payway}"`,
      );
    });

    it('exports refunds, payouts, notifications, deliveries and the attention queue with no secrets; payout accounts masked', async () => {
      const tag = `exp${Date.now().toString(36)}`;
      const [inv] = (
        await db.query(
          `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token, refunded_amount, needs_attention, attention_reason)
           VALUES ($1, $2, repeat('0', 64), 'succeeded', '500.00', 643, 'card_rub', 'PAYTOKEN-SECRET-1', '0.01', true, '@flagged by test')
           RETURNING id`,
          [SHOP_ID, `${tag}-order`],
        )
      ).rows as Array<{ id: string }>;
      await db.query(
        `INSERT INTO refunds (shop_id, shop_refund_id, invoice_pk, shop_order_id, request_fingerprint, amount, currency, status, submit_state)
         VALUES ($1, $2, $3, $4, repeat('0', 64), '0.01', 643, 'SUCCESS', 'accepted')`,
        [SHOP_ID, `${tag}-refund`, inv.id, `${tag}-order`],
      );
      await db.query(
        `INSERT INTO payouts (shop_id, shop_payment_id, request_fingerprint, status, amount, amount_type, shop_currency, payway, account_masked, account_sealed, poll_deadline, description)
         VALUES ($1, $2, repeat('0', 64), 'processing', '99999999.99', 'ps_amount', 643, 'card_rub', '4111 11** **** 1111', 'SEALED-ACCOUNT-4111111111111111', now(), '-2+3')`,
        [PAYOUT_SHOP_ID, `${tag}-payout`],
      );
      await db.query(
        `INSERT INTO notifications (type, content_key, payload, content_type, verified, status, shop_order_id, outcome)
         VALUES ('invoice', md5($1) || md5($1), $2::jsonb, 'application/json', true, 'applied', $1, 'succeeded')`,
        [
          `${tag}-order`,
          JSON.stringify({ sign: 'SIGN-SECRET-abc', shop_order_id: `${tag}-order` }),
        ],
      );

      const refunds = await download(`/admin/ui/lists/refunds/export.csv?q=${tag}-order`);
      expect(refunds.rows).toEqual([
        expect.objectContaining({
          shop_refund_id: `${tag}-refund`,
          amount: '0.01',
          status: 'SUCCESS',
        }),
      ]);

      const payouts = await download(`/admin/ui/lists/payouts/export.csv?q=${tag}-payout`);
      expect(payouts.rows).toEqual([
        expect.objectContaining({
          shop_payment_id: `${tag}-payout`,
          amount: '99999999.99',
          account_masked: '4111 11** **** 1111',
          description: `'-2+3`,
        }),
      ]);
      expect(payouts.res.text).not.toContain('SEALED-ACCOUNT');
      expect(payouts.res.text).not.toContain('4111111111111111');

      const notes = await download(`/admin/ui/lists/notifications/export.csv?q=${tag}-order`);
      expect(notes.rows).toEqual([
        expect.objectContaining({
          shop_order_id: `${tag}-order`,
          status: 'applied',
          verified: 'true',
        }),
      ]);
      expect(notes.res.text).not.toContain('SIGN-SECRET');

      const attention = await download('/admin/ui/lists/attention/export.csv');
      const flagged = attention.rows.find((r) => r.id === `${tag}-order`)!;
      expect(flagged).toEqual(
        expect.objectContaining({
          object_type: 'invoice',
          amount: '500.00',
          reason: `'@flagged by test`,
        }),
      );
      expect(attention.res.text).not.toContain('PAYTOKEN-SECRET');

      const deliveries = await download('/admin/ui/lists/deliveries/export.csv?state=dead');
      expect(deliveries.header).toContain('last_error');

      // Every list page links its export; without a session the export is the sign-in page.
      for (const [page, list] of [
        ['/admin/ui/refunds', 'refunds'],
        ['/admin/ui/payouts', 'payouts'],
        ['/admin/ui/notifications', 'notifications'],
        ['/admin/ui/deliveries', 'deliveries'],
        ['/admin/ui/attention', 'attention'],
      ]) {
        const html = await app.http.get(page).set('Cookie', me.jar.header()).expect(200);
        expect(html.text).toContain(`href="/admin/ui/lists/${list}/export.csv"`);
        const anon = await app.http.get(`/admin/ui/lists/${list}/export.csv`).expect(303);
        expect(anon.headers.location).toBe('/admin/login');
      }
      await app.http
        .get('/admin/ui/lists/secrets/export.csv')
        .set('Cookie', me.jar.header())
        .expect(404);
    });

    it('refuses filter names a list does not declare, and values that are not days, naming the field', async () => {
      for (const [query, field] of [
        ['status=succeeded&shop_id=1', 'shop_id'],
        ['status%27%20OR%201%3D1--=x', "status' OR 1=1--"],
        ['STATUS=succeeded', 'STATUS'],
        ['status=a&status=b', 'status'],
        ['status[x]=a', 'status[x]'],
        ['from=2026-13-01', 'from'],
        ['after=WyJrMSJd', 'after'],
      ]) {
        const res = await app.http
          .get(`/admin/ui/lists/invoices/export.csv?${query}`)
          .set('Cookie', me.jar.header())
          .expect(400);
        expect(res.headers['content-type']).toMatch(/text\/html/);
        expect(res.text).toContain(`${field.replaceAll("'", '&#39;')}:`);
      }
      await app.http
        .get('/admin/ui/lists/refunds/export.csv?payway=x')
        .set('Cookie', me.jar.header())
        .expect(400);
    });

    it('saves a search for the signed-in key, lists it, reopens the list with its filters and deletes it', async () => {
      const payway = `saved_${Date.now().toString(36)}`;
      const save = await app.http
        .post('/admin/ui/lists/invoices/searches')
        .set('Cookie', me.jar.header())
        .type('form')
        .send({
          _csrf: me.csrf,
          name: 'Paid <b>in</b> January',
          status: 'succeeded',
          payway,
          from: '2026-01-01',
          to: '2026-01-31',
        })
        .expect(303);
      const reopened = `/admin/ui/invoices?status=succeeded&payway=${payway}&from=2026-01-01&to=2026-01-31`;
      expect(save.headers.location).toBe(reopened);

      const page = await app.http
        .get('/admin/ui/invoices')
        .set('Cookie', me.jar.header())
        .expect(200);
      expect(page.text).toContain('Paid &lt;b&gt;in&lt;/b&gt; January');
      expect(page.text).not.toContain('<b>in</b>');
      const href = /<ul class="saved-searches"[^]*?<a href="([^"]+)">Paid/.exec(page.text)![1];
      expect(href.replaceAll('&amp;', '&')).toBe(reopened);
      const opened = await app.http
        .get(href.replaceAll('&amp;', '&'))
        .set('Cookie', me.jar.header())
        .expect(200);
      expect(opened.text).toContain('<option value="succeeded" selected>');
      expect(opened.text).toContain(`id="payway" name="payway" value="${payway}"`);
      expect(opened.text).toContain('id="from" name="from" type="date" value="2026-01-01"');
      const [row] = (
        await db.query(
          `SELECT id::text AS id, key_id, list, query FROM console_saved_searches WHERE name = $1`,
          ['Paid <b>in</b> January'],
        )
      ).rows as Array<{ id: string; key_id: string; list: string; query: Record<string, string> }>;
      expect(row).toEqual({
        id: row.id,
        key_id: keyIdOf(ADMIN_KEY),
        list: 'invoices',
        query: { status: 'succeeded', payway, from: '2026-01-01', to: '2026-01-31' },
      });

      // Private to the key: another operator neither sees nor deletes it.
      const theirs = await app.http
        .get('/admin/ui/invoices')
        .set('Cookie', other.jar.header())
        .expect(200);
      expect(theirs.text).not.toContain('Paid &lt;b&gt;in&lt;/b&gt; January');
      await app.http
        .post(`/admin/ui/lists/invoices/searches/${row.id}/delete`)
        .set('Cookie', other.jar.header())
        .type('form')
        .send({ _csrf: other.csrf })
        .expect(404);
      // Nor through another list's address, nor without the form's token.
      await app.http
        .post(`/admin/ui/lists/payouts/searches/${row.id}/delete`)
        .set('Cookie', me.jar.header())
        .type('form')
        .send({ _csrf: me.csrf })
        .expect(404);
      await app.http
        .post(`/admin/ui/lists/invoices/searches/${row.id}/delete`)
        .set('Cookie', me.jar.header())
        .type('form')
        .send({})
        .expect(403);
      expect(
        (await db.query(`SELECT 1 FROM console_saved_searches WHERE id = $1`, [row.id])).rowCount,
      ).toBe(1);

      const del = await app.http
        .post(`/admin/ui/lists/invoices/searches/${row.id}/delete`)
        .set('Cookie', me.jar.header())
        .type('form')
        .send({ _csrf: me.csrf })
        .expect(303);
      expect(del.headers.location).toBe('/admin/ui/invoices');
      expect(
        (await db.query(`SELECT 1 FROM console_saved_searches WHERE id = $1`, [row.id])).rowCount,
      ).toBe(0);
      const after = await app.http
        .get('/admin/ui/invoices')
        .set('Cookie', me.jar.header())
        .expect(200);
      expect(after.text).not.toContain('Paid &lt;b&gt;in&lt;/b&gt; January');
    });

    it('refuses a save without the CSRF token, with unknown filter names, or without a name', async () => {
      const count = async (): Promise<number> =>
        (await db.query(`SELECT count(*)::int AS n FROM console_saved_searches`)).rows[0]
          .n as number;
      const before = await count();
      await app.http
        .post('/admin/ui/lists/invoices/searches')
        .set('Cookie', me.jar.header())
        .type('form')
        .send({ name: 'no token', status: 'succeeded' })
        .expect(403);
      await app.http
        .post('/admin/ui/lists/invoices/searches')
        .set('Cookie', me.jar.header())
        .type('form')
        .send({ _csrf: 'x'.repeat(43), name: 'wrong token', status: 'succeeded' })
        .expect(403);
      for (const [body, field] of [
        [
          { "status = 'x' OR 1=1; DROP TABLE invoices; --": 'x' },
          'status = &#39;x&#39; OR 1=1; DROP TABLE',
        ],
        [{ shop_id: '1' }, 'shop_id'],
        [{ key_id: keyIdOf(OTHER_KEY) }, 'key_id'],
        [{ 'status[]': 'a' }, 'status[]'],
        [{ from: 'yesterday' }, 'from'],
        [{ status: 'x'.repeat(300) }, 'status'],
        [{ status: 'succeeded', name: '' }, 'name'],
      ] as Array<[Record<string, string>, string]>) {
        const res = await app.http
          .post('/admin/ui/lists/invoices/searches')
          .set('Cookie', me.jar.header())
          .type('form')
          .send({ _csrf: me.csrf, name: 'bad', ...body })
          .expect(400);
        expect(res.text).toContain(field);
      }
      // A list with no such filter refuses it too (refunds have no payway).
      await app.http
        .post('/admin/ui/lists/refunds/searches')
        .set('Cookie', me.jar.header())
        .type('form')
        .send({ _csrf: me.csrf, name: 'bad', payway: 'x' })
        .expect(400);
      expect(await count()).toBe(before);
      await app.http
        .post('/admin/ui/lists/invoices/searches')
        .set('Cookie', me.jar.header())
        .type('form')
        .send({ _csrf: other.csrf, name: 'their token', status: 'succeeded' })
        .expect(403);
      expect(await count()).toBe(before);
    });
  });
});
