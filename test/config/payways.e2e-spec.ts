import { Client } from 'pg';
import { auth, startTestApp, type TestContext } from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';

type Json = Record<string, unknown>;

/** Every key of a JSON value, at any depth, except inside the named free-form maps. */
function keysOf(v: unknown, free: ReadonlySet<string>, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) keysOf(x, free, out);
  else if (typeof v === 'object' && v !== null)
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      if (!free.has(k)) keysOf(x, free, out);
    }
  return out;
}

/**
 * GET /payways answers in camelCase with typed fields like every other route, amounts as the
 * gateway's exact decimal text; what is stored stays the gateway's own list.
 */
describe('GET /payways: camelCase, typed, exact (sandbox)', () => {
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

  const list = async (direction: string, refresh = false): Promise<Json> =>
    (
      await ctx.http
        .get(`/api/v1/payways?direction=${direction}${refresh ? '&refresh=true' : ''}`)
        .set(auth())
        .expect(200)
    ).body as Json;
  const paywaysOf = (body: Json): Json[] =>
    (body.groups as Array<{ payways: Json[] }>).flatMap((g) => g.payways);

  it('payment ways: camelCase fields, the catalogue’s digits as decimal strings, add-ons typed', async () => {
    const body = await list('payment', true);
    expect(body.direction).toBe('payment');
    expect((body.groups as Json[])[0]).toMatchObject({ id: 1, name: 'Bank cards', rating: 1 });
    const ways = paywaysOf(body);
    // The catalogue writes 10.0, 500000.0, 2.5, 0.0 as JSON numbers and percent_part as the text
    // "1.0": amounts are written with the currency's minor-unit digits, rates and shares as sent.
    expect(ways.find((p) => p.alias === PAYMENT.card)).toEqual({
      id: 1101,
      alias: PAYMENT.card,
      currency: 643,
      minAmount: '10.00',
      maxAmount: '500000.00',
      feeConfig: { percent: '2.5', fix: '0.00' },
      feePartConfig: { percentPart: '1.0', fixPart: '1.0' },
      isActive: true,
      addOnsConfig: {},
    });
    expect(ways.find((p) => p.alias === PAYMENT.walletSuccess)).toMatchObject({
      minAmount: '1.00',
      feeConfig: { percent: '1.5', fix: '5.00' },
      feePartConfig: { percentPart: '1.0', fixPart: '0.5' },
      addOnsConfig: {
        phone: {
          label: { en: 'Phone number', ru: 'Номер телефона' },
          hint: { en: "The wallet's phone number", ru: 'Номер телефона кошелька' },
          example: '+79001234567',
          regex: '^\\+?7\\d{10}$',
          prefix: null,
        },
      },
    });
    expect(ways.find((p) => p.alias === PAYMENT.inactive)).toMatchObject({ isActive: false });
  });

  it('payout ways: accountInfoConfig and feeConfig in camelCase', async () => {
    const body = await list('payout', true);
    expect(body.direction).toBe('payout');
    expect(paywaysOf(body).find((p) => p.alias === PAYOUT.card)).toEqual({
      alias: PAYOUT.card,
      currency: 643,
      minAmount: '100.00',
      maxAmount: '100000.00',
      feeConfig: { percent: '1.0', fix: '30.00' },
      accountInfoConfig: { account: { regex: '^\\d{16,19}$', title: 'Card number' } },
      paysystemData: {},
    });
  });

  it('no snake_case key and no gateway-only field anywhere in either answer, cached or refetched', async () => {
    // Label and hint maps are keyed by language; paysystemData is the gateway's free-form data.
    const free = new Set(['label', 'hint', 'paysystemData', 'addOnsConfig', 'accountInfoConfig']);
    for (const direction of ['payment', 'payout'])
      for (const refresh of [false, true]) {
        const keys = keysOf(await list(direction, refresh), free);
        expect(keys.filter((k) => k.includes('_'))).toEqual([]);
        // The sandbox's catalogue adds fields of its own (kind, paymethod_id, two_step, …).
        expect(keys).not.toEqual(expect.arrayContaining(['kind']));
        expect(keys).not.toEqual(expect.arrayContaining(['twoStep']));
      }
  });

  it('the stored list stays the gateway’s own (snake_case, exact text): the mapping is for the answer only', async () => {
    await list('payment', true);
    const row = await db.query<{ data: Array<{ payways: Json[] }> }>(
      `SELECT data FROM payway_configs WHERE direction = 'payment'`,
    );
    const stored = row.rows[0].data.flatMap((g) => g.payways).find((p) => p.alias === PAYMENT.card);
    expect(stored).toMatchObject({ min_amount: '10.0', fee_part_config: { percent_part: '1.0' } });
  });
});
