import { DataSource, type EntityManager } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { recordAnswer, runGatewayOperation, type CallAnswer } from '../../src/jobs/gateway-operation';
import { createTestDatabase } from '../support/database';

/**
 * The one gateway-operation runner on a real PostgreSQL: the call runs with nothing
 * held, its failure is an answer, the record phase runs under the row lock in one transaction, a
 * refusal returned by the rule commits before it is thrown, and the unlocked usual-case write
 * replaces the locked one only when it wrote.
 */
let db: { url: string; drop(): Promise<void> };
let ds: DataSource;

interface Row {
  id: number;
  status: string;
}

class Refused extends Error {}

const lockRow =
  (id: number) =>
  async (m: EntityManager): Promise<Row | null> => {
    const rows = (await m.query(`SELECT id, status FROM op_rows WHERE id = $1 FOR UPDATE`, [
      id,
    ])) as Row[];
    return rows[0] ?? null;
  };

async function statusOf(id: number): Promise<string | undefined> {
  const rows = (await ds.query(`SELECT status FROM op_rows WHERE id = $1`, [id])) as Row[];
  return rows[0]?.status;
}

let nextId = 1;
async function claimedRow(): Promise<number> {
  const id = nextId++;
  await ds.query(`INSERT INTO op_rows (id, status) VALUES ($1, 'claimed')`, [id]);
  return id;
}

beforeAll(async () => {
  db = await createTestDatabase();
  // One connection: a call or a lock that ran while the runner held one would wait for ever.
  ds = new DataSource(dataSourceOptions(db.url, 1));
  await ds.initialize();
  await ds.query(`CREATE TABLE op_rows (id integer PRIMARY KEY, status text NOT NULL)`);
}, 60000);

afterAll(async () => {
  await ds?.destroy();
  await db?.drop();
});

describe('runGatewayOperation', () => {
  it('calls with no connection held, then records the answer under the row lock', async () => {
    const id = await claimedRow();
    const phases: string[] = [];
    const result = await runGatewayOperation(ds, {
      name: 'test.op',
      by: undefined,
      call: async () => {
        // The pool has one connection: this query runs only if the runner holds none.
        const [{ n }] = (await ds.query(`SELECT 1 AS n`)) as Array<{ n: number }>;
        phases.push('call');
        return n;
      },
      lock: async (m) => {
        phases.push('lock');
        return lockRow(id)(m);
      },
      missing: () => new Error('gone'),
      record: async (m, row, answer) => {
        phases.push('record');
        expect(row).toEqual({ id, status: 'claimed' });
        expect(answer).toEqual({ ok: true, value: 1 });
        await m.query(`UPDATE op_rows SET status = 'answered' WHERE id = $1`, [id]);
        return 'done';
      },
    });
    expect(result).toBe('done');
    expect(phases).toEqual(['call', 'lock', 'record']);
    expect(await statusOf(id)).toBe('answered');
  });

  it('gives a failed call to the record phase as an answer, never as an exception', async () => {
    const id = await claimedRow();
    const timeout = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    let seen: CallAnswer<number> | undefined;
    await runGatewayOperation(ds, {
      name: 'test.op',
      by: undefined,
      call: () => Promise.reject(timeout),
      lock: lockRow(id),
      missing: () => new Error('gone'),
      record: async (m, _row, answer) => {
        seen = answer;
        await m.query(`UPDATE op_rows SET status = 'unknown' WHERE id = $1`, [id]);
      },
    });
    expect(seen).toEqual({ ok: false, err: timeout });
    expect(await statusOf(id)).toBe('unknown');
  });

  it('commits what a returned refusal wrote, then throws it', async () => {
    const id = await claimedRow();
    const refusal = new Refused('the gateway refused');
    await expect(
      runGatewayOperation(ds, {
        name: 'test.op',
        by: undefined,
        call: async () => 0,
        lock: lockRow(id),
        missing: () => new Error('gone'),
        record: async (m) => {
          await m.query(`UPDATE op_rows SET status = 'rejected' WHERE id = $1`, [id]);
          return refusal;
        },
      }),
    ).rejects.toBe(refusal);
    expect(await statusOf(id)).toBe('rejected');
  });

  it('writes nothing when the record phase throws (one transaction)', async () => {
    const id = await claimedRow();
    await expect(
      runGatewayOperation(ds, {
        name: 'test.op',
        by: undefined,
        call: async () => 0,
        lock: lockRow(id),
        missing: () => new Error('gone'),
        record: async (m) => {
          await m.query(`UPDATE op_rows SET status = 'half' WHERE id = $1`, [id]);
          throw new Error('rule failed');
        },
      }),
    ).rejects.toThrow('rule failed');
    expect(await statusOf(id)).toBe('claimed');
  });

  it('takes the unlocked write when it wrote, the locked path when it did not', async () => {
    const fast = await claimedRow();
    const slow = await claimedRow();
    const locked: number[] = [];
    const op = (id: number, unchanged: boolean) => ({
      name: 'test.op',
      by: undefined,
      call: async () => 'answer',
      recordUnchanged: async () => {
        if (!unchanged) return null;
        await ds.query(`UPDATE op_rows SET status = 'fast' WHERE id = $1`, [id]);
        return 'fast';
      },
      lock: async (m: EntityManager) => {
        locked.push(id);
        return lockRow(id)(m);
      },
      missing: () => new Error('gone'),
      record: async (m: EntityManager) => {
        await m.query(`UPDATE op_rows SET status = 'locked' WHERE id = $1`, [id]);
        return 'locked';
      },
    });
    expect(await runGatewayOperation(ds, op(fast, true))).toBe('fast');
    expect(await runGatewayOperation(ds, op(slow, false))).toBe('locked');
    expect(locked).toEqual([slow]);
    expect([await statusOf(fast), await statusOf(slow)]).toEqual(['fast', 'locked']);
  });

  it('answers `missing` when the row is gone: a value is returned, an Error thrown', async () => {
    const gone = nextId++;
    const base = {
      name: 'test.op',
      by: undefined,
      lock: lockRow(gone),
      record: async () => 'recorded',
    };
    expect(
      await recordAnswer(ds, { ...base, missing: () => 'nothing to do' }, { ok: true, value: 1 }),
    ).toBe('nothing to do');
    await expect(
      recordAnswer(
        ds,
        { ...base, missing: () => new Refused('no such row') },
        { ok: true, value: 1 },
      ),
    ).rejects.toBeInstanceOf(Refused);
  });
});
