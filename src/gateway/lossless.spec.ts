import fc from 'fast-check';
import {
  MONEY_FIELDS,
  parseExactJson,
  parseExactJsonByReference,
  parseLossless,
  parseLosslessByReference,
} from './lossless';
import { valueDifference } from '../common/testing/value-difference';

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

/** The one-pass parser's answer and the reference's: equal values, or both refuse. */
function outcome(
  parse: (text: string) => unknown,
  text: string,
): { value: unknown } | { error: string } {
  try {
    return { value: parse(text) };
  } catch (e) {
    return { error: e instanceof SyntaxError ? 'SyntaxError' : String(e) };
  }
}

/** Each one-pass parser beside its reference: the money rule's, and the lossless one's. */
const PARSERS = [
  ['parseExactJson', parseExactJson, parseExactJsonByReference],
  ['parseLossless', parseLossless, parseLosslessByReference],
] as const;

function expectAsReference(text: string): void {
  for (const [, fast, reference] of PARSERS) expectParsedAs(fast, reference, text);
}

function expectParsedAs(
  fast: (text: string) => unknown,
  reference: (text: string) => unknown,
  text: string,
): void {
  const got = outcome(fast, text);
  const want = outcome(reference, text);
  if ('error' in got || 'error' in want) {
    expect({ text, ...got }).toEqual({ text, ...want });
    return;
  }
  // Key order counts (a parser's output), and a `__proto__` key's prototype is compared as a value.
  const differs = valueDifference(got.value, want.value, { keyOrder: true, prototypes: 'made' });
  expect({ text, differs }).toEqual({ text, differs: null });
}

/** Keys the gateway's money rule reads, and keys that sort or parse oddly. */
const KEYS = [
  ...MONEY_FIELDS,
  'id',
  'currency',
  '10',
  '2',
  '',
  'é',
  '__proto_',
  '__proto__',
  'constructor',
  'toString',
];
const key = fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 4 }));
const numberText = fc.oneof(
  fc.constantFrom(
    '0',
    '-0',
    '1.0',
    '100.10',
    '1e-7',
    '1E+2',
    '9007199254740993',
    '-9007199254740991',
    '0.000',
  ),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
);
/** JSON text with numbers kept as written (JSON.stringify would normalise them). */
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText,
    fc.string({ maxLength: 8 }).map((s) => JSON.stringify(s)),
    fc.constantFrom(
      'true',
      'false',
      'null',
      '"\\u00e9\\n\\/\\"\\\\"',
      '"\\ud83d\\ude00"',
      '"\\ud800"',
    ),
    fc.array(tie('value'), { maxLength: 4 }).map((xs) => `[${xs.join(',')}]`),
    fc
      .array(fc.tuple(key, tie('value')), { maxLength: 5 })
      .map((kv) => `{${kv.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).value;
const spaced = fc
  .tuple(jsonText, fc.constantFrom('', ' ', '\n\t\r ', '\u00a0', '\u2028', '\u000b', '\f'))
  .map(([t, ws]) => t.replace(/([,:[{])/g, `$1${ws}`).replace(/([\]}])/g, `${ws}$1`));

describe('parseExactJson and parseLossless: one pass, as their references parse', () => {
  it('agrees with the reference on generated JSON texts (duplicate keys and __proto__ included)', () => {
    fc.assert(
      fc.property(fc.oneof(jsonText, spaced), (t) => expectAsReference(t)),
      { numRuns: 4000 },
    );
  });

  it('agrees with the reference on mangled texts: cut, a character dropped, doubled or swapped in', () => {
    const mangled = fc
      .tuple(
        jsonText,
        fc.nat(),
        fc.constantFrom('cut', 'drop', 'double', 'insert'),
        fc.constantFrom(...'{}[],:"\\-.eE+0 1tfnu\u0001'),
      )
      .filter(([t]) => t.length > 0)
      .map(([t, n, how, c]) => {
        const at = n % t.length;
        if (how === 'cut') return t.slice(0, at);
        if (how === 'drop') return t.slice(0, at) + t.slice(at + 1);
        if (how === 'double') return t.slice(0, at) + t[at] + t.slice(at);
        return t.slice(0, at) + c + t.slice(at);
      });
    fc.assert(
      fc.property(mangled, (t) => expectAsReference(t)),
      { numRuns: 6000 },
    );
  });

  it.each([
    '',
    ' ',
    '-',
    '-0',
    '01',
    '1.',
    '.5',
    '1e',
    '1e+',
    '[1,]',
    '[,1]',
    '{"a":1,}',
    '{"a" 1}',
    '{"a":}',
    '{a:1}',
    '"\\x"',
    '"\\u12"',
    '"\\u12G4"',
    '"a\nb"',
    '"abc',
    'tru',
    'truex',
    'nul',
    '{"a":1,"a":1}',
    '{"a":1,"a":1.0}',
    '{"amount":1,"amount":"1"}',
    '{"id":0,"id":-0}',
    '{"__proto__":{"x":1}}',
    '{"__proto__":1}',
    '{"a":{"__proto__":[1]}}',
    '[{"b":2,"b":2}]',
    '[{"__proto__":[],"constructor":[]}]',
    '{"__proto__":{"constructor":{}},"constructor":{}}',
    '1 2',
    '{"amount":[[1,2.0],{"x":3}]}',
  ])('agrees with the reference on %j', (t) => expectAsReference(t));
});
