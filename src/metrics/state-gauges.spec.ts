import { registry } from './metrics';
import { applyPoolStats, applyStateRows, atMostEvery } from './state-gauges';

async function sample(
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  const got = await metric?.get();
  return got?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    ?.value;
}

describe('applyStateRows', () => {
  it('sets open and oldest per object, 0 for an object the reading does not name', async () => {
    applyStateRows([
      { kind: 'invoice', open: 3, age: 1800.5 },
      { kind: 'payout', open: 1, age: 60 },
      { kind: 'payout_poll', open: 0, age: 42 },
    ]);
    expect(await sample('payments_attention_open', { object: 'invoice' })).toBe(3);
    expect(await sample('payments_attention_oldest_seconds', { object: 'invoice' })).toBe(1800.5);
    expect(await sample('payments_attention_open', { object: 'refund' })).toBe(0);
    expect(await sample('payments_attention_oldest_seconds', { object: 'refund' })).toBe(0);
    expect(await sample('payments_attention_open', { object: 'payout' })).toBe(1);
    expect(await sample('payout_poll_overdue_seconds')).toBe(42);
  });

  it('a later reading without a flag brings the values back to 0 (never a stale age)', async () => {
    applyStateRows([{ kind: 'invoice', open: 2, age: 99 }]);
    applyStateRows([]);
    expect(await sample('payments_attention_open', { object: 'invoice' })).toBe(0);
    expect(await sample('payments_attention_oldest_seconds', { object: 'invoice' })).toBe(0);
    expect(await sample('payout_poll_overdue_seconds')).toBe(0);
  });

  it('ignores kinds it does not know (no new label values from the query)', async () => {
    applyStateRows([{ kind: 'invoices; DROP', open: 5, age: 5 }]);
    const values = (await registry.getSingleMetric('payments_attention_open')?.get())?.values ?? [];
    expect(values.map((v) => v.labels.object).sort()).toEqual(['invoice', 'payout', 'refund']);
  });
});

describe('applyPoolStats', () => {
  it('reports open, idle, waiting and the configured maximum', async () => {
    applyPoolStats({ totalCount: 5, idleCount: 2, waitingCount: 3 }, 20);
    expect(await sample('db_pool_connections', { state: 'open' })).toBe(5);
    expect(await sample('db_pool_connections', { state: 'idle' })).toBe(2);
    expect(await sample('db_pool_waiting_requests')).toBe(3);
    expect(await sample('db_pool_max_connections')).toBe(20);
  });

  it('without a pool (driver not connected) sets only the maximum', async () => {
    applyPoolStats({ totalCount: 1, idleCount: 1, waitingCount: 0 }, 20);
    applyPoolStats(undefined, 9);
    expect(await sample('db_pool_max_connections')).toBe(9);
    expect(await sample('db_pool_connections', { state: 'open' })).toBe(1);
  });
});

describe('atMostEvery', () => {
  it('runs once per window; calls inside it share the run, the next window runs again', async () => {
    let now = 1000;
    let runs = 0;
    let release: () => void = () => undefined;
    const refresh = atMostEvery(
      5000,
      () =>
        new Promise<void>((resolve) => {
          runs += 1;
          release = resolve;
        }),
      () => now,
    );
    const first = refresh();
    let shared = false;
    const concurrent = refresh().then(() => {
      shared = true;
    });
    await Promise.resolve();
    expect(shared).toBe(false); // waits for the reading in progress, not for nothing
    release();
    await Promise.all([first, concurrent]);
    expect(shared).toBe(true);
    expect(runs).toBe(1);
    now += 4999;
    await refresh();
    expect(runs).toBe(1);
    now += 1;
    const later = refresh();
    release();
    await later;
    expect(runs).toBe(2);
  });

  it('a failed run still counts: a sick database is not asked on every scrape', async () => {
    let now = 0;
    let runs = 0;
    const refresh = atMostEvery(
      5000,
      () => {
        runs += 1;
        return Promise.reject(new Error('down'));
      },
      () => now,
    );
    await expect(refresh()).rejects.toThrow('down');
    await refresh();
    expect(runs).toBe(1);
    now = 5000;
    await expect(refresh()).rejects.toThrow('down');
    expect(runs).toBe(2);
  });
});
