import { foldMetadataQuery, metadataProblems, reservedMetadataKey } from './metadata';
import { differingFields } from './idempotency';

describe('metadataProblems', () => {
  it('takes up to 20 string keys of 1-40 characters with string values up to 500', () => {
    const ok = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${'k'.repeat(38)}${i}`.slice(-40), 'v'.repeat(500)]));
    expect(metadataProblems(ok)).toEqual([]);
    expect(metadataProblems({})).toEqual([]);
  });

  it('names the key at fault, one error per key, an overlong key cut', () => {
    expect(metadataProblems({ a: 1, b: 'x'.repeat(501), ['k'.repeat(50)]: 'v' })).toEqual([
      { field: 'metadata.a', message: 'must be a string' },
      { field: 'metadata.b', message: 'must be at most 500 characters' },
      { field: `metadata.${'k'.repeat(40)}…`, message: 'key must be 1 to 40 characters' },
    ]);
    expect(metadataProblems(['a'])).toEqual([{ field: 'metadata', message: expect.stringContaining('object') }]);
    expect(metadataProblems(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])))).toHaveLength(1);
  });

  it('as a list filter: a repeated parameter and an empty filter are refused', () => {
    expect(metadataProblems({ a: ['1', '2'] }, 'metadata', true)).toEqual([{ field: 'metadata.a', message: 'may be given once' }]);
    expect(metadataProblems({}, 'metadata', true)).toHaveLength(1);
    expect(metadataProblems('x', 'metadata', true)).toEqual([{ field: 'metadata', message: 'filters are written metadata[key]=value' }]);
  });
});

describe('foldMetadataQuery', () => {
  it('gathers metadata[key] parameters, keeps the rest, never touches a prototype', () => {
    const q = foldMetadataQuery({ status: 'x', 'metadata[a]': '1', 'metadata[a][b]': '2', 'metadata[__proto__]': '3' });
    expect(q.status).toBe('x');
    expect(Object.keys(q.metadata as object)).toEqual(['a', 'a][b', '__proto__']);
    expect(({} as Record<string, unknown>)['3']).toBeUndefined();
    expect(reservedMetadataKey(q)).toEqual({ field: 'metadata.__proto__', message: expect.stringContaining('reserved') });
  });

  it('a plain metadata parameter wins over bracketed ones (and is refused by validation)', () => {
    expect(foldMetadataQuery({ metadata: 'x', 'metadata[a]': '1' }).metadata).toBe('x');
  });
});

describe('differingFields', () => {
  it('compares canonical values, absent = null, key order ignored', () => {
    expect(differingFields({ a: '1', b: null, m: { x: '1', y: '2' } }, { a: '1', m: { y: '2', x: '1' } })).toEqual([]);
    expect(differingFields({ a: '1', b: 'x' }, { a: '2', c: 'y' })).toEqual(['a', 'b', 'c']);
  });
});
