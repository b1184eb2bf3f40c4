import { Client } from 'pg';
import { admin, auth, startTestApp, TestContext } from '../support/app';
import { newInvoice, rawRequest } from '../support/hostile';
import { PAYMENT } from '../support/payways';

/**
 * Attacks on the payer page and the HTTP edge it shares: unknown parameters, its CSP
 * and form, odd links, oversized requests, cache and security headers on every answer.
 */

describe('payer page', () => {
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

  it('ignores unknown query parameters and sends the form with a nonce CSP and no inline handler', async () => {
    const inv = await newInvoice(ctx, { payway: PAYMENT.sandboxCard('post_redirect') });
    const res = await ctx.http.get(`${new URL(String(inv.payUrl)).pathname}${new URL(String(inv.payUrl)).search}&utm_source=x&utm_medium=(&(=1&__proto__=1`).expect(200);
    expect(res.text).toContain('<form method="post"');
    const csp = String(res.headers['content-security-policy']);
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(res.text).toContain(`<script nonce="${nonce}">`);
    expect(res.text).not.toContain('onload=');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['strict-transport-security']).toBeUndefined(); // PUBLIC_BASE_URL is http here
    // A second visit gets a fresh nonce.
    const again = await ctx.http.get(new URL(String(inv.payUrl)).pathname + new URL(String(inv.payUrl)).search);
    expect(String(again.headers['content-security-policy'])).not.toContain(nonce);
  });

  it.each([
    ['succeeded', 'Payment received'],
    ['held', 'Payment received'],
    ['rejected', 'Payment not completed'],
    ['unheld', 'Payment not completed'],
  ])('a %s invoice shows a status page instead of sending the payer on', async (status, text) => {
    const inv = await newInvoice(ctx);
    await db.query(`UPDATE invoices SET status = $2 WHERE shop_order_id = $1`, [inv.shopOrderId, status]);
    const res = await ctx.http.get(new URL(String(inv.payUrl)).pathname + new URL(String(inv.payUrl)).search).expect(200);
    expect(res.text).toContain(text);
    expect(res.text).not.toContain('<form');
    expect(res.text).not.toContain('<script');
  });

  it.each(['javascript:alert(document.domain)', 'data:text/html,<script>alert(1)</script>', 'ftp://files.example/x', 'JAVASCRIPT:alert(1)'])(
    'a redirect address %s from the gateway is never used: error page, invoice flagged and audited',
    async (url) => {
      for (const method of ['POST', 'GET']) {
        const inv = await newInvoice(ctx);
        await db.query(`UPDATE invoices SET redirect = $2 WHERE shop_order_id = $1`, [inv.shopOrderId, JSON.stringify({ method, url, params: {} })]);
        const res = await ctx.http.get(new URL(String(inv.payUrl)).pathname + new URL(String(inv.payUrl)).search).redirects(0);
        expect(res.status).toBe(502);
        expect(res.headers.location).toBeUndefined();
        expect(res.text).not.toContain(url.slice(0, 10));
        const row = await db.query(`SELECT needs_attention FROM invoices WHERE shop_order_id = $1`, [inv.shopOrderId]);
        expect(row.rows[0].needs_attention).toBe(true);
        const events = await db.query(`SELECT details FROM events WHERE entity_id = $1 AND details ? 'attention'`, [inv.shopOrderId]);
        expect(events.rowCount).toBe(1);
      }
    },
  );

  it('GET /pay/x?(=1 and other odd links are 404 problem+json, never 500', async () => {
    for (const target of ['/pay/x?(=1', '/pay/x?t=1&t=2', '/pay/x?t[]=1', '/pay/x?((((((((((((((((((((a*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)=1', '/pay/%00?t=1']) {
      const res = await rawRequest(ctx.url, 'GET', target);
      expect([target, res.status < 500]).toEqual([target, true]);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
  });

  it('oversized requests are refused with problem+json before any handler: 1 MB URL, 1 MB header, 1 MB body', async () => {
    const big = 'a'.repeat(1 << 20);
    const url = await rawRequest(ctx.url, 'GET', `/api/v1/invoices?x=${big}`, auth());
    expect([url.status, url.headers['content-type']]).toEqual([431, 'application/problem+json']);
    const header = await rawRequest(ctx.url, 'GET', '/health', { 'X-Big': big });
    expect([header.status, header.headers['content-type']]).toEqual([431, 'application/problem+json']);
    const body = await rawRequest(ctx.url, 'POST', '/api/v1/invoices', { ...auth(), 'Content-Type': 'application/json' }, JSON.stringify({ description: big }));
    expect(body.status).toBe(413);
    expect(body.headers['content-type']).toMatch(/application\/problem\+json/);
    await ctx.http.get('/health').expect(200);
  });

  // Answers carrying payUrl?t= (and admins' raw tokens) were cacheable.
  it('Cache-Control: no-store on every /api/v1, /admin and /pay answer, errors included; only the console stylesheet is cacheable', async () => {
    const created = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId: `cc-${Date.now()}`, amount: '100.10', currency: 643, payway: PAYMENT.card });
    expect(created.status).toBe(201);
    const payUrl = new URL(String(created.body.payUrl));
    const answers: Array<[string, { status: number; headers: Record<string, string> }]> = [
      ['create 201', created],
      ['list 200 shop', await ctx.http.get('/api/v1/invoices').set(auth())],
      ['get 200 admin', await ctx.http.get(`/api/v1/invoices/${String(created.body.shopOrderId)}`).set(admin())],
      ['admin list 200', await ctx.http.get('/api/v1/admin/notifications').set(admin())],
      ['no key 401', await ctx.http.get('/api/v1/invoices')],
      ['wrong key 401', await ctx.http.get('/api/v1/invoices').set('Authorization', 'Bearer wrong-0123456789abcdef')],
      ['shop on admin 403', await ctx.http.get('/api/v1/admin/notifications').set(auth())],
      ['unknown 404', await ctx.http.get('/api/v1/invoices/nothing-here').set(auth())],
      ['no route 404', await ctx.http.get('/api/v1/nothing').set(auth())],
      ['other spelling 404', await ctx.http.get('/API/V1/invoices').set(auth())],
      ['invalid 400', await ctx.http.post('/api/v1/invoices').set(auth()).send({ amount: 'x' })],
      ['malformed 400', await ctx.http.post('/api/v1/invoices').set(auth()).set('Content-Type', 'application/json').send('{')],
      ['pay 200', await ctx.http.get(payUrl.pathname + payUrl.search)],
      ['pay 404', await ctx.http.get('/pay/nothing?t=x')],
      ['console login 200', await ctx.http.get('/admin/login')],
      ['console 303', await ctx.http.get('/admin').redirects(0)],
      ['console page 303', await ctx.http.get('/admin/ui/invoices').redirects(0)],
      ['console bad form', await ctx.http.post('/admin/login').type('form').send({ key: 'nope' })],
      ['console 404', await ctx.http.get('/admin/ui/nothing/at/all')],
      ['431', await rawRequest(ctx.url, 'GET', `/api/v1/invoices?x=${'a'.repeat(1 << 17)}`, auth())],
    ];
    for (const [name, res] of answers) {
      expect([name, res.status, res.headers['cache-control']]).toEqual([name, res.status, 'no-store']);
    }
    const css = await ctx.http.get('/admin/ui/console.css').expect(200);
    expect(css.headers['cache-control']).toBe('public, max-age=300');
  });

  it('security headers on every response (API, problem, health)', async () => {
    for (const res of [await ctx.http.get('/health'), await ctx.http.get('/api/v1/invoices').set(auth()), await ctx.http.get('/api/v1/nothing')]) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(String(res.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
      expect(String(res.headers['content-security-policy'])).not.toMatch(/script-src[^;]*unsafe-inline/);
      // Helmet's whole set, worked out once at start-up, on every answer.
      expect(res.headers).toMatchObject({
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-resource-policy': 'same-origin',
        'origin-agent-cluster': '?1',
        'referrer-policy': 'no-referrer',
        'x-dns-prefetch-control': 'off',
        'x-download-options': 'noopen',
        'x-frame-options': 'SAMEORIGIN',
        'x-permitted-cross-domain-policies': 'none',
        'x-xss-protection': '0',
      });
      expect(res.headers['x-powered-by']).toBeUndefined();
      // Every answer is no-store: no body is hashed for a validator.
      expect(res.headers.etag).toBeUndefined();
    }
  });
});
