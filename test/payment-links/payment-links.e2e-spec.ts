import { Client } from 'pg';
import { ADMIN_KEY, admin, auth, SHOP_KEY, startTestApp, TestContext, unvalidatedHttp } from '../support/app';
import { sandboxPost, sleep } from '../support/hostile';
import { hidden, signIn } from '../console/console-session';
import { PAYMENT } from '../support/payways';

type Json = Record<string, unknown>;

/**
 * Payment links end to end, against the running service and the gateway sandbox: the shop's
 * API (create, get, list, deactivate; refusals that write nothing), the payer's page over plain
 * HTTP (choose, fill the add-on fields, be sent on), the link following its invoices (paid on
 * the notification path), the single-use rule under concurrent attempts, and the events.
 */
describe('payment links', () => {
  let ctx: TestContext;
  let db: Client;

  const create = (body: Json) => ctx.http.post('/api/v1/payment-links').set(auth()).send(body);
  const link = async (body: Json = {}): Promise<Json> =>
    (
      await create({ amount: '150.00', currency: 643, description: 'Consultation', ...body }).expect(201)
    ).body as Json;
  const getLink = async (id: string): Promise<Json> =>
    (await ctx.http.get(`/api/v1/payment-links/${id}`).set(auth()).expect(200)).body as Json;
  const count = async (table: string): Promise<number> =>
    Number(((await db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0] as { n: number }).n);
  const linkInvoices = async (id: string): Promise<Array<{ shop_order_id: string; status: string }>> =>
    (
      await db.query(
        `SELECT shop_order_id, status FROM invoices WHERE payment_link_id = $1 ORDER BY created_at`,
        [rowOf(id)],
      )
    ).rows as Array<{ shop_order_id: string; status: string }>;
  const rowOf = (id: string): string => {
    const h = id.slice('plink_'.length);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  /** The payer's page (no key). */
  const page = (path: string) => unvalidatedHttp(ctx).get(path).redirects(0);
  const post = (id: string, form: Record<string, string>) =>
    unvalidatedHttp(ctx).post(`/pay/l/${id}`).type('form').send(form).redirects(0);
  const tokenOf = (html: string): string => /name="attempt" value="([^"]+)"/.exec(html)![1];
  const events = async (id: string): Promise<string[]> =>
    (
      (await ctx.http.get(`/api/v1/events?objectType=payment_link&objectId=${id}`).set(auth()).expect(200))
        .body as { items: Array<{ type: string }> }
    ).items.map((e) => e.type);

  /** Waits for the notification; every few rounds asks the gateway (payer-less payways notify nothing). */
  async function waitForInvoice(shopOrderId: string, status: string): Promise<Json> {
    let last: Json = {};
    for (let i = 0; i < 100; i++) {
      const refresh = i % 5 === 4 ? '?refresh=true' : '';
      const res = await ctx.http.get(`/api/v1/invoices/${encodeURIComponent(shopOrderId)}${refresh}`).set(auth());
      last = res.body as Json;
      if (last.status === status) return last;
      await sleep(100);
    }
    return last;
  }

  beforeAll(async () => {
    ctx = await startTestApp();
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  it('creates a link (201, the contract body), gets it, lists it by status, and emits payment_link.created', async () => {
    const made = await link({ payways: [PAYMENT.card, PAYMENT.wallet], metadata: { campaign: 'spring' } });
    expect(made).toMatchObject({
      status: 'active',
      amount: '150.00',
      currency: 643,
      currencyCode: 'RUB',
      description: 'Consultation',
      payways: [PAYMENT.card, PAYMENT.wallet],
      reusable: false,
      expiresAt: null,
      metadata: { campaign: 'spring' },
      invoices: [],
    });
    expect(made.id).toMatch(/^plink_[0-9a-f]{32}$/);
    expect(made.url).toBe(`${ctx.url}/pay/l/${String(made.id)}`);
    expect(await getLink(String(made.id))).toEqual(made);
    const active = (await ctx.http.get('/api/v1/payment-links?status=active&limit=500').set(auth()).expect(200))
      .body as { items: Json[] };
    expect(active.items.map((l) => l.id)).toContain(made.id);
    const paid = (await ctx.http.get('/api/v1/payment-links?status=paid').set(auth()).expect(200)).body as {
      items: Json[];
    };
    expect(paid.items.map((l) => l.id)).not.toContain(made.id);
    expect(await events(String(made.id))).toEqual(['payment_link.created']);
  });

  it('is made once per Idempotency-Key: a repeat answers the link, other fields are 409 naming them, concurrent repeats make one', async () => {
    const body = { amount: '150.00', currency: 643, description: 'Once', payways: [PAYMENT.card] };
    const before = await count('payment_links');
    const first = await ctx.http.post('/api/v1/payment-links').set(auth()).set('Idempotency-Key', 'once-1').send(body).expect(201);
    const again = await ctx.http
      .post('/api/v1/payment-links')
      .set(auth())
      .set('Idempotency-Key', 'once-1')
      .send({ ...body, amount: '150.0', currency: 'RUB' })
      .expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    const other = await ctx.http
      .post('/api/v1/payment-links')
      .set(auth())
      .set('Idempotency-Key', 'once-1')
      .send({ ...body, description: 'Twice' })
      .expect(409);
    expect((other.body as { errors: Array<{ field: string }> }).errors.map((e) => e.field)).toEqual(['description']);
    const racing = await Promise.all(
      Array.from({ length: 6 }, () =>
        ctx.http.post('/api/v1/payment-links').set(auth()).set('Idempotency-Key', 'once-2').send(body),
      ),
    );
    expect(new Set(racing.map((r) => (r.body as Json).id)).size).toBe(1);
    expect(await count('payment_links')).toBe(before + 2);
    expect(await events(String(first.body.id))).toEqual(['payment_link.created']);
    const bad = await ctx.http.post('/api/v1/payment-links').set(auth()).set('Idempotency-Key', 'a b').send(body).expect(400);
    expect((bad.body as { errors: Array<{ field: string }> }).errors[0].field).toBe('Idempotency-Key');
  });

  it('pages the list with a cursor', async () => {
    for (let i = 0; i < 3; i++) await link();
    const first = (await ctx.http.get('/api/v1/payment-links?limit=2').set(auth()).expect(200)).body as {
      items: Json[];
      nextCursor: string | null;
    };
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).not.toBeNull();
    const second = (
      await ctx.http.get(`/api/v1/payment-links?limit=2&cursor=${first.nextCursor!}`).set(auth()).expect(200)
    ).body as { items: Json[] };
    expect(second.items.map((l) => l.id)).not.toContain(first.items[0].id);
  });

  it('offers every active payway of the currency that takes the amount when none is named', async () => {
    const made = await link({ amount: '20000.00' });
    const payways = made.payways as string[];
    expect(payways).toContain(PAYMENT.card);
    // Inactive, another currency, or a maximum below the amount: not offered.
    expect(payways).not.toContain(PAYMENT.inactive);
    expect(payways).not.toContain(PAYMENT.cardUsd);
    expect(payways).not.toContain(PAYMENT.wallet);
  });

  it.each<[string, Json, string]>([
    ['amount as a JSON number', { amount: 150 }, 'amount'],
    ['more digits than the currency has', { amount: '150.001' }, 'amount'],
    ['an unknown currency', { currency: 999 }, 'currency'],
    ['an unknown payway', { payways: ['no_such_payway'] }, 'payways[0]'],
    ['an inactive payway', { payways: [PAYMENT.card, PAYMENT.inactive] }, 'payways[1]'],
    ['an amount above the payway bound', { amount: '20000.00', payways: [PAYMENT.wallet] }, 'amount'],
    ['no description', { description: undefined }, 'description'],
    ['a card number in the description', { description: 'card 4111 1111 1111 1111' }, 'description'],
    ['too many metadata keys', { metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
    ['a cvv metadata key', { metadata: { CVV: '123' } }, 'metadata.CVV'],
    ['an expiry in the past', { expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt'],
    ['an expiry without an offset', { expiresAt: '2099-01-01T00:00:00' }, 'expiresAt'],
    ['reusable as text', { reusable: 'yes' }, 'reusable'],
    ['a field it does not take', { status: 'paid' }, 'status'],
  ])('refuses %s: 400 problem+json naming the field, no row', async (_what, change, field) => {
    const before = await count('payment_links');
    const res = await create({ amount: '150.00', currency: 643, description: 'x', ...change }).expect(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    const fields = (res.body as { errors: Array<{ field: string }> }).errors.map((e) => e.field);
    expect(fields.some((f) => f === field || f.startsWith(`${field}.`) || f.startsWith(field))).toBe(true);
    expect(await count('payment_links')).toBe(before);
  });

  it('needs a key with the payments scope; a GET by another spelling of the id is no link', async () => {
    await ctx.http.post('/api/v1/payment-links').send({ amount: '1.00', currency: 643, description: 'x' }).expect(401);
    const made = await link();
    await ctx.http.get(`/api/v1/payment-links/${String(made.id).toUpperCase()}`).set(auth()).expect(404);
    await ctx.http.get(`/api/v1/payment-links/${rowOf(String(made.id))}`).set(auth()).expect(404);
  });

  it('the payer page: choose a payway, a wrong add-on field gets the API message and writes nothing, a right one sends the payer on; paid by notification makes the link paid and its page a receipt', async () => {
    const made = await link({ payways: [PAYMENT.card, PAYMENT.wallet] });
    const id = String(made.id);
    const choose = await page(`/pay/l/${id}`).expect(200);
    expect(choose.headers['cache-control']).toBe('no-store');
    expect(choose.text).toContain('Consultation');
    expect(choose.text).toContain('150.00 RUB');
    expect(choose.text).toContain(PAYMENT.wallet);

    const fields = await page(`/pay/l/${id}?payway=${encodeURIComponent(PAYMENT.wallet)}`).expect(200);
    expect(fields.text).toContain('name="extras.phone"');
    const token = tokenOf(fields.text);

    // The message the API gives for the same extras on POST /invoices.
    const api = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId: `api-${Date.now()}`, amount: '150.00', currency: 643, payway: PAYMENT.wallet, extras: { phone: '12' } })
      .expect(400);
    const apiMessage = (api.body as { errors: Array<{ field: string; message: string }> }).errors.find(
      (e) => e.field === 'extras.phone',
    )!.message;
    const wrong = await post(id, { payway: PAYMENT.wallet, attempt: token, 'extras.phone': '12' }).expect(400);
    expect(wrong.text).toContain(`extras.phone: ${apiMessage}`);
    expect(await linkInvoices(id)).toEqual([]);
    // Left empty: "is required", as the API says for a missing field.
    const empty = await post(id, { payway: PAYMENT.wallet, attempt: token, 'extras.phone': '' }).expect(400);
    expect(empty.text).toContain('extras.phone: is required by payway');

    const sent = await post(id, { payway: PAYMENT.wallet, attempt: token, 'extras.phone': '+79001234567' }).expect(303);
    const shopOrderId = `${id}-1`;
    const invoice = (await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth()).expect(200)).body as Json;
    expect(sent.headers.location).toBe(invoice.payUrl);
    expect(invoice).toMatchObject({ paymentLinkId: id, amount: '150.00', payway: PAYMENT.wallet, description: 'Consultation' });
    expect((await getLink(id)).invoices).toEqual([shopOrderId]);

    // While its invoice may still be paid, the single-use link takes no other attempt.
    const busy = await page(`/pay/l/${id}`).expect(409);
    expect(busy.text).toContain('in progress');

    await sandboxPost(ctx, `invoices/${encodeURIComponent(shopOrderId)}/pay`);
    await waitForInvoice(shopOrderId, 'succeeded');
    expect((await getLink(id)).status).toBe('paid');
    const receipt = await page(`/pay/l/${id}`).expect(200);
    expect(receipt.text).toContain('Payment received');
    expect(receipt.text).toContain(shopOrderId);
    expect(await events(id)).toEqual(['payment_link.created', 'payment_link.paid']);
    // A paid link's form takes nothing more.
    await post(id, { payway: PAYMENT.wallet, attempt: 'another-attempt-token-1', 'extras.phone': '+79001234567' }).expect(200);
    expect(await linkInvoices(id)).toHaveLength(1);
  });

  it('a double submit of one attempt makes one invoice', async () => {
    const id = String((await link({ payways: [PAYMENT.card] })).id);
    const token = tokenOf((await page(`/pay/l/${id}`).expect(200)).text);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => post(id, { payway: PAYMENT.card, attempt: token })),
    );
    const invoices = await linkInvoices(id);
    expect(invoices).toHaveLength(1);
    for (const a of answers) expect([303, 409]).toContain(a.status);
    expect(answers.some((a) => a.status === 303)).toBe(true);
  });

  it('concurrent attempts on a single-use link make at most one invoice that can be paid (the database refuses the others)', async () => {
    const id = String((await link({ payways: [PAYMENT.cardSuccess] })).id);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => post(id, { payway: PAYMENT.cardSuccess, attempt: `concurrent-attempt-${i}-xxxxxxxx` })),
    );
    expect(answers.filter((a) => a.status === 303)).toHaveLength(1);
    const invoices = await linkInvoices(id);
    expect(invoices).toHaveLength(1);
    await waitForInvoice(invoices[0].shop_order_id, 'succeeded');
    expect((await getLink(id)).status).toBe('paid');
    const paid = (await linkInvoices(id)).filter((i) => i.status === 'succeeded');
    expect(paid).toHaveLength(1);
  });

  it('the slot of a single-use link is freed when its invoice ends unpaid: the next attempt may pay', async () => {
    const id = String((await link({ payways: [PAYMENT.walletRejected, PAYMENT.walletSuccess] })).id);
    await post(id, { payway: PAYMENT.walletRejected, attempt: 'rejected-attempt-token-1', 'extras.phone': '+79001234567' });
    const first = (await linkInvoices(id))[0];
    await waitForInvoice(first.shop_order_id, 'rejected');
    expect((await getLink(id)).status).toBe('active');
    await post(id, { payway: PAYMENT.walletSuccess, attempt: 'success-attempt-token-2', 'extras.phone': '+79001234567' }).expect(303);
    const second = (await linkInvoices(id))[1];
    expect(second.shop_order_id).toBe(`${id}-2`);
    await waitForInvoice(second.shop_order_id, 'succeeded');
    expect((await getLink(id)).status).toBe('paid');
  });

  it("the reconciler's path: an invoice settled by the invoice reconciler (no notification, no refresh) makes its link paid", async () => {
    const id = String((await link({ payways: [PAYMENT.cardSuccess] })).id);
    await post(id, { payway: PAYMENT.cardSuccess, attempt: 'reconciler-attempt-token' }).expect(303);
    await db.query(`UPDATE invoices SET next_check_at = clock_now() WHERE shop_order_id = $1`, [`${id}-1`]);
    const { InvoiceReconciler } = await import('../../src/invoices/invoice-reconciler');
    const reconciler = ctx.service.app.get(InvoiceReconciler, { strict: false });
    for (let i = 0; i < 20 && (await linkInvoices(id))[0].status !== 'succeeded'; i++) {
      await reconciler.runOnce();
      await sleep(50);
    }
    expect((await linkInvoices(id))[0].status).toBe('succeeded');
    expect((await getLink(id)).status).toBe('paid');
    const paidEvent = (
      await db.query(`SELECT cause, data FROM events WHERE entity_type = 'payment_link' AND entity_id = $1 AND type = 'payment_link.paid'`, [id])
    ).rows as Array<{ cause: string; data: Json }>;
    expect(paidEvent).toHaveLength(1);
    expect(paidEvent[0].cause).toBe('reconciliation');
    expect(paidEvent[0].data).toMatchObject({ status: 'paid', invoices: [`${id}-1`] });
  });

  it('a reusable link is paid twice and stays active', async () => {
    const id = String((await link({ payways: [PAYMENT.cardSuccess], reusable: true })).id);
    for (const attempt of ['reusable-attempt-token-a', 'reusable-attempt-token-b'])
      await post(id, { payway: PAYMENT.cardSuccess, attempt }).expect(303);
    for (const i of await linkInvoices(id)) await waitForInvoice(i.shop_order_id, 'succeeded');
    const after = await getLink(id);
    expect(after).toMatchObject({ status: 'active', invoices: [`${id}-1`, `${id}-2`] });
    expect(await events(id)).toEqual(['payment_link.created']);
  });

  it('deactivates (event once, repeat 200), then its page says so with 410 and its form makes nothing', async () => {
    const id = String((await link({ payways: [PAYMENT.card] })).id);
    const token = tokenOf((await page(`/pay/l/${id}`).expect(200)).text);
    const off = (await ctx.http.post(`/api/v1/payment-links/${id}/deactivate`).set(auth()).expect(200)).body as Json;
    expect(off.status).toBe('deactivated');
    await ctx.http.post(`/api/v1/payment-links/${id}/deactivate`).set(auth()).send({}).expect(200);
    await ctx.http.post(`/api/v1/payment-links/${id}/deactivate`).set(auth()).send({ reason: 'x' }).expect(400);
    expect(await events(id)).toEqual(['payment_link.created', 'payment_link.deactivated']);
    const gone = await page(`/pay/l/${id}`).expect(410);
    expect(gone.headers['content-type']).toContain('text/html');
    expect(gone.text).toContain('deactivated');
    await post(id, { payway: PAYMENT.card, attempt: token }).expect(410);
    expect(await linkInvoices(id)).toEqual([]);
    const listed = (await ctx.http.get('/api/v1/payment-links?status=deactivated').set(auth()).expect(200)).body as {
      items: Json[];
    };
    expect(listed.items.map((l) => l.id)).toContain(id);
  });

  it('expires at expiresAt: the page says so (410), the API shows expired, one payment_link.expired event', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const id = String((await link({ payways: [PAYMENT.card], expiresAt })).id);
    await page(`/pay/l/${id}`).expect(200);
    await sleep(1700);
    const listed = (await ctx.http.get('/api/v1/payment-links?status=expired').set(auth()).expect(200)).body as {
      items: Json[];
    };
    expect(listed.items.map((l) => l.id)).toContain(id);
    const gone = await page(`/pay/l/${id}`).expect(410);
    expect(gone.text).toContain('expired');
    expect((await getLink(id)).status).toBe('expired');
    await ctx.http.post(`/api/v1/payment-links/${id}/deactivate`).set(auth()).expect(409);
    expect(await events(id)).toEqual(['payment_link.created', 'payment_link.expired']);
  });

  it('the expiry job expires due links by itself', async () => {
    const id = String((await link({ payways: [PAYMENT.card], expiresAt: new Date(Date.now() + 500).toISOString() })).id);
    await sleep(700);
    const { PaymentLinksService } = await import('../../src/payment-links/payment-links.service');
    expect(await ctx.service.app.get(PaymentLinksService).expireDue()).toBeGreaterThanOrEqual(1);
    const row = (await db.query(`SELECT status FROM payment_links WHERE id = $1`, [rowOf(id)])).rows[0] as { status: string };
    expect(row.status).toBe('expired');
    expect(await events(id)).toEqual(['payment_link.created', 'payment_link.expired']);
  });

  it('the page carries no key, names no other link, and escapes the description', async () => {
    const other = String((await link()).id);
    const id = String((await link({ description: '<script>alert(1)</script> & "co"', payways: [PAYMENT.card], metadata: { secret: '<b>x</b>' } })).id);
    const html = (await page(`/pay/l/${id}`).expect(200)).text;
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;co&quot;');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>x</b>');
    for (const secret of [SHOP_KEY, ADMIN_KEY, other]) expect(html).not.toContain(secret);
    // What a payer types comes back escaped too (a refused form shows it again).
    const wallet = String((await link({ payways: [PAYMENT.wallet] })).id);
    const typed = await post(wallet, { payway: PAYMENT.wallet, attempt: 'xss-attempt-token-0001', 'extras.phone': '"><script>alert(2)</script>' }).expect(400);
    expect(typed.text).not.toContain('<script>');
    expect(typed.text).toContain('value="&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;"');
    expect(typed.headers['content-security-policy']).toContain("default-src 'none'");
    // Unknown or mis-spelled ids: the same HTML page, never JSON.
    for (const path of [`/pay/l/${id.toUpperCase()}`, '/pay/l/plink_00000000000000000000000000000000', '/pay/l/nothing']) {
      const res = await page(path).expect(404);
      expect(res.headers['content-type']).toContain('text/html');
    }
  });

  it('a crash between numbering an attempt and writing its invoice: the same form makes that invoice, no number is lost twice', async () => {
    const id = String((await link({ payways: [PAYMENT.card] })).id);
    // The attempt as numbering left it, its invoice never written (the process stopped).
    await db.query(`UPDATE payment_links SET attempts = 1 WHERE id = $1`, [rowOf(id)]);
    await db.query(`INSERT INTO payment_link_attempts (link_id, token, n) VALUES ($1, 'crashed-attempt-token-1', 1)`, [rowOf(id)]);
    expect(await linkInvoices(id)).toEqual([]);
    // The link is not blocked by the lost attempt: only an invoice holds the slot.
    await page(`/pay/l/${id}`).expect(200);
    await post(id, { payway: PAYMENT.card, attempt: 'crashed-attempt-token-1' }).expect(303);
    expect((await linkInvoices(id)).map((i) => i.shop_order_id)).toEqual([`${id}-1`]);
    // Another payer's form now: refused while invoice 1 may still be paid, and nothing written.
    await post(id, { payway: PAYMENT.card, attempt: 'another-attempt-token-2' }).expect(409);
    expect(await linkInvoices(id)).toHaveLength(1);
  });

  it('the console form: needs its CSRF token, names a wrong field, and one form sent twice is one link', async () => {
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    const cookie = jar.header();
    const shown = await ctx.http.get('/admin/ui/payment-links').set('Cookie', cookie).expect(200);
    const formKey = hidden(shown.text, 'formKey');
    const form = { formKey, amount: '75.00', currency: 'RUB', description: 'Console link', payways: PAYMENT.card };
    const send = (f: Record<string, string>) =>
      ctx.http.post('/admin/ui/payment-links').set('Cookie', cookie).type('form').send(f).redirects(0);
    const before = await count('payment_links');
    await send(form).expect(403);
    const wrong = await send({ ...form, _csrf: csrf, payways: 'no_such_payway' }).expect(400);
    expect(wrong.text).toContain('payways[0]: no_such_payway is not a known payment way');
    expect(await count('payment_links')).toBe(before);
    const first = await send({ ...form, _csrf: csrf }).expect(303);
    const second = await send({ ...form, _csrf: csrf }).expect(303);
    expect(second.headers.location).toBe(first.headers.location);
    expect(await count('payment_links')).toBe(before + 1);
    const id = String(first.headers.location).split('/').pop()!;
    const made = await getLink(id);
    expect(made).toMatchObject({ amount: '75.00', currency: 643, description: 'Console link', payways: [PAYMENT.card] });
    // The operator's key is what the audit trail records.
    const row = (await db.query(`SELECT key_id FROM events WHERE entity_type = 'payment_link' AND entity_id = $1`, [id]))
      .rows[0] as { key_id: string };
    expect(row.key_id).toHaveLength(12);
  });

  it('admin keys see the links too; a read-only view of the invoices carries paymentLinkId', async () => {
    const id = String((await link({ payways: [PAYMENT.cardSuccess] })).id);
    await post(id, { payway: PAYMENT.cardSuccess, attempt: 'admin-view-attempt-token' }).expect(303);
    const inv = (await ctx.http.get(`/api/v1/invoices/${id}-1`).set(admin()).expect(200)).body as Json;
    expect(inv.paymentLinkId).toBe(id);
    const own = (
      await ctx.http
        .post('/api/v1/invoices')
        .set(auth())
        .send({ shopOrderId: `own-${Date.now()}`, amount: '15.00', currency: 643, payway: PAYMENT.card })
        .expect(201)
    ).body as Json;
    expect(own).not.toHaveProperty('paymentLinkId');
  });
});

describe("payment link pages: the /pay address budget", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startTestApp({ env: { RATE_LIMIT_PUBLIC_PER_IP_RPS: '1', TRUST_PROXY: '1' } });
  });
  afterAll(() => ctx?.close());

  it('the link page is rate-limited per address, from the same budget as /pay', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await ctx.http.get('/pay/l/nothing').set('X-Forwarded-For', '7.7.7.7');
      statuses.push(res.status);
      if (res.status === 429) {
        expect(res.headers['content-type']).toContain('application/problem+json');
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
    }
    expect(statuses.slice(0, 2)).toEqual([404, 404]);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(4);
    // The same address on /pay: the budget is spent there too.
    expect((await ctx.http.get('/pay/nothing?t=x').set('X-Forwarded-For', '7.7.7.7')).status).toBe(429);
    // The form too; another address has its own budget.
    expect((await ctx.http.post('/pay/l/nothing').type('form').send({ payway: 'x' }).set('X-Forwarded-For', '7.7.7.7')).status).toBe(429);
    expect((await ctx.http.get('/pay/l/nothing').set('X-Forwarded-For', '7.7.7.8')).status).toBe(404);
  });
});
