import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { auth, startTestApp, TestContext } from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';

/**
 * An unknown field is a 400 naming it ("should not exist"), whatever its name. Keys named like a
 * member every object inherits (`toString`, `constructor`, `__proto__`, …) were the exception:
 * Nest strips three of them before validation and class-transformer skips the rest, so a create
 * carrying one was accepted and the field dropped without a word (src/common/inherited-names.ts).
 * Against the running app, in every place a DTO reads keys: each create's body, its nested
 * objects, `extras`, a list's query, a batch's rows as JSON and as CSV; other spellings of the
 * same name (JSON escapes, percent-encoding); and each time nothing is written and nothing is
 * sent to the gateway.
 */
const NAMES = [
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  'constructor',
  '__proto__',
  'prototype',
  '__defineGetter__',
  '__lookupSetter__',
];
const CARD = '4111111111111111';

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

const uid = (): string => randomUUID().slice(0, 12);

/** Rows of every table a create or a batch writes, and the gateway calls so far. */
async function footprint(): Promise<string> {
  const r = await db.query(
    `SELECT (SELECT count(*) FROM invoices) AS i, (SELECT count(*) FROM refunds) AS r,
            (SELECT count(*) FROM payouts) AS p, (SELECT count(*) FROM payout_batches) AS b,
            (SELECT count(*) FROM events) AS e`,
  );
  return JSON.stringify({ ...r.rows[0], gateway: ctx.sandbox.state.requests.length });
}

/** A valid body's JSON text with `"key": value` added at the end of the object at `at`. */
function withKey(body: Record<string, unknown>, key: string, value: string, at?: string): string {
  const text = (o: Record<string, unknown>, extra: string) =>
    `${JSON.stringify(o).slice(0, -1)}${Object.keys(o).length ? ',' : ''}${extra}}`;
  const pair = `"${key}":${value}`;
  if (at === undefined) return text(body, pair);
  const { [at]: inner, ...rest } = body;
  return text(rest, `"${at}":${text((inner ?? {}) as Record<string, unknown>, pair)}`);
}

const invoice = (): Record<string, unknown> => ({
  shopOrderId: `inh-${uid()}`,
  amount: '10.00',
  currency: 643,
  payway: PAYMENT.cardSuccess,
});
const payout = (): Record<string, unknown> => ({
  shopPaymentId: `inh-${uid()}`,
  amount: '100.00',
  amountType: 'ps_amount',
  shopCurrency: 643,
  payway: PAYOUT.card,
  account: CARD,
});
const card = { number: CARD, expiryMonth: '12', expiryYear: '30', cvv: '123' };

const postJson = (path: string, text: string) =>
  ctx.http.post(path).set(auth()).set('Content-Type', 'application/json').send(text);

/** The answer is a 400 whose errors name exactly `fields`, each "should not exist". */
function expectRefused(
  res: { status: number; body: { errors?: unknown } },
  fields: string[],
): void {
  expect({ status: res.status, errors: res.body.errors }).toEqual({
    status: 400,
    errors: fields.map((field) => ({ field, message: 'should not exist' })),
  });
}

describe('a key named like an inherited member is an unknown field, not a dropped one', () => {
  it.each(NAMES)(
    'POST /invoices with "%s" at the top, in card, in clientInfo and in extras: 400, nothing written or sent',
    async (name) => {
      const before = await footprint();
      expectRefused(await postJson('/api/v1/invoices', withKey(invoice(), name, '"x"')), [name]);
      // An object value too (the shape of a pollution attempt).
      expectRefused(
        await postJson('/api/v1/invoices', withKey(invoice(), name, '{"isAdmin":true}')),
        [name],
      );
      expectRefused(
        await postJson('/api/v1/invoices', withKey({ ...invoice(), card }, name, '"x"', 'card')),
        [`card.${name}`],
      );
      expectRefused(
        await postJson(
          '/api/v1/invoices',
          withKey(
            { ...invoice(), clientInfo: { challengeWindowSize: '05' } },
            name,
            '"x"',
            'clientInfo',
          ),
        ),
        [`clientInfo.${name}`],
      );
      expectRefused(
        await postJson(
          '/api/v1/invoices',
          withKey({ ...invoice(), extras: {} }, name, '"x"', 'extras'),
        ),
        [`extras.${name}`],
      );
      expect(await footprint()).toBe(before);
    },
  );

  it.each(NAMES)(
    'refund and payout creates with "%s": 400, nothing written or sent',
    async (name) => {
      const before = await footprint();
      expectRefused(
        await postJson(
          `/api/v1/invoices/inh-none-${uid()}/refunds`,
          withKey({ shopRefundId: `r-${uid()}`, amount: '1.00' }, name, '"x"'),
        ),
        [name],
      );
      expectRefused(await postJson('/api/v1/payouts', withKey(payout(), name, '"x"')), [name]);
      expect(await footprint()).toBe(before);
    },
  );

  it('other spellings of the same names are the same names: JSON escapes, and beside other errors', async () => {
    const before = await footprint();
    expectRefused(await postJson('/api/v1/invoices', withKey(invoice(), '\\u0074oString', '"x"')), [
      'toString',
    ]);
    expectRefused(
      await postJson('/api/v1/invoices', withKey(invoice(), '\\u005f_proto__', '"x"')),
      ['__proto__'],
    );
    expectRefused(
      await postJson('/api/v1/invoices', withKey(invoice(), 'construct\\u006fr', '1')),
      ['constructor'],
    );
    // With another unknown field and a wrong one: every problem is named in one answer.
    const res = await postJson(
      '/api/v1/invoices',
      withKey({ ...invoice(), amount: 'ten', bogus: 1 }, 'valueOf', '"x"'),
    );
    expect(res.status).toBe(400);
    expect((res.body.errors as Array<{ field: string }>).map((e) => e.field).sort()).toEqual([
      'amount',
      'bogus',
      'valueOf',
    ]);
    expect(await footprint()).toBe(before);
  });

  it('beside more than 20 other errors, the count of those left out stays exact', async () => {
    const body = invoice();
    for (let i = 0; i < 25; i++) body[`bogus${i}`] = i;
    const res = await postJson('/api/v1/invoices', withKey(body, 'toString', '"x"'));
    expect(res.status).toBe(400);
    const errors = res.body.errors as Array<{ field: string; message: string }>;
    // 26 errors: the first 20 named, then one entry for the 6 others.
    expect(errors).toHaveLength(21);
    expect(errors[0]).toEqual({ field: 'toString', message: 'should not exist' });
    expect(errors[20]).toEqual({ field: 'body', message: 'and 6 more' });
  });

  it('names that are no inherited member, and metadata keys that are not reserved, keep their meaning', async () => {
    // Near misses are ordinary unknown fields, refused by the validator itself.
    expectRefused(await postJson('/api/v1/invoices', withKey(invoice(), 'ToString', '"x"')), [
      'ToString',
    ]);
    expectRefused(await postJson('/api/v1/invoices', withKey(invoice(), 'toString ', '"x"')), [
      'toString ',
    ]);
    // A metadata key is the shop's own name: `toString` there is kept and returned.
    const body = { ...invoice(), metadata: { toString: 'a', valueOf: 'b' } };
    const res = await postJson('/api/v1/invoices', JSON.stringify(body));
    expect(res.status).toBe(201);
    expect(res.body.metadata).toEqual({ toString: 'a', valueOf: 'b' });
  });

  it.each(NAMES)('GET /invoices?%s=1, spelled plainly and percent-encoded: 400', async (name) => {
    for (const spelled of [
      name,
      [...name].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join(''),
    ]) {
      const res = await ctx.http.get(`/api/v1/invoices?limit=5&${spelled}=1`).set(auth());
      expectRefused(res, [name]);
    }
    expect((await ctx.http.get('/api/v1/invoices?limit=5').set(auth())).status).toBe(200);
  });

  it('a payout batch: the name in a JSON row, beside the rows, and as a CSV column is refused; nothing is stored or sent', async () => {
    const before = await footprint();
    const tag = uid();
    const json = `{"batchId":"inh-${tag}","rows":[${JSON.stringify(payout())},${withKey(payout(), 'toString', '"x"')}]}`;
    const inRow = await postJson('/api/v1/payouts/batches', json);
    expect(inRow.status).toBe(400);
    expect(inRow.body.errors).toEqual([{ field: 'rows[2].toString', message: 'should not exist' }]);
    const beside = await postJson(
      '/api/v1/payouts/batches',
      `{"batchId":"inh2-${tag}","rows":[${JSON.stringify(payout())}],"constructor":"x"}`,
    );
    expectRefused(beside, ['constructor']);
    const p = payout();
    const csv = `shopPaymentId,amount,amountType,shopCurrency,payway,account,valueOf\r\n${p.shopPaymentId},100.00,ps_amount,643,${String(p.payway)},${CARD},x\r\n`;
    const column = await ctx.http
      .post(`/api/v1/payouts/batches?batchId=inh3-${tag}`)
      .set(auth())
      .set('Content-Type', 'text/csv')
      .send(csv);
    expect(column.status).toBe(400);
    expect(JSON.stringify(column.body.errors)).toContain('valueOf');
    expect(await footprint()).toBe(before);
  });

  it('nothing is polluted: after all of the above a plain object has no stray members', () => {
    const probe: Record<string, unknown> = {};
    expect(probe.isAdmin).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'isAdmin')).toBe(false);
  });
});
