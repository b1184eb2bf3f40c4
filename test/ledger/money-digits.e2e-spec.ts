import { randomUUID } from 'node:crypto';
import { ADMIN_KEY, admin, auth, startTestApp, TestContext } from '../support/app';
import { csvMoneyProblems, moneyProblems } from '../support/answers';
import { PAYMENT, PAYOUT } from '../support/payways';
import { signIn } from '../console/console-session';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Money written one way (docs/api.md, Conventions: Money): amounts sent as "150000", "0.5" or
 * "100.0" come back, in every answer, event, CSV and console page, with exactly their currency's
 * minor-unit digits. (Every JSON answer of every suite is also checked by the shared HTTP helper.)
 */
describe('every amount with its currency’s minor-unit digits', () => {
  let ctx: TestContext;
  const order = `money-${randomUUID()}`;
  const refund = `money-r-${randomUUID()}`;
  const payout = `money-p-${randomUUID()}`;
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    ctx = await startTestApp({ env: { PAYOUT_POLL_INTERVAL_S: '0.2' } });
    await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId: order, amount: '150000', currency: 643, payway: PAYMENT.cardSuccess })
      .expect(201);
    for (let i = 0; i < 200; i++) {
      const r = await ctx.http.get(`/api/v1/invoices/${order}?refresh=true`).set(auth());
      if (r.body.status === 'succeeded') break;
      await sleep(50);
    }
    await ctx.http
      .post(`/api/v1/invoices/${order}/refunds`)
      .set(auth())
      .send({ shopRefundId: refund, amount: '500' })
      .expect((r) => expect(r.status).toBeLessThan(300));
    await ctx.http.post('/api/v1/admin/reconciliations').set(admin()).send({ date: today }).expect(201);
    await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({
        shopPaymentId: payout,
        amount: '1000',
        amountType: 'ps_amount',
        shopCurrency: 643,
        payway: PAYOUT.card,
        account: '4111111111111111',
      })
      .expect((r) => expect(r.status).toBeLessThan(300));
  }, 60000);

  afterAll(async () => {
    await ctx?.close();
  });

  it('answers: the invoice, its refund sums, the refund, the payout', async () => {
    const inv = await ctx.http.get(`/api/v1/invoices/${order}`).set(auth()).expect(200);
    expect(inv.body).toMatchObject({ amount: '150000.00', refundableAmount: expect.stringMatching(/\.\d\d$/) });
    expect(inv.body.refundedAmount).toMatch(/^\d+\.\d\d$/);
    const r = await ctx.http.get(`/api/v1/invoices/${order}/refunds`).set(auth()).expect(200);
    expect(r.body.items).toEqual([expect.objectContaining({ shopRefundId: refund, amount: '500.00' })]);
    const p = await ctx.http.get(`/api/v1/payouts/${payout}`).set(auth()).expect(200);
    expect(p.body.amount).toBe('1000.00');
    expect(moneyProblems([inv.body, r.body, p.body])).toEqual([]);
  });

  it('events: the feed carries the objects as their GET does', async () => {
    const feed = await ctx.http.get('/api/v1/events?limit=200').set(auth()).expect(200);
    const ofOrder = (feed.body.items as Array<{ objectId: string; data: { amount?: string } }>).filter(
      (e) => e.objectId === order,
    );
    expect(ofOrder.length).toBeGreaterThan(0);
    for (const e of ofOrder) expect(e.data.amount).toBe('150000.00');
    expect(moneyProblems(feed.body)).toEqual([]);
  });

  it('the ledger: postings and balances', async () => {
    const entries = await ctx.http
      .get(`/api/v1/admin/ledger/entries?objectType=invoice&objectId=${order}`)
      .set(admin())
      .expect(200);
    expect(entries.body.items[0].postings).toEqual(
      expect.arrayContaining([{ account: 'gateway_payment_shop', currency: 643, amount: '150000.00' }]),
    );
    const balances = await ctx.http.get('/api/v1/admin/ledger/balances').set(admin()).expect(200);
    expect(moneyProblems(balances.body)).toEqual([]);
    expect(
      (balances.body.balances as Array<{ balance: string }>).every((b) => /\.\d\d$/.test(b.balance)),
    ).toBe(true);
  });

  it('every CSV: ledger entries, reconciliation items, the daily report, the console lists', async () => {
    const files: Array<[string, string]> = [];
    const csv = async (path: string, set: Record<string, string>): Promise<void> => {
      const res = await ctx.http.get(path).set(set).buffer(true).parse((r, done) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (text += c));
        r.on('end', () => done(null, text));
      });
      expect([path, res.status]).toEqual([path, 200]);
      files.push([path, res.body as string]);
    };
    await csv('/api/v1/admin/ledger/entries?format=csv&limit=500', admin());
    const runs = await ctx.http.get('/api/v1/admin/reconciliations').set(admin()).expect(200);
    await csv(`/api/v1/admin/reconciliations/${String(runs.body.items[0].id)}?format=csv`, admin());
    await csv(`/api/v1/admin/reports/daily?date=${today}&format=csv`, admin());
    const { jar } = await signIn(ctx, ADMIN_KEY);
    const session = { Cookie: jar.header() };
    for (const list of ['invoices', 'refunds', 'payouts', 'attention'])
      await csv(`/admin/ui/lists/${list}/export.csv`, session);
    await csv('/admin/ui/ledger/entries.csv', session);
    await csv(`/admin/ui/reports/daily.csv?date=${today}`, session);
    const ledger = files.find(([p]) => p.startsWith('/api/v1/admin/ledger'))![1];
    expect(ledger).toContain(',gateway_payment_shop,643,150000.00');
    const invoices = files.find(([p]) => p.includes('/lists/invoices/'))![1];
    expect(invoices).toContain(',150000.00,643,');
    const problems = files.flatMap(([p, text]) => csvMoneyProblems(text).map((x) => `${p}: ${x}`));
    expect(problems).toEqual([]);
  });

  it('the console: the currency once, grouped ("150,000.00 RUB")', async () => {
    const { jar } = await signIn(ctx, ADMIN_KEY);
    const page = await ctx.http.get(`/admin/ui/invoices/${order}`).set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain('150,000.00 RUB');
    expect(page.text).not.toMatch(/RUB RUB/);
    const ledger = await ctx.http.get('/admin/ui/ledger').set('Cookie', jar.header()).expect(200);
    expect(ledger.text).toContain('150,000.00 RUB');
    expect(ledger.text).not.toMatch(/RUB RUB/);
  });
});
