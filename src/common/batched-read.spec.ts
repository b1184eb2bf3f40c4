import { BatchedRead } from './batched-read';

/** A loader that records each batch of keys it was asked for and answers from a table. */
function loader(table: Record<string, string>, fail?: Error) {
  const batches: string[][] = [];
  const load = async (keys: string[]): Promise<Map<string, string>> => {
    batches.push(keys);
    await new Promise((r) => setImmediate(r));
    if (fail) throw fail;
    return new Map(keys.filter((k) => k in table).map((k) => [k, table[k]]));
  };
  return { batches, load };
}

it("sends the turn's keys as one batch and gives each caller its own row", async () => {
  const { batches, load } = loader({ a: 'A', b: 'B', c: 'C' });
  const reads = new BatchedRead(load);
  const got = await Promise.all(['a', 'b', 'c', 'x'].map((k) => reads.get(k)));
  expect(got).toEqual(['A', 'B', 'C', undefined]);
  expect(batches).toEqual([['a', 'b', 'c', 'x']]);
});

it('reads a key asked twice in one turn once, and answers both callers', async () => {
  const { batches, load } = loader({ a: 'A' });
  const reads = new BatchedRead(load);
  expect(await Promise.all([reads.get('a'), reads.get('a')])).toEqual(['A', 'A']);
  expect(batches).toEqual([['a']]);
});

it('never sends a read before it was asked: a later turn gets a later statement', async () => {
  const table: Record<string, string> = { a: 'old' };
  const { batches, load } = loader(table);
  const reads = new BatchedRead(load);
  expect(await reads.get('a')).toBe('old');
  table.a = 'new'; // a write committed before the next read began
  expect(await reads.get('a')).toBe('new');
  expect(batches).toEqual([['a'], ['a']]);
});

it('sends at once when maxBatch keys wait, and the rest in the next statement', async () => {
  const { batches, load } = loader({ a: 'A', b: 'B', c: 'C' });
  const reads = new BatchedRead(load, 2);
  expect(await Promise.all(['a', 'b', 'c'].map((k) => reads.get(k)))).toEqual(['A', 'B', 'C']);
  expect(batches).toEqual([['a', 'b'], ['c']]);
});

it("fails every read of a batch whose statement failed, and the next turn's reads still work", async () => {
  const boom = new Error('connection lost');
  const failing = loader({ a: 'A' }, boom);
  const reads = new BatchedRead(failing.load);
  const outcomes = await Promise.allSettled([reads.get('a'), reads.get('b')]);
  expect(outcomes).toEqual([
    { status: 'rejected', reason: boom },
    { status: 'rejected', reason: boom },
  ]);
  const ok = loader({ a: 'A' });
  const again = new BatchedRead(ok.load);
  expect(await again.get('a')).toBe('A');
});

it('a loader that throws at once (not a rejected promise) fails the batch, not the process', async () => {
  const reads = new BatchedRead<string, string>(() => {
    throw new Error('bad parameters');
  });
  await expect(reads.get('a')).rejects.toThrow('bad parameters');
});

it('refuses a batch size that is not a positive integer', () => {
  for (const n of [0, -1, 1.5, Number.NaN]) {
    expect(() => new BatchedRead(async () => new Map(), n)).toThrow('maxBatch');
  }
});
