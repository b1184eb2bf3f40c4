import { csvToRows, CsvProblem, headerColumns, MAX_BATCH_ROWS, parseCsvRecords } from './payout-batch-csv';

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

async function asyncProblemOf(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
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

  it('refuses the header before reading the rows after it (an unterminated quote below is never reached)', async () => {
    const keys = Array.from({ length: 5000 }, (_, k) => `metadata.k${k}`).join(',');
    expect(await asyncProblemOf(() => csvToRows(`${BASE},${keys}\n"never closed`))).toMatchObject({
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

  it('maps rows in one pass: object columns to keys, empty cells absent; NUL refused as at the edge', async () => {
    const text = `${BASE},metadata.ref,accountDetails.name\np1,1.00,ps_amount,643,w,4111,r1,\np2,2.00,ps_amount,643,w,4111,,Ivan\n`;
    expect(await csvToRows(text)).toEqual([
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
      await asyncProblemOf(() => csvToRows(`${BASE}\np1,1.00,ps_amount,643,w,41\u000011\n`)),
    ).toMatchObject({
      message: 'must not contain NUL characters',
    });
  });
});

describe('CSV records, cut out of the text a slice at a time', () => {
  it.each<[string, string[][]]>([
    ['a,b\nc,d\n', [['a', 'b'], ['c', 'd']]],
    ['a,b\r\nc,d', [['a', 'b'], ['c', 'd']]],
    ['\ufeffa,b\n\n\nc,\n', [['a', 'b'], ['c', '']]],
    ['"a,1","b\n2"\n"say ""hi""",x', [['a,1', 'b\n2'], ['say "hi"', 'x']]],
    ['a\rb,c\n', [['a\rb', 'c']]],
    ['a,b,', [['a', 'b', '']]],
    ['"ab"cd,e"f"\n', [['abcd', 'e"f"']]],
    ['"",x\n', [['', 'x']]],
  ])('%p', async (text, records) => {
    expect(await parseCsvRecords(text, 100)).toEqual(records);
  });

  it('a quote left open and too many records are problems', async () => {
    await expect(parseCsvRecords('a,"b\n', 10)).rejects.toThrow('ends inside a quoted field');
    await expect(parseCsvRecords('a\nb\nc\n', 2)).rejects.toThrow('has more than 1 rows');
  });

  it('yields to the event loop while it reads a large body', async () => {
    const text = `${BASE}\n${Array.from({ length: MAX_BATCH_ROWS }, (_, i) => `p${i},1.00,ps_amount,643,w,4111`).join('\n')}\n`;
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    try {
      expect(await csvToRows(text)).toHaveLength(MAX_BATCH_ROWS);
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(3);
  });
});
