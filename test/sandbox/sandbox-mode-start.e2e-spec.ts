import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killEmbeddedPostgres, spawnService, startEnv, startPorts, waitForStatus } from '../support/process';
import { PAYOUT } from '../support/payways';

/**
 * The compiled service as `npm start` runs it with no settings (sandbox mode, embedded
 * PostgreSQL): the start-up block says where shop webhooks go; a payout is final within seconds
 * (2 s polls unless PAYOUT_POLL_INTERVAL_S is set); a clean stop ends with a "stopped" line.
 */
const SHOP_KEY = 'sandbox-start-shop-key-0123';

describe('sandbox mode, started as npm start does', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sandbox-start-'));
  afterAll(() => {
    killEmbeddedPostgres(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('names the webhook target (feed only), finishes a payout within seconds, and logs "stopped" last on a clean stop', async () => {
    const ports = await startPorts();
    const svc = spawnService({ ...startEnv(ports, dataDir), API_KEYS: SHOP_KEY, ADMIN_API_KEYS: 'sandbox-start-admin-key-0123' });
    try {
      const ready = await waitForStatus(`http://127.0.0.1:${ports.port}/health/ready`, 200, 90_000, svc);
      expect({ ready, output: ready ? '' : svc.output().slice(-3000) }).toEqual({ ready: true, output: '' });
      const base = `http://127.0.0.1:${ports.port}`;
      const shopPaymentId = `sb-start-${Date.now()}`;
      const created = await fetch(`${base}/api/v1/payouts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SHOP_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ shopPaymentId, amount: '100.00', amountType: 'ps_amount', shopCurrency: 643, payway: PAYOUT.card, account: '4111111111111111' }),
      });
      expect(created.status).toBe(202);
      // Polled every 2 s: final well within 20 s (it was 30 s before the first poll).
      const end = Date.now() + 20_000;
      let status = '';
      while (Date.now() < end) {
        const res = await fetch(`${base}/api/v1/payouts/${shopPaymentId}`, { headers: { authorization: `Bearer ${SHOP_KEY}` } });
        status = ((await res.json()) as { status: string }).status;
        if (status === 'succeeded') break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(status).toBe('succeeded');
      await waitForOutput(() => svc.output(), /webhooks: feed only/, 10_000);

      svc.child.kill('SIGTERM');
      expect(await svc.exited).toBe(0);
      const lines = svc.output().trim().split('\n').filter((l) => l.startsWith('{'));
      expect(JSON.parse(lines[lines.length - 1])).toMatchObject({ msg: 'stopped', level: 'info' });
    } finally {
      if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
    }
  }, 150_000);
});

async function waitForOutput(output: () => string, pattern: RegExp, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end && !pattern.test(output())) await new Promise((r) => setTimeout(r, 100));
  expect(output()).toMatch(pattern);
}
