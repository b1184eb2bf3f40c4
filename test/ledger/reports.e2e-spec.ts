// Over 500 lines on purpose: one app and database, started once, hold the day of mixed traffic most
// of its tests read; a split would start and fill another.
import Decimal from 'decimal.js';
import { Client } from 'pg';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import type { DailyReport } from '../../src/reports/daily-report';
import { CSV_COLUMNS } from '../../src/reports/daily-report';
import { INVOICE_STATUS, PAYOUT_STATUS } from '../../src/sandbox/sandbox.state';
import {
  admin,
  ADMIN_KEY,
  auth,
  PAYOUT_SHOP_ID,
  SHOP_ID,
  startTestApp,
  TestContext,
} from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';
import { signIn } from '../console/console-session';

/**
 * The daily books against the gateway's own: a day of mixed traffic through the
 * service and the sandbox, then every figure of GET /admin/reports/daily checked against the
 * sandbox's memory to the cent, the CSV against the JSON, and the day's boundary in
 * REPORT_TIMEZONE.
 */
const ENV = {
  PAYOUT_POLL_INTERVAL_S: '0.2',
  PAYOUT_POLL_MAX_S: '2',
  WATCH_INTERVAL_S: '1',
};
const CARD = '4111111111111111';
/** An order id a spreadsheet would run as a formula, with a comma and quotes to escape. */
const HOSTILE_ID = '=HYPERLINK("http://x.example/?a=1,2","open")';

let ctx: TestContext;
let db: Client;
let seq = 0;
const newId = (prefix: string): string => `${prefix}-${Date.now()}-${++seq}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(check: () => Promise<T>, timeoutMs = 15000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > until) throw e;
      await sleep(150);
    }
  }
}

const utcDay = (d: Date): string => d.toISOString().slice(0, 10);

function report(date: string, c: TestContext = ctx) {
  return c.http.get(`/api/v1/admin/reports/daily?date=${date}`).set(admin());
}

// ------------------------------------------------------------------ builders

async function invoice(
  payway: string,
  overrides: { amount?: string; currency?: number; shopOrderId?: string } = {},
): Promise<string> {
  const shopOrderId = overrides.shopOrderId ?? newId('order');
  const res = await ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({
      shopOrderId,
      amount: overrides.amount ?? '100.00',
      currency: overrides.currency ?? 643,
      payway,
    });
  expect(res.status).toBe(201);
  return shopOrderId;
}

/** Waits until the service holds the invoice in `status`, asking invoice/check (its facts too). */
async function invoiceSettles(shopOrderId: string, status: string): Promise<void> {
  await eventually(async () => {
    const got = await ctx.http
      .get(`/api/v1/invoices/${encodeURIComponent(shopOrderId)}?refresh=true`)
      .set(auth());
    expect(got.body.status).toBe(status);
  });
}

async function refund(shopOrderId: string, amount: string): Promise<string> {
  const shopRefundId = newId('refund');
  const res = await ctx.http
    .post(`/api/v1/invoices/${shopOrderId}/refunds`)
    .set(auth())
    .send({ shopRefundId, amount });
  expect(res.status).toBe(201);
  return shopRefundId;
}

async function payout(payway: string, body: Record<string, unknown> = {}): Promise<string> {
  const shopPaymentId = newId('payout');
  const res = await ctx.http
    .post('/api/v1/payouts')
    .set(auth())
    .send({
      shopPaymentId,
      amount: '1000.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway,
      account: CARD,
      ...body,
    });
  expect(res.status).toBe(202);
  return shopPaymentId;
}

// ------------------------------------------------------------------ the gateway's books

interface Expected {
  payments: { count: number; amount: Decimal };
  refunds: { count: number; amount: Decimal };
  payouts: { count: number; amount: Decimal };
  paymentFees: { count: number; amount: Decimal; notComputed: number };
  payoutFees: { count: number; amount: Decimal; notComputed: number };
}

/** Sums the sandbox's memory the way finance reads the gateway's statement. */
function gatewayBooks(): Map<number, Expected> {
  const books = new Map<number, Expected>();
  const of = (currency: number): Expected => {
    let e = books.get(currency);
    if (!e) {
      const z = (): { count: number; amount: Decimal } => ({ count: 0, amount: new Decimal(0) });
      e = {
        payments: z(),
        refunds: z(),
        payouts: z(),
        paymentFees: { ...z(), notComputed: 0 },
        payoutFees: { ...z(), notComputed: 0 },
      };
      books.set(currency, e);
    }
    return e;
  };
  const state = ctx.sandbox.state;
  for (const inv of state.invoices.values()) {
    if (inv.shopId !== SHOP_ID || inv.status !== INVOICE_STATUS.PAID) continue;
    const e = of(inv.currency);
    e.payments.count += 1;
    e.payments.amount = e.payments.amount.plus(inv.amount.toString());
    if (inv.paywayConfig.currency === inv.currency) {
      e.paymentFees.count += 1;
      e.paymentFees.amount = e.paymentFees.amount
        .plus(inv.clientPrice.toString())
        .minus(inv.amount.toString());
    } else e.paymentFees.notComputed += 1;
  }
  for (const r of state.refunds.values()) {
    if (r.status !== 'SUCCESS') continue;
    const e = of(r.currency);
    e.refunds.count += 1;
    e.refunds.amount = e.refunds.amount.plus(r.amount.toString());
  }
  for (const p of state.payouts.values()) {
    if (p.shopId !== PAYOUT_SHOP_ID || p.status !== PAYOUT_STATUS.SUCCESS) continue;
    const e = of(p.shopCurrency);
    e.payouts.count += 1;
    e.payouts.amount = e.payouts.amount.plus(p.shopWriteOff.toString());
    if (p.psCurrency === p.shopCurrency) {
      e.payoutFees.count += 1;
      e.payoutFees.amount = e.payoutFees.amount
        .plus(p.shopWriteOff.toString())
        .minus(p.payeeReceive.toString());
    } else e.payoutFees.notComputed += 1;
  }
  return books;
}

// ------------------------------------------------------------------ CSV

/** RFC 4180 reader (quoted fields, doubled quotes, CRLF inside quotes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let rowNow: string[] = [];
  let fieldNow = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        fieldNow += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else fieldNow += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      rowNow.push(fieldNow);
      fieldNow = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      rowNow.push(fieldNow);
      rows.push(rowNow);
      rowNow = [];
      fieldNow = '';
      i++;
    } else fieldNow += ch;
  }
  expect(fieldNow).toBe('');
  expect(rowNow).toEqual([]);
  return rows;
}

/** Rebuilds the JSON report from the CSV's rows (text cells lose the formula guard's apostrophe). */
function reportFromCsv(
  text: string,
  head: Pick<DailyReport, 'date' | 'timeZone' | 'from' | 'to' | 'complete'>,
): DailyReport {
  const [header, ...rows] = parseCsv(text);
  expect(header).toEqual([...CSV_COLUMNS]);
  const recs = rows.map((cells) => {
    expect(cells).toHaveLength(CSV_COLUMNS.length);
    return Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, cells[i]])) as Record<
      (typeof CSV_COLUMNS)[number],
      string
    >;
  });
  const text_ = (v: string): string => (/^'[=+\-@\t\r]/.test(v) ? v.slice(1) : v);
  const nullable = (v: string): string | null => (v === '' ? null : text_(v));
  const out: DailyReport = {
    ...head,
    currencies: [],
    ledger: [],
    open: { total: 0, items: [] },
    attention: { total: 0, items: [] },
  };
  for (const r of recs) {
    const currency = Number(r.currency);
    let c = out.currencies.find((x) => x.currency === currency);
    if (
      ['payments', 'refunds', 'payouts', 'chargebacks', 'payment_fees', 'payout_fees'].includes(r.section) &&
      !c
    ) {
      c = {
        currency,
        payments: { count: 0, amount: '' },
        refunds: { count: 0, amount: '' },
        payouts: { count: 0, amount: '', withoutAmount: 0 },
        chargebacks: { count: 0, amount: '' },
        fees: {
          payments: { count: 0, amount: '', notComputed: 0 },
          payouts: { count: 0, amount: '', notComputed: 0 },
        },
      };
      out.currencies.push(c);
    }
    const tally = { count: Number(r.count), amount: r.amount };
    if (r.section === 'payments') c!.payments = tally;
    else if (r.section === 'refunds') c!.refunds = tally;
    else if (r.section === 'chargebacks') c!.chargebacks = tally;
    else if (r.section === 'payouts')
      c!.payouts = { ...tally, withoutAmount: Number(r.not_computed) };
    else if (r.section === 'payment_fees')
      c!.fees.payments = { ...tally, notComputed: Number(r.not_computed) };
    else if (r.section === 'payout_fees')
      c!.fees.payouts = { ...tally, notComputed: Number(r.not_computed) };
    else if (r.section.startsWith('ledger:'))
      out.ledger.push({ account: r.section.slice(7), currency: Number(r.currency), amount: r.amount });
    else if (r.section === 'open_total') out.open.total = Number(r.count);
    else if (r.section === 'attention_total') out.attention.total = Number(r.count);
    else if (r.section === 'open')
      out.open.items.push({
        objectType: r.object_type as 'invoice',
        id: text_(r.object_id),
        amount: r.amount,
        currency,
        status: nullable(r.status),
        currentStatus: text_(r.current_status),
        createdAt: r.created_at,
        ageSeconds: Number(r.age_seconds),
      });
    else if (r.section === 'attention')
      out.attention.items.push({
        objectType: r.object_type as 'invoice',
        id: text_(r.object_id),
        amount: r.amount,
        currency,
        currentStatus: text_(r.current_status),
        reason: nullable(r.reason),
        raisedAt: nullable(r.raised_at),
        flaggedAtEnd: r.flagged_at_end === 'true',
        flaggedNow: r.flagged_now === 'true',
      });
    else throw new Error(`unknown section ${r.section}`);
  }
  return out;
}

// ------------------------------------------------------------------ suite

beforeAll(async () => {
  ctx = await startTestApp({ env: ENV });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

describe('GET /api/v1/admin/reports/daily: a day of mixed traffic', () => {
  const ids = {
    paid643: [] as string[],
    paid840: [] as string[],
    fx: '',
    rejected: '',
    open: '',
    hostile: HOSTILE_ID,
    refundOk: '',
    refundFailed: '',
    payoutsOk: [] as string[],
    payoutFailed: '',
    payoutFlagged: '',
  };
  let day = '';

  beforeAll(async () => {
    // The traffic must fall on one UTC day: never start it in the last two minutes of one.
    const toMidnight = 86_400_000 - (Date.now() % 86_400_000);
    if (toMidnight < 120_000) await sleep(toMidnight + 1000);
    day = utcDay(new Date());

    for (const amount of ['100.00', '250.55', '1234.56'])
      ids.paid643.push(await invoice(PAYMENT.cardSuccess, { amount }));
    for (const amount of ['10.00', '33.33'])
      ids.paid840.push(await invoice(PAYMENT.cardUsdSuccess, { amount, currency: 840 }));
    // A USD order on a RUB payway: the payer price is in RUB, so its fee cannot be known in USD.
    ids.fx = await invoice(PAYMENT.cardSuccess, { amount: '5.00', currency: 840 });
    const refundable = await invoice(PAYMENT.sandboxCard('refund_failed'), { amount: '77.70' });
    ids.rejected = await invoice(PAYMENT.cardRejected, { amount: '42.00' });
    ids.open = await invoice(PAYMENT.card, { amount: '500.00' });
    await invoice(PAYMENT.card, { amount: '12.00', shopOrderId: HOSTILE_ID });
    for (const id of [...ids.paid643, ...ids.paid840, ids.fx, refundable])
      await invoiceSettles(id, 'succeeded');
    await invoiceSettles(ids.rejected, 'rejected');

    ids.refundOk = await refund(ids.paid643[1], '50.25');
    ids.refundFailed = await refund(refundable, '77.70');
    await eventually(async () => {
      const r = await db.query(
        `SELECT shop_refund_id, status FROM refunds WHERE shop_refund_id = ANY($1) ORDER BY 1`,
        [[ids.refundOk, ids.refundFailed]],
      );
      expect(Object.fromEntries(r.rows.map((x) => [x.shop_refund_id, x.status]))).toEqual({
        [ids.refundOk]: 'SUCCESS',
        [ids.refundFailed]: 'FAILED',
      });
    });

    ids.payoutsOk.push(await payout(PAYOUT.card));
    ids.payoutsOk.push(await payout(PAYOUT.card, { amount: '520.00', amountType: 'shop_amount' }));
    ids.payoutFailed = await payout(PAYOUT.sandboxCard('decline'));
    ids.payoutFlagged = await payout(PAYOUT.sandboxCard('never_final'));
    const poller = ctx.service.app.get(PayoutPoller);
    await eventually(async () => {
      await poller.runOnce();
      const r = await db.query(
        `SELECT shop_payment_id, status, needs_attention FROM payouts ORDER BY 1`,
      );
      const by = Object.fromEntries(r.rows.map((x) => [x.shop_payment_id, x]));
      for (const id of ids.payoutsOk) expect(by[id].status).toBe('succeeded');
      expect(['failed', 'rejected']).toContain(by[ids.payoutFailed].status);
      expect(by[ids.payoutFlagged].needs_attention).toBe(true);
    }, 20000);
    // Still the same UTC day (the traffic takes seconds).
    expect(utcDay(new Date())).toBe(day);
  }, 120_000);

  it('sums every currency exactly as the gateway’s own books, to the cent', async () => {
    const res = await report(day).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const r = res.body as DailyReport;
    expect(r).toMatchObject({ date: day, timeZone: 'UTC', complete: false });
    expect(r.from).toBe(`${day}T00:00:00.000Z`);

    const books = gatewayBooks();
    expect(r.currencies.map((c) => c.currency)).toEqual([...books.keys()].sort());
    expect(r.currencies.map((c) => c.currency)).toEqual([643, 840]);
    for (const c of r.currencies) {
      const e = books.get(c.currency)!;
      const same = (text: string, d: Decimal): void => {
        expect(text).toMatch(/^-?\d+(\.\d{1,2})?$/);
        expect(new Decimal(text).toFixed(2)).toBe(d.toFixed(2));
      };
      expect(c.payments.count).toBe(e.payments.count);
      same(c.payments.amount, e.payments.amount);
      expect(c.refunds.count).toBe(e.refunds.count);
      same(c.refunds.amount, e.refunds.amount);
      expect(c.payouts.count).toBe(e.payouts.count);
      expect(c.payouts.withoutAmount).toBe(0);
      same(c.payouts.amount, e.payouts.amount);
      expect(c.fees.payments.count).toBe(e.paymentFees.count);
      expect(c.fees.payments.notComputed).toBe(e.paymentFees.notComputed);
      same(c.fees.payments.amount, e.paymentFees.amount);
      expect(c.fees.payouts.count).toBe(e.payoutFees.count);
      expect(c.fees.payouts.notComputed).toBe(e.payoutFees.notComputed);
      same(c.fees.payouts.amount, e.payoutFees.amount);
    }
    // The figures themselves, so a sandbox that drifted with the service would still be caught.
    const rub = r.currencies[0];
    const usd = r.currencies[1];
    expect(rub.payments).toEqual({ count: 4, amount: '1662.81' });
    expect(usd.payments).toEqual({ count: 3, amount: '48.33' });
    expect(usd.fees.payments.notComputed).toBe(1);
    expect(rub.refunds).toEqual({ count: 1, amount: '50.25' });
    expect(usd.refunds).toEqual({ count: 0, amount: '0.00' });
    expect(rub.payouts).toMatchObject({ count: 2 });
    expect(new Decimal(rub.fees.payouts.amount).isPositive()).toBe(true);
  });

  it('lists what was still open at the day’s end with its age, and the flagged objects', async () => {
    const before = Date.now();
    const r = (await report(day).expect(200)).body as DailyReport;
    // Every row the service holds that is not final, and nothing else.
    const open = await db.query(
      `SELECT 'invoice' AS t, shop_order_id AS id, created_at FROM invoices WHERE status NOT IN ('succeeded','rejected','unheld')
       UNION ALL SELECT 'refund', shop_refund_id, created_at FROM refunds WHERE status = 'WAITING'
       UNION ALL SELECT 'payout', shop_payment_id, created_at FROM payouts WHERE status NOT IN ('succeeded','failed','rejected')
       ORDER BY created_at`,
    );
    expect(r.open.items.map((o) => `${o.objectType}:${o.id}`)).toEqual(
      open.rows.map((x) => `${x.t}:${x.id}`),
    );
    expect(r.open.total).toBe(3);
    expect(r.open.items.map((o) => o.id)).toEqual([ids.open, HOSTILE_ID, ids.payoutFlagged]);
    // The gateway agrees none of them is final.
    const g = ctx.sandbox.state;
    expect(g.findInvoiceByOrder(SHOP_ID, ids.open)?.status).not.toBe(INVOICE_STATUS.PAID);
    expect(g.findPayoutByShopPaymentId(PAYOUT_SHOP_ID, ids.payoutFlagged)?.status).toBe(
      PAYOUT_STATUS.SENT,
    );
    for (const o of r.open.items) {
      const created = new Date(o.createdAt).getTime();
      expect(o.ageSeconds).toBeGreaterThanOrEqual(0);
      expect(Math.abs(o.ageSeconds - (before - created) / 1000)).toBeLessThan(5);
      expect(o.status).toBe(o.currentStatus);
    }
    expect(r.open.items[0]).toMatchObject({ amount: '500.00', currency: 643 });

    expect(r.attention.total).toBe(1);
    expect(r.attention.items).toEqual([
      expect.objectContaining({
        objectType: 'payout',
        id: ids.payoutFlagged,
        amount: '1000.00',
        currency: 643,
        flaggedAtEnd: true,
        flaggedNow: true,
      }),
    ]);
    expect(r.attention.items[0].reason).toMatch(/^deadline: /);
    expect(r.attention.items[0].raisedAt).not.toBeNull();
  });

  it('gives the same report as CSV (Accept: text/csv or format=csv), RFC 4180 quoted', async () => {
    const json = (await report(day).expect(200)).body as DailyReport;
    const byAccept = await ctx.http
      .get(`/api/v1/admin/reports/daily?date=${day}`)
      .set(admin())
      .set('Accept', 'text/csv')
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => done(null, text));
      })
      .expect(200);
    expect(byAccept.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(byAccept.headers['content-disposition']).toBe(
      `attachment; filename="daily-report-${day}-UTC.csv"`,
    );
    expect(byAccept.headers.vary).toMatch(/Accept/);
    const csv = byAccept.body as string;
    const byFormat = await ctx.http
      .get(`/api/v1/admin/reports/daily?date=${day}&format=csv`)
      .set(admin())
      .expect(200);
    expect(byFormat.text.replace(/,\d+,,,,\r\n/g, ',AGE,,,,\r\n')).toBe(
      csv.replace(/,\d+,,,,\r\n/g, ',AGE,,,,\r\n'),
    );
    // format wins over Accept.
    const forced = await ctx.http
      .get(`/api/v1/admin/reports/daily?date=${day}&format=json`)
      .set(admin())
      .set('Accept', 'text/csv')
      .expect(200);
    // Today's ages grow between two requests: compared apart, within the seconds between them.
    const ageless = (r: DailyReport): { report: DailyReport; ages: number[] } => ({
      report: {
        ...r,
        open: { ...r.open, items: r.open.items.map((o) => ({ ...o, ageSeconds: 0 })) },
      },
      ages: r.open.items.map((o) => o.ageSeconds),
    });
    const sameAges = (a: number[], b: number[]): void => {
      expect(a).toHaveLength(b.length);
      a.forEach((x, i) => expect(Math.abs(x - b[i])).toBeLessThanOrEqual(3));
    };
    expect(ageless(forced.body as DailyReport).report).toEqual(ageless(json).report);
    sameAges(ageless(forced.body as DailyReport).ages, ageless(json).ages);

    const fromCsv = ageless(reportFromCsv(csv, json));
    expect(fromCsv.report).toEqual(ageless(json).report);
    sameAges(fromCsv.ages, ageless(json).ages);
    // The formula guard and the quoting of the hostile id, byte for byte.
    expect(csv).toContain(`,invoice,"'=HYPERLINK(""http://x.example/?a=1,2"",""open"")",`);
    expect(csv.endsWith('\r\n')).toBe(true);
  });

  it('shows the report in the console for a chosen day, with a CSV download of the same data', async () => {
    const { jar } = await signIn(ctx, ADMIN_KEY);
    const page = await ctx.http
      .get(`/admin/ui/reports/daily?date=${day}`)
      .set('Cookie', jar.header())
      .expect(200);
    expect(page.text).toContain(
      '<a href="/admin/ui/reports/daily" aria-current="page">Daily report</a>',
    );
    expect(page.text).toContain(`value="${day}"`);
    for (const figure of ['1,662.81 RUB', '48.33 USD', '50.25 RUB', ids.open, ids.payoutFlagged])
      expect(page.text).toContain(figure);
    // Caller text is escaped, never markup.
    expect(page.text).toContain('=HYPERLINK(&quot;http://x.example/?a=1,2&quot;,&quot;open&quot;)');
    expect(page.text).not.toContain(HOSTILE_ID);
    const href = `/admin/ui/reports/daily.csv?date=${day}`;
    expect(page.text).toContain(`href="${href}"`);

    const download = await ctx.http.get(href).set('Cookie', jar.header()).expect(200);
    expect(download.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(download.headers['content-disposition']).toBe(
      `attachment; filename="daily-report-${day}-UTC.csv"`,
    );
    const api = await ctx.http
      .get(`/api/v1/admin/reports/daily?date=${day}&format=csv`)
      .set(admin())
      .expect(200);
    const ageless = (t: string): string => t.replace(/,\d+,,,,\r\n/g, ',AGE,,,,\r\n');
    expect(ageless(download.text)).toBe(ageless(api.text));
    expect(download.text).toContain(`\r\nopen,643,,500.00,,invoice,${ids.open},`);

    // Today so far by default; a bad or future day is a page saying so, not an error.
    const byDefault = await ctx.http
      .get('/admin/ui/reports/daily')
      .set('Cookie', jar.header())
      .expect(200);
    expect(byDefault.text).toContain(`value="${utcDay(new Date())}"`);
    for (const bad of ['2026-02-30', utcDay(new Date(Date.now() + 86_400_000)), '%3Cb%3E']) {
      const res = await ctx.http
        .get(`/admin/ui/reports/daily?date=${bad}`)
        .set('Cookie', jar.header())
        .expect(400);
      expect(res.text).toContain('role="alert"');
      expect(res.text).not.toContain('<b>');
      await ctx.http
        .get(`/admin/ui/reports/daily.csv?date=${bad}`)
        .set('Cookie', jar.header())
        .expect(400);
    }
    // Without a console session: the sign-in page, and no data.
    for (const path of [`/admin/ui/reports/daily?date=${day}`, href]) {
      const anon = await ctx.http.get(path).expect(303);
      expect(anon.headers.location).toBe('/admin/login');
      const withBearer = await ctx.http.get(path).set(admin()).expect(303);
      expect(withBearer.text).not.toContain('1662.81');
    }
  });
});

describe('GET /api/v1/admin/reports/daily: access and the date', () => {
  it('is for admin keys only', async () => {
    const today = utcDay(new Date());
    await ctx.http.get(`/api/v1/admin/reports/daily?date=${today}`).expect(401);
    const shop = await ctx.http
      .get(`/api/v1/admin/reports/daily?date=${today}`)
      .set(auth())
      .expect(403);
    expect(shop.headers['content-type']).toContain('application/problem+json');
    await ctx.http
      .get(`/api/v1/admin/reports/daily?date=${today}&format=csv`)
      .set(auth())
      .set('Accept', 'text/csv')
      .expect(403);
    // Other spellings of the path reach the same guarded route or none.
    for (const path of [
      '/api/v1/ADMIN/reports/daily',
      '/api/v1/admin/reports/daily/',
      '/api/v1/admin/reports/%64aily',
    ])
      expect([403, 404]).toContain(
        (await ctx.http.get(`${path}?date=${today}`).set(auth())).status,
      );
  });

  it.each([
    ['2026-02-30'],
    ['2026-1-5'],
    ['20260115'],
    ['2026-01-15T00:00:00Z'],
    [' 2026-01-15'],
    ['2026-01-15 '],
    ['1999-12-31'],
    ['０２０２６-01-15'],
    ['2026-01-15%0A'],
    ['2026-01-15&date=2026-01-16'],
    [''],
  ])('refuses date=%s with 400 naming date', async (date) => {
    const res = await ctx.http
      .get(
        `/api/v1/admin/reports/daily?date=${date.includes('%') || date.includes('&') ? date : encodeURIComponent(date)}`,
      )
      .set(admin())
      .expect(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['date']);
  });

  it('refuses a missing date, an unknown format and unknown parameters', async () => {
    const missing = await ctx.http.get('/api/v1/admin/reports/daily').set(admin()).expect(400);
    expect(missing.body.errors).toEqual([{ field: 'date', message: 'is required' }]);
    const today = utcDay(new Date());
    const fmt = await ctx.http
      .get(`/api/v1/admin/reports/daily?date=${today}&format=xml`)
      .set(admin())
      .expect(400);
    expect(fmt.body.errors.map((e: { field: string }) => e.field)).toEqual(['format']);
    await ctx.http
      .get(`/api/v1/admin/reports/daily?date=${today}&timeZone=Asia/Tokyo`)
      .set(admin())
      .expect(400);
  });

  it('refuses a day that has not begun (400 naming date); today is the day so far', async () => {
    const tomorrow = utcDay(new Date(Date.now() + 86_400_000));
    const res = await report(tomorrow).expect(400);
    expect(res.body.errors).toEqual([{ field: 'date', message: 'must not be in the future' }]);
    await report('2999-01-01').expect(400);
    const yesterday = (await report(utcDay(new Date(Date.now() - 86_400_000))).expect(200))
      .body as DailyReport;
    expect(yesterday.complete).toBe(true);
  });
});

describe('the day’s boundary in REPORT_TIMEZONE', () => {
  let moscow: TestContext;

  beforeAll(async () => {
    moscow = await startTestApp({
      sandbox: ctx.sandbox,
      databaseUrl: ctx.databaseUrl,
      env: { ...ENV, REPORT_TIMEZONE: 'Europe/Moscow' },
    });
  });

  afterAll(async () => {
    await moscow?.close();
  });

  it('counts an invoice processed at 23:30 UTC on the next day in Europe/Moscow', async () => {
    const late = await invoice(PAYMENT.cardSuccess, { amount: '11.11' });
    const edge = await invoice(PAYMENT.cardSuccess, { amount: '22.22' });
    const before = await invoice(PAYMENT.cardSuccess, { amount: '33.33' });
    for (const id of [late, edge, before]) await invoiceSettles(id, 'succeeded');
    const set = (id: string, at: string): Promise<unknown> =>
      db.query(
        `UPDATE invoices SET created_at = $2::timestamptz - interval '1 hour', processed_at = $2::timestamptz WHERE shop_order_id = $1`,
        [id, at],
      );
    await set(late, '2025-03-14T23:30:00Z'); // 2025-03-15 02:30 in Moscow
    await set(edge, '2025-03-14T21:00:00Z'); // exactly Moscow's midnight: the 15th
    await set(before, '2025-03-14T20:59:59.999999Z'); // the last instant of Moscow's 14th

    const sums = async (c: TestContext, date: string): Promise<unknown> =>
      ((await report(date, c).expect(200)).body as DailyReport).currencies.map((x) => [
        x.currency,
        x.payments,
      ]);
    expect(await sums(ctx, '2025-03-14')).toEqual([[643, { count: 3, amount: '66.66' }]]);
    expect(await sums(ctx, '2025-03-15')).toEqual([]);
    expect(await sums(moscow, '2025-03-14')).toEqual([[643, { count: 1, amount: '33.33' }]]);
    expect(await sums(moscow, '2025-03-15')).toEqual([[643, { count: 2, amount: '33.33' }]]);

    const m = (await report('2025-03-15', moscow).expect(200)).body as DailyReport;
    expect(m).toMatchObject({
      timeZone: 'Europe/Moscow',
      from: '2025-03-14T21:00:00.000Z',
      to: '2025-03-15T21:00:00.000Z',
      complete: true,
    });
    const csv = await moscow.http
      .get('/api/v1/admin/reports/daily?date=2025-03-15&format=csv')
      .set(admin())
      .expect(200);
    expect(csv.headers['content-disposition']).toBe(
      'attachment; filename="daily-report-2025-03-15-Europe_Moscow.csv"',
    );
  });

  it('an object final only after the day’s end was open at it, aged to that end', async () => {
    const id = await invoice(PAYMENT.cardSuccess, { amount: '44.00' });
    await invoiceSettles(id, 'succeeded');
    await db.query(
      `UPDATE invoices SET created_at = '2025-03-10T10:00:00Z', processed_at = '2025-03-12T08:00:00Z' WHERE shop_order_id = $1`,
      [id],
    );
    const open = async (date: string): Promise<DailyReport['open']['items']> =>
      ((await report(date).expect(200)).body as DailyReport).open.items.filter((o) => o.id === id);
    expect(await open('2025-03-09')).toEqual([]);
    expect(await open('2025-03-10')).toEqual([
      expect.objectContaining({
        objectType: 'invoice',
        amount: '44.00',
        currentStatus: 'succeeded',
        createdAt: '2025-03-10T10:00:00.000Z',
        ageSeconds: 14 * 3600,
      }),
    ]);
    expect((await open('2025-03-11'))[0].ageSeconds).toBe(38 * 3600);
    expect(await open('2025-03-12')).toEqual([]);
    const row12 = (await report('2025-03-12').expect(200)).body as DailyReport;
    expect(row12.currencies).toEqual([
      expect.objectContaining({ currency: 643, payments: { count: 1, amount: '44.00' } }),
    ]);
  });

  it('a cancelled payout is final: never listed open, like any other final status', async () => {
    const template = await payout(PAYOUT.card);
    // Two rows made from the sent one, moved into a past day and never sent (no ledger
    // movement): one cancelled that day (final), one still pending (open), as a batch leaves them.
    const copy = (shopPaymentId: string, status: string, finishedAt: string | null) =>
      db.query(
        `INSERT INTO payouts
         SELECT (jsonb_populate_record(NULL::payouts, to_jsonb(p) || jsonb_build_object(
                  'id', gen_random_uuid(), 'shop_payment_id', $2::text, 'status', $3::text,
                  'sent_at', NULL, 'withdraw_id', NULL, 'create_attempts', 0, 'needs_attention', false,
                  'attention_reason', NULL, 'attention_at', NULL, 'next_poll_at', NULL,
                  'created_at', '2025-03-20T10:00:00Z', 'updated_at', '2025-03-20T11:00:00Z',
                  'finished_at', $4::timestamptz))).*
           FROM payouts p WHERE p.shop_payment_id = $1`,
        [template, shopPaymentId, status, finishedAt],
      );
    const cancelled = `${template}-cancelled`;
    const pending = `${template}-pending`;
    await copy(cancelled, 'cancelled', '2025-03-20T11:00:00Z');
    await copy(pending, 'pending', null);
    const open = ((await report('2025-03-20').expect(200)).body as DailyReport).open.items
      .filter((o) => o.objectType === 'payout')
      .map((o) => o.id);
    expect(open).toContain(pending);
    expect(open).not.toContain(cancelled);
  });
});
