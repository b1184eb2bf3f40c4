import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ADMIN_KEY, admin, auth, SHOP_KEY, startTestApp, TestContext } from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';
import { hidden, signIn } from './console-session';

const ENV = {
  PAYOUT_POLL_INTERVAL_S: '0.2',
  PAYOUT_APPROVAL_THRESHOLD: '643:5000.00',
  PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:20000',
  REPORT_TIMEZONE: 'Pacific/Kiritimati',
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Each object's own console page acts on it through the API's own rules: refund an invoice,
 * charge / unhold a held one, recheck, approve / reject a payout. Every form needs its session's
 * CSRF token; status messages are the server's record of the action, never text from a link.
 */
describe('console actions on object pages', () => {
  let ctx: TestContext;
  let db: Client;

  beforeAll(async () => {
    ctx = await startTestApp({ env: ENV });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  async function until(check: () => Promise<boolean>, what: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if (await check()) return;
      await sleep(50);
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  async function invoiceStatus(id: string): Promise<string> {
    const r = await db.query(`SELECT status FROM invoices WHERE shop_order_id = $1`, [id]);
    return String(r.rows[0]?.status);
  }

  /** An invoice paid at once (succeeded), or held when two-step. */
  async function paidInvoice(twoStep = false): Promise<string> {
    const shopOrderId = `cact-${randomUUID()}`;
    const created = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId,
        amount: '100.00',
        currency: 643,
        payway: twoStep ? PAYMENT.card : PAYMENT.cardSuccess,
        ...(twoStep ? { twoStep: true } : {}),
      })
      .expect(201);
    if (twoStep) {
      const paid = await fetch(
        `${ctx.sandbox.origin}/sandbox/invoices/${String(created.body.invoiceId)}/pay`,
        { method: 'POST' },
      );
      expect(paid.status).toBe(200);
      await until(async () => (await invoiceStatus(shopOrderId)) === 'held', 'held');
    } else {
      await until(async () => {
        const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
        return got.body.status === 'succeeded';
      }, 'succeeded');
    }
    return shopOrderId;
  }

  async function refundCount(shopOrderId: string): Promise<number> {
    const r = await db.query(`SELECT count(*)::int AS n FROM refunds WHERE shop_order_id = $1`, [
      shopOrderId,
    ]);
    return r.rows[0].n as number;
  }

  const gatewayCalls = (path: string): number =>
    ctx.sandbox.state.requests.filter((r) => r.path === path).length;

  async function awaitingPayout(): Promise<string> {
    const id = `cact-p-${randomUUID()}`;
    const res = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({
        shopPaymentId: id,
        amount: '6000',
        amountType: 'ps_amount',
        shopCurrency: 643,
        payway: PAYOUT.card,
        account: '4111111111111111',
      });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('awaiting_approval');
    return id;
  }

  async function payoutStatus(id: string): Promise<string> {
    const r = await db.query(`SELECT status FROM payouts WHERE shop_payment_id = $1`, [id]);
    return String(r.rows[0]?.status);
  }

  it("refunds an invoice from its page through the API's rules; the refund shows through the API; the message is shown once", async () => {
    const shopOrderId = await paidInvoice();
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    const pagePath = `/admin/ui/invoices/${encodeURIComponent(shopOrderId)}`;
    const page = await ctx.http.get(pagePath).set('Cookie', jar.header()).expect(200);
    const action = `${pagePath}/refund`;
    expect(page.text).toContain(`action="${action}"`);
    const shopRefundId = hidden(page.text, 'shopRefundId');
    expect(shopRefundId).toMatch(/^console-/);
    const post = (form: Record<string, string>, cookie = jar.header()) =>
      ctx.http.post(action).set('Cookie', cookie).type('form').send(form);
    const refundsBefore = gatewayCalls('invoice/create-refund');

    // The API's validation and rules, with nothing written and nothing sent.
    const comma = await post({ _csrf: csrf, shopRefundId, amount: '10,00', reason: 'damaged' }).expect(400);
    expect(comma.text).toContain('amount');
    const tooMuch = await post({ _csrf: csrf, shopRefundId, amount: '100.01', reason: 'damaged' }).expect(422);
    expect(tooMuch.text).toContain('100.01 more does not fit');
    await post({ _csrf: csrf, shopRefundId, amount: '10.00', reason: '' }).expect(400);
    expect(await refundCount(shopOrderId)).toBe(0);
    expect(gatewayCalls('invoice/create-refund')).toBe(refundsBefore);

    const made = await post({ _csrf: csrf, shopRefundId, amount: '30.50', reason: 'damaged in transit' }).expect(303);
    expect(made.headers.location).toBe(pagePath);
    const shown = await ctx.http.get(pagePath).set('Cookie', jar.header()).expect(200);
    expect(shown.text).toMatch(new RegExp(`class="flash ok"[^>]*>Refund ${shopRefundId} of 30.50 made`));
    const again = await ctx.http.get(pagePath).set('Cookie', jar.header()).expect(200);
    expect(again.text).not.toContain('class="flash');

    // The same form sent twice is one refund (its id was made with the page).
    await post({ _csrf: csrf, shopRefundId, amount: '30.50', reason: 'damaged in transit' }).expect(303);
    expect(await refundCount(shopOrderId)).toBe(1);
    expect(gatewayCalls('invoice/create-refund')).toBe(refundsBefore + 1);

    const api = await ctx.http.get(`/api/v1/invoices/${shopOrderId}/refunds`).set(auth()).expect(200);
    expect(api.body.items).toHaveLength(1);
    expect(api.body.items[0]).toMatchObject({
      shopRefundId,
      amount: '30.50',
      metadata: { reason: 'damaged in transit' },
    });
    // Audited as the signed-in operator's key.
    const audit = await db.query(
      `SELECT key_id FROM events WHERE entity_type = 'refund' AND entity_id = $1 ORDER BY id LIMIT 1`,
      [shopRefundId],
    );
    expect(audit.rows[0]?.key_id).toMatch(/^[0-9a-f]{12}$/);
  });

  it('refuses a refund form without its token, with another session\'s token, with a shop or admin bearer key, and without a session: nothing written', async () => {
    const shopOrderId = await paidInvoice();
    const me = await signIn(ctx, ADMIN_KEY);
    const other = await signIn(ctx, ADMIN_KEY);
    const action = `/admin/ui/invoices/${encodeURIComponent(shopOrderId)}/refund`;
    const form = { shopRefundId: `console-x-${randomUUID()}`, amount: '5.00', reason: 'attack' };
    await ctx.http.post(action).set('Cookie', me.jar.header()).type('form').send(form).expect(403);
    await ctx.http
      .post(action)
      .set('Cookie', me.jar.header())
      .type('form')
      .send({ ...form, _csrf: other.csrf })
      .expect(403);
    await ctx.http
      .post(action)
      .set('Cookie', me.jar.header())
      .type('form')
      .send({ ...form, _csrf: `${me.csrf}x` })
      .expect(403);
    // A token sent in the query string is not the form's.
    await ctx.http
      .post(`${action}?_csrf=${encodeURIComponent(me.csrf)}`)
      .set('Cookie', me.jar.header())
      .type('form')
      .send(form)
      .expect(403);
    for (const key of [SHOP_KEY, ADMIN_KEY]) {
      await ctx.http
        .post(action)
        .set('Authorization', `Bearer ${key}`)
        .type('form')
        .send({ ...form, _csrf: me.csrf })
        .expect(401);
    }
    // JSON with the right token but no session cookie: still no session.
    await ctx.http.post(action).send({ ...form, _csrf: me.csrf }).expect(401);
    expect(await refundCount(shopOrderId)).toBe(0);
  });

  it('the same refund form sent five times at once is one refund and one gateway call', async () => {
    const shopOrderId = await paidInvoice();
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    const pagePath = `/admin/ui/invoices/${encodeURIComponent(shopOrderId)}`;
    const page = await ctx.http.get(pagePath).set('Cookie', jar.header()).expect(200);
    const shopRefundId = hidden(page.text, 'shopRefundId');
    const before = ctx.sandbox.state.requests.filter(
      (r) => r.path === 'invoice/create-refund' && (r.body as Record<string, unknown>).shop_refund_id === shopRefundId,
    ).length;
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        ctx.http
          .post(`${pagePath}/refund`)
          .set('Cookie', jar.header())
          .type('form')
          .send({ _csrf: csrf, shopRefundId, amount: '60.00', reason: 'double click' }),
      ),
    );
    for (const a of answers) expect([303, 409]).toContain(a.status);
    expect(answers.some((a) => a.status === 303)).toBe(true);
    expect(await refundCount(shopOrderId)).toBe(1);
    expect(
      ctx.sandbox.state.requests.filter(
        (r) => r.path === 'invoice/create-refund' && (r.body as Record<string, unknown>).shop_refund_id === shopRefundId,
      ).length - before,
    ).toBe(1);
  });

  it('charges a held invoice from its own page (the real gateway call); Charge / Unhold show only while held', async () => {
    const shopOrderId = await paidInvoice(true);
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    const pagePath = `/admin/ui/invoices/${encodeURIComponent(shopOrderId)}`;
    const page = await ctx.http.get(pagePath).set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain('id="charge"');
    expect(page.text).toContain('id="unhold"');
    expect(page.text).not.toContain('id="refund-form"');
    const charges = gatewayCalls('invoice/charge');
    await ctx.http
      .post(`${pagePath}/resolve`)
      .set('Cookie', jar.header())
      .type('form')
      .send({ from: 'page', action: 'charge' })
      .expect(403);
    expect(await invoiceStatus(shopOrderId)).toBe('held');
    const res = await ctx.http
      .post(`${pagePath}/resolve`)
      .set('Cookie', jar.header())
      .type('form')
      .send({ _csrf: csrf, from: 'page', action: 'charge' })
      .expect(303);
    expect(res.headers.location).toBe(pagePath);
    expect(await invoiceStatus(shopOrderId)).toBe('succeeded');
    expect(gatewayCalls('invoice/charge')).toBe(charges + 1);
    const after = await ctx.http.get(pagePath).set('Cookie', jar.header()).expect(200);
    expect(after.text).toContain(`Invoice ${shopOrderId} charged: now succeeded.`);
    expect(after.text).not.toContain('id="charge"');
    expect(after.text).toContain('id="refund-form"');
    const api = await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth()).expect(200);
    expect(api.body.status).toBe('succeeded');
  });

  it('rechecks an invoice, a refund and a payout from their pages', async () => {
    const shopOrderId = await paidInvoice();
    const refund = await ctx.http
      .post(`/api/v1/admin/invoices/${shopOrderId}/refunds`)
      .set(admin())
      .send({ shopRefundId: `cact-r-${randomUUID()}`, amount: '1.00' })
      .expect(201);
    const payout = await awaitingPayout();
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    for (const [kind, id] of [
      ['invoice', shopOrderId],
      ['refund', String(refund.body.shopRefundId)],
      ['payout', payout],
    ]) {
      const pagePath = `/admin/ui/${kind}s/${encodeURIComponent(id)}`;
      const page = await ctx.http.get(pagePath).set('Cookie', jar.header()).expect(200);
      expect(page.text).toContain('id="recheck"');
      const res = await ctx.http
        .post(`${pagePath}/resolve`)
        .set('Cookie', jar.header())
        .type('form')
        .send({ _csrf: csrf, from: 'page', action: 'recheck' });
      expect({ kind, status: res.status, location: res.headers.location }).toEqual({
        kind,
        status: 303,
        location: pagePath,
      });
      const after = await ctx.http.get(pagePath).set('Cookie', jar.header()).expect(200);
      expect(after.text).toMatch(new RegExp(`class="flash ok"[^>]*>\\w+ ${id} rechecked: now `));
    }
  });

  it('approves a payout from its own page; Reject is distinct and needs a reason and a ticked confirmation', async () => {
    const a = await awaitingPayout();
    const r = await awaitingPayout();
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    const overview = await ctx.http.get('/admin').set('Cookie', jar.header()).expect(200);
    const count = /id="awaiting-approval"><span class="num">(\d+)<\/span>/.exec(overview.text);
    const awaiting = await db.query(`SELECT count(*)::int AS n FROM payouts WHERE status = 'awaiting_approval'`);
    expect(Number(count?.[1])).toBe(awaiting.rows[0].n);
    expect(Number(count?.[1])).toBeGreaterThanOrEqual(2);

    const pagePath = `/admin/ui/payouts/${encodeURIComponent(r)}`;
    const page = await ctx.http.get(pagePath).set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain('id="approve"');
    expect(page.text).toMatch(/<button type="submit" class="danger" id="reject">/);
    expect(page.text).toMatch(/name="confirm" value="yes" required/);
    const reject = `/admin/ui/approvals/${encodeURIComponent(r)}/reject`;
    // Without the confirmation, or without a reason: refused, still waiting.
    for (const form of [
      { _csrf: csrf, from: 'page', reason: 'duplicate' },
      { _csrf: csrf, from: 'page', reason: '   ', confirm: 'yes' },
      { _csrf: csrf, from: 'page', reason: 'duplicate', confirm: 'true' },
    ]) {
      await ctx.http.post(reject).set('Cookie', jar.header()).type('form').send(form).expect(400);
    }
    expect(await payoutStatus(r)).toBe('awaiting_approval');
    await ctx.http
      .post(reject)
      .set('Cookie', jar.header())
      .type('form')
      .send({ _csrf: csrf, from: 'page', reason: 'duplicate', confirm: 'yes' })
      .expect(303);
    expect(await payoutStatus(r)).toBe('rejected');

    const approvePath = `/admin/ui/payouts/${encodeURIComponent(a)}`;
    const approve = `/admin/ui/approvals/${encodeURIComponent(a)}/approve`;
    await ctx.http.post(approve).set('Cookie', jar.header()).type('form').send({ from: 'page' }).expect(403);
    await ctx.http
      .post(approve)
      .set('Authorization', `Bearer ${SHOP_KEY}`)
      .type('form')
      .send({ _csrf: csrf, from: 'page' })
      .expect(401);
    expect(await payoutStatus(a)).toBe('awaiting_approval');
    const res = await ctx.http
      .post(approve)
      .set('Cookie', jar.header())
      .type('form')
      .send({ _csrf: csrf, from: 'page', note: 'checked' })
      .expect(303);
    expect(res.headers.location).toBe(approvePath);
    const after = await ctx.http.get(approvePath).set('Cookie', jar.header()).expect(200);
    expect(after.text).toContain(`Payout ${a} approved: now `);
    expect(after.text).not.toContain('id="approve"');
    const api = await ctx.http.get(`/api/v1/payouts/${a}`).set(auth()).expect(200);
    expect(api.body.status).not.toBe('awaiting_approval');
  });

  it("a flagged object's page offers Accept, through the API's guard: a status the gateway contradicts is refused", async () => {
    const shopOrderId = await paidInvoice();
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    const pagePath = `/admin/ui/invoices/${encodeURIComponent(shopOrderId)}`;
    expect((await ctx.http.get(pagePath).set('Cookie', jar.header()).expect(200)).text).not.toContain('id="accept"');
    await db.query(
      `UPDATE invoices SET needs_attention = true, attention_reason = 'test: flagged', attention_at = now() WHERE shop_order_id = $1`,
      [shopOrderId],
    );
    const page = await ctx.http.get(pagePath).set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain('id="accept"');
    const accept = (form: Record<string, string>) =>
      ctx.http.post(`${pagePath}/resolve`).set('Cookie', jar.header()).type('form').send(form);
    await accept({ _csrf: csrf, from: 'page', action: 'accept', status: 'succeeded', note: '' }).expect(400);
    await accept({ _csrf: csrf, from: 'page', action: 'accept', status: 'paid', note: 'x' }).expect(400);
    const refused = await accept({ _csrf: csrf, from: 'page', action: 'accept', status: 'rejected', note: 'never paid' }).expect(409);
    expect(refused.text).toContain('succeeded');
    let row = await db.query(`SELECT status, needs_attention FROM invoices WHERE shop_order_id = $1`, [shopOrderId]);
    expect(row.rows[0]).toEqual({ status: 'succeeded', needs_attention: true });
    await accept({ _csrf: csrf, from: 'page', action: 'accept', status: 'succeeded', note: 'seen in the back office' })
      .expect(303)
      .expect('Location', pagePath);
    row = await db.query(`SELECT status, needs_attention FROM invoices WHERE shop_order_id = $1`, [shopOrderId]);
    expect(row.rows[0]).toEqual({ status: 'succeeded', needs_attention: false });
  });

  it('shows no status message from a link: crafted ?done=, ?replayed=, ?redelivered=, ?revoked= show nothing', async () => {
    const { jar } = await signIn(ctx, ADMIN_KEY);
    const bait = 'Your key expired: sign in again at https://evil.example/admin';
    for (const path of [
      `/admin/ui/approvals?done=${encodeURIComponent(bait)}`,
      `/admin/ui/attention?done=${encodeURIComponent(bait)}`,
      `/admin/ui/notifications?replayed=${encodeURIComponent(bait)}`,
      `/admin/ui/deliveries?redelivered=${encodeURIComponent(bait)}`,
      `/admin/ui/payment-tokens?revoked=${encodeURIComponent(bait)}`,
      `/admin/ui/sessions?revoked=9`,
      `/admin/ui/invoices?done=${encodeURIComponent(bait)}&flash=${encodeURIComponent(bait)}`,
    ]) {
      const page = await ctx.http.get(path).set('Cookie', jar.header()).expect(200);
      expect({ path, flash: page.text.includes('class="flash') }).toEqual({ path, flash: false });
      expect(page.text).not.toContain('evil.example');
      expect(page.text).not.toContain('9 sessions revoked');
    }
  });

  it("a message is the acting session's only: another session of the same key does not see it", async () => {
    const payout = await awaitingPayout();
    const me = await signIn(ctx, ADMIN_KEY);
    const other = await signIn(ctx, ADMIN_KEY);
    await ctx.http
      .post(`/admin/ui/payouts/${encodeURIComponent(payout)}/resolve`)
      .set('Cookie', me.jar.header())
      .type('form')
      .send({ _csrf: me.csrf, action: 'recheck' })
      .expect(303);
    const theirs = await ctx.http.get('/admin/ui/attention').set('Cookie', other.jar.header()).expect(200);
    expect(theirs.text).not.toContain('class="flash');
    const mine = await ctx.http.get('/admin/ui/attention').set('Cookie', me.jar.header()).expect(200);
    expect(mine.text).toContain(`Payout ${payout} rechecked`);
  });

  it('the daily report opens on today so far in REPORT_TIMEZONE', async () => {
    const { jar } = await signIn(ctx, ADMIN_KEY);
    const today = new Intl.DateTimeFormat('en-CA', {
      timeZone: ENV.REPORT_TIMEZONE,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    }).format(new Date());
    const page = await ctx.http.get('/admin/ui/reports/daily').set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain(`name="date" type="date" value="${today}"`);
    expect(page.text).toContain('the day is still running');
    // Today's succeeded payments are in it (this suite made some).
    expect(page.text).not.toContain('Nothing succeeded that day.');
  });

  it('an unknown /admin address is an HTML page for a browser and a problem for an API client', async () => {
    for (const path of ['/admin/nope', '/admin/ui/invoices/x/y/z', '/admin/ui/nope/1/2/3']) {
      const html = await ctx.http.get(path).set('Accept', 'text/html,application/xhtml+xml,*/*;q=0.8').expect(404);
      expect(html.headers['content-type']).toMatch(/^text\/html/);
      expect(html.text).toContain('<!doctype html>');
      expect(html.text).toContain('Not found');
      const api = await ctx.http.get(path).set('Accept', 'application/json').expect(404);
      expect(api.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(api.body.status).toBe(404);
    }
    // A POST to an unknown address is no console action.
    const posted = await ctx.http.post('/admin/nope').set('Accept', 'text/html').send({}).expect(404);
    expect(posted.text).not.toContain('_csrf');
  });
});
