import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { freePort } from '../support/ports';

/**
 * The embedded PostgreSQL of `npm start` can die under the service (killed from outside, out of
 * memory). Stopping it afterwards, as the service's shutdown does, must return at once: the
 * package waits for an `exit` event that has already happened, and a SIGTERM to the service then
 * never finished.
 */
const dir = mkdtempSync(join(tmpdir(), 'embedded-pg-stop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('stop() returns when the server was killed from outside', async () => {
  const db = await startEmbeddedPostgres({ dir: join(dir, 'pg'), port: await freePort() });
  const postmaster = Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(postmaster, 'SIGKILL');
  for (let i = 0; i < 100 && alive(postmaster); i++) await new Promise((r) => setTimeout(r, 50));
  expect(alive(postmaster)).toBe(false);
  // Let the package see its child end.
  await new Promise((r) => setTimeout(r, 500));
  const outcome = await Promise.race([
    db.stop().then(() => 'stopped'),
    new Promise((r) => setTimeout(() => r('still waiting after 5 s'), 5000)),
  ]);
  expect(outcome).toBe('stopped');
}, 120_000);
