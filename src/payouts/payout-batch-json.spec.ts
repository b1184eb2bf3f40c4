import { parseBatchJson } from './payout-batch-json';

describe('a JSON batch body read a slice at a time', () => {
  it.each([
    '{"rows":[]}',
    '{}',
    ' { "batchId" : "b-1" , "rows" : [ {"a":"x,y]}"}, {"b":[1,{"c":"\\\\"}]}, 7, "s\\"]" ,null] } ',
    '{"rows":[{"x":"\\u0041"}],"rows":[{"y":1}]}',
    '{"rows":{"not":"an array"},"other":[1,2]}',
    '{"__proto__":{"a":1},"rows":[{"__proto__":{"b":2}}]}',
    '[{"rows":[]}]',
    JSON.stringify({ rows: Array.from({ length: 3000 }, (_, i) => ({ id: `r-${i}`, d: 'x'.repeat(100) })) }),
  ])('gives what JSON.parse gives: %#', async (text) => {
    expect(await parseBatchJson(text)).toEqual(JSON.parse(text));
  });

  it.each(['{"rows":[{"a":1},]}', '{"rows":[{"a":1}', '{"rows":[1 2]}', '{"a":1,}', '{"a":1} x', '{"a":"unterminated}', '{"rows":[{"a":1}]]}', '{a:1}', '{"rows":[,]}'])(
    'refuses %p as JSON.parse does',
    async (text) => {
      expect(() => JSON.parse(text)).toThrow(SyntaxError);
      await expect(parseBatchJson(text)).rejects.toThrow(SyntaxError);
    },
  );
});
