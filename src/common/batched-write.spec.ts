import { DatabaseError } from 'pg';
import { BatchedWrite, refusedWhole } from './batched-write';

/** A SQLSTATE error as `pg` raises it (PostgreSQL's ErrorResponse). */
function sqlError(code: string, message = `error ${code}`): Error {
  const err = new DatabaseError(message, 0, 'error');
  err.code = code;
  return err;
}

/**
 * A store that records each statement (a row alone or a batch) and writes rows as PostgreSQL
 * would: a batch is all or nothing; `bad` rows make any statement holding them fail with `fail`.
 */
function store(opts: { bad?: string[]; fail?: Error; batchFail?: Error } = {}) {
  const written: string[] = [];
  const statements: string[][] = [];
  const check = (rows: string[]) => {
    if (rows.some((r) => opts.bad?.includes(r))) throw opts.fail ?? sqlError('23514');
  };
  const writes = new BatchedWrite<string, string>({
    name: 'test',
    key: (r) => r.split(':')[0],
    one: async (r) => {
      statements.push([r]);
      await new Promise((d) => setImmediate(d));
      check([r]);
      written.push(r);
      return `ok ${r}`;
    },
    many: async (rows) => {
      statements.push(rows);
      await new Promise((d) => setImmediate(d));
      if (opts.batchFail) throw opts.batchFail;
      check(rows);
      written.push(...rows);
      return rows.map((r) => `ok ${r}`);
    },
  });
  return { writes, written, statements };
}

it("writes the turn's rows in one statement and gives each caller its own outcome", async () => {
  const { writes, statements } = store();
  const got = await Promise.all(['a', 'b', 'c'].map((r) => writes.write(r)));
  expect(got).toEqual(['ok a', 'ok b', 'ok c']);
  expect(statements).toEqual([['a', 'b', 'c']]);
});

it('a row alone goes through the single-row statement; a later turn gets a later statement', async () => {
  const { writes, statements } = store();
  expect(await writes.write('a')).toBe('ok a');
  expect(await writes.write('b')).toBe('ok b');
  expect(statements).toEqual([['a'], ['b']]);
});

it('sends at once when maxBatch rows wait, and the rest in the next statement', async () => {
  const statements: string[][] = [];
  const writes = new BatchedWrite<string, string>({
    name: 'test',
    key: (r) => r,
    one: async (r) => (statements.push([r]), r),
    many: async (rows) => (statements.push(rows), rows),
    maxBatch: 2,
  });
  expect(await Promise.all(['a', 'b', 'c'].map((r) => writes.write(r)))).toEqual(['a', 'b', 'c']);
  expect(statements).toEqual([['a', 'b'], ['c']]);
});

it('a batch PostgreSQL refused wrote nothing: each row is written alone, each caller its own outcome', async () => {
  const { writes, written, statements } = store({ bad: ['b'] });
  const outcomes = await Promise.allSettled(['a', 'b', 'c'].map((r) => writes.write(r)));
  expect(outcomes).toEqual([
    { status: 'fulfilled', value: 'ok a' },
    { status: 'rejected', reason: expect.objectContaining({ code: '23514' }) },
    { status: 'fulfilled', value: 'ok c' },
  ]);
  expect(statements).toEqual([['a', 'b', 'c'], ['a'], ['b'], ['c']]);
  expect(written.sort()).toEqual(['a', 'c']);
});

it('a batch whose outcome is not known (connection lost) fails every caller and is never re-sent', async () => {
  for (const lost of [sqlError('08006'), sqlError('57P01'), new Error('Connection terminated')]) {
    const { writes, statements } = store({ batchFail: lost });
    const outcomes = await Promise.allSettled(['a', 'b'].map((r) => writes.write(r)));
    expect(outcomes).toEqual([
      { status: 'rejected', reason: lost },
      { status: 'rejected', reason: lost },
    ]);
    expect(statements).toEqual([['a', 'b']]);
  }
});

it('a writer whose rows are idempotent may write each alone after any failure (aloneAfter)', async () => {
  const statements: string[][] = [];
  const lost = new Error('Connection terminated');
  const writes = new BatchedWrite<string, string>({
    name: 'test',
    key: (r) => r,
    one: async (r) => (statements.push([r]), `ok ${r}`),
    many: async (rows) => {
      statements.push(rows);
      throw lost;
    },
    aloneAfter: (err) => err === lost,
  });
  expect(await Promise.all(['a', 'b'].map((r) => writes.write(r)))).toEqual(['ok a', 'ok b']);
  expect(statements).toEqual([['a', 'b'], ['a'], ['b']]);
});

it('two rows with one key never share a statement: the second goes alone after the first answered', async () => {
  const { writes, statements } = store();
  const got = await Promise.all(['a:1', 'b', 'a:2', 'a:3'].map((r) => writes.write(r)));
  expect(got).toEqual(['ok a:1', 'ok b', 'ok a:2', 'ok a:3']);
  expect(statements[0]).toEqual(['a:1', 'b']);
  expect(statements.slice(1).sort()).toEqual([['a:2'], ['a:3']]);
});

it('a batch statement answering the wrong number of rows fails its callers', async () => {
  const writes = new BatchedWrite<string, string>({
    name: 'test',
    key: (r) => r,
    one: async (r) => r,
    many: async () => ['only one'],
  });
  const outcomes = await Promise.allSettled(['a', 'b'].map((r) => writes.write(r)));
  expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
});

it('a writer that throws at once (not a rejected promise) fails its callers, not the process', async () => {
  const writes = new BatchedWrite<string, string>({
    name: 'test',
    key: (r) => r,
    one: () => {
      throw new Error('bad parameters');
    },
    many: () => {
      throw new Error('bad batch');
    },
  });
  await expect(writes.write('a')).rejects.toThrow('bad parameters');
  const both = await Promise.allSettled([writes.write('a'), writes.write('b')]);
  expect(both.map((o) => o.status)).toEqual(['rejected', 'rejected']);
});

it('tells a statement PostgreSQL refused from one whose fate is unknown', () => {
  for (const code of ['23505', '23514', '22001', '40P01', '40001', '42804', '54000'])
    expect(refusedWhole(sqlError(code))).toBe(true);
  for (const err of [
    sqlError('08006'),
    sqlError('57P01'),
    sqlError('53300'),
    sqlError('58030'),
    sqlError('XX000'),
    Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }),
    Object.assign(new Error('23505 as text'), { code: '23505' }),
    new Error('timeout'),
    null,
    'text',
  ])
    expect(refusedWhole(err)).toBe(false);
});

it('refuses a batch size that is not a positive integer', () => {
  for (const n of [0, -1, 1.5, Number.NaN]) {
    expect(
      () =>
        new BatchedWrite({
          name: 'test',
          key: String,
          one: async () => 1,
          many: async () => [],
          maxBatch: n,
        }),
    ).toThrow('maxBatch');
  }
});
