import { parseExactJson } from './lossless';

describe('parseExactJson', () => {
  it('keeps money and non-integers as exact text, integers as numbers', () => {
    const parsed = parseExactJson(
      '{"amount":100,"fee_config":{"percent":2.50,"fix":0},"rate":1e-7,"balances":[{"available":0.10}],' +
        '"currency":643,"id":9007199254740991,"big_id":9007199254740993,"flag":true,"none":null,"amounts":[1.0,2]}',
    );
    expect(parsed).toEqual({
      amount: '100',
      fee_config: { percent: '2.50', fix: '0' },
      rate: '1e-7',
      balances: [{ available: '0.10' }],
      currency: 643,
      id: 9007199254740991,
      big_id: '9007199254740993',
      flag: true,
      none: null,
      amounts: ['1.0', 2],
    });
  });

  it('throws on text that is not JSON', () => {
    expect(() => parseExactJson('<html>')).toThrow(SyntaxError);
  });
});
