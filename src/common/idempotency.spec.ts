import { canonicalJson, secretFieldsSent } from './idempotency';

/** The first version of canonicalJson, verbatim: stored fingerprints are hashes of its output. */
function firstVersion(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(firstVersion).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${firstVersion(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A small deterministic generator, so a failure names a seed that reproduces it. */
function generator(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

const KEYS = [
  'a',
  'b',
  'B',
  'é',
  'e\u0301',
  '😀',
  'ﬀ',
  '10',
  '2',
  '',
  ' ',
  '__proto_',
  'amount',
  'z',
];

function arbitrary(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 3 ? 7 : 9));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return undefined;
    case 2:
      return next() < 0.5;
    case 3:
      return Math.floor(next() * 2000) - 1000;
    case 4:
      return (next() * 1e6).toString(36);
    case 5:
      return `"quoted"\\\n\u2028${KEYS[Math.floor(next() * KEYS.length)]}`;
    case 6:
      return new Date(Math.floor(next() * 1e12));
    case 7:
      return Array.from({ length: Math.floor(next() * 4) }, () => arbitrary(next, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      const n = Math.floor(next() * 6);
      for (let i = 0; i < n; i++)
        o[KEYS[Math.floor(next() * KEYS.length)]] = arbitrary(next, depth + 1);
      return o;
    }
  }
}

describe('canonicalJson', () => {
  it('gives the first version’s text, byte for byte, on 5,000 generated values', () => {
    for (let seed = 1; seed <= 5000; seed++) {
      const value = arbitrary(generator(seed), 0);
      const expected = firstVersion(value);
      const got = canonicalJson(value);
      if (got !== expected) throw new Error(`seed ${seed}: ${got} !== ${expected}`);
    }
  });

  it('sorts keys at every level, drops undefined members and keeps array holes as join does', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: undefined }, B: [3, undefined, null] })).toBe(
      '{"B":[3,,null],"a":{"d":2},"b":1}',
    );
    expect(canonicalJson({ z: 1, a: 2 })).toBe(canonicalJson({ a: 2, z: 1 }));
    expect(canonicalJson([undefined])).toBe('[]');
    expect(canonicalJson('x')).toBe('"x"');
  });
});

describe('secretFieldsSent: a conflict names only the secret fields the repeat sent', () => {
  const fields = ['account', 'accountDetails'];
  const entry = (field: string) => [{ field, message: expect.stringContaining('secret') }];

  it.each<[string, object[], string, unknown[]]>([
    ['one sent', [{ account: '4111', amount: '1' }], '', entry('account')],
    [
      'both sent',
      [{ account: '4111', accountDetails: { bik: '1' } }],
      '',
      entry('account, accountDetails'),
    ],
    ['null is not sent', [{ account: '4111', accountDetails: null }], '', entry('account')],
    ['empty text is sent', [{ account: '' }], '', entry('account')],
    ['none sent: no entry', [{ amount: '1' }], '', []],
    [
      'a batch: any row',
      [{ account: '1' }, { account: '2', accountDetails: {} }],
      'rows[].',
      entry('rows[].account, rows[].accountDetails'),
    ],
    ['a batch of none', [], 'rows[].', []],
  ])('%s', (_n, requests, prefix, expected) => {
    expect(secretFieldsSent(requests, fields, prefix)).toEqual(expected);
  });
});
