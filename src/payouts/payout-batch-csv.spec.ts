import { csvToRows, CsvProblem, headerColumns } from './payout-batch-csv';

const BASE = 'shopPaymentId,amount,amountType,shopCurrency,payway,account';

function problemOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    if (e instanceof CsvProblem) return e.problem;
    throw e;
  }
  throw new Error('no problem');
}

describe('CSV batches: the header is held to the limits of a JSON row', () => {
  it.each([
    ['metadata', 20, 'metadata.k'],
    ['accountDetails', 64, 'accountDetails.d'],
  ])('%s takes %i key columns, not one more', (field, limit, prefix) => {
    const names = (n: number) => Array.from({ length: n }, (_, k) => `${prefix}${k}`);
    expect(headerColumns([...BASE.split(','), ...names(limit)])).toHaveLength(6 + limit);
    expect(problemOf(() => headerColumns([...BASE.split(','), ...names(limit + 1)]))).toEqual({
      field: `header.${field}`,
      message: `has more than ${limit} ${field}.<key> columns; at most ${limit} keys are allowed`,
    });
  });

  it('refuses the header before reading the rows after it (an unterminated quote below is never reached)', () => {
    const keys = Array.from({ length: 5000 }, (_, k) => `metadata.k${k}`).join(',');
    expect(problemOf(() => csvToRows(`${BASE},${keys}\n"never closed`))).toMatchObject({
      field: 'header.metadata',
    });
  });

  it('refuses a reserved key, unknown and repeated columns by name', () => {
    expect(
      problemOf(() => headerColumns([...BASE.split(','), 'metadata.__proto__'])),
    ).toMatchObject({
      field: 'header.metadata.__proto__',
    });
    expect(problemOf(() => headerColumns(['shopPaymentId', 'bogus']))).toMatchObject({
      field: 'header.bogus',
    });
    expect(problemOf(() => headerColumns(['amount', 'amount']))).toMatchObject({
      field: 'header.amount',
    });
  });

  it('maps rows in one pass: object columns to keys, empty cells absent; NUL refused as at the edge', () => {
    const text = `${BASE},metadata.ref,accountDetails.name\np1,1.00,ps_amount,643,w,4111,r1,\np2,2.00,ps_amount,643,w,4111,,Ivan\n`;
    expect(csvToRows(text)).toEqual([
      {
        shopPaymentId: 'p1',
        amount: '1.00',
        amountType: 'ps_amount',
        shopCurrency: '643',
        payway: 'w',
        account: '4111',
        metadata: { ref: 'r1' },
      },
      {
        shopPaymentId: 'p2',
        amount: '2.00',
        amountType: 'ps_amount',
        shopCurrency: '643',
        payway: 'w',
        account: '4111',
        accountDetails: { name: 'Ivan' },
      },
    ]);
    expect(
      problemOf(() => csvToRows(`${BASE}\np1,1.00,ps_amount,643,w,41\u000011\n`)),
    ).toMatchObject({
      message: 'must not contain NUL characters',
    });
  });
});
