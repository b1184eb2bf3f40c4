// PROFILE: one path under load with --cpu-prof, its top costs printed.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createDatabase, stopProcess } from '../support.mjs';
import { summariseProfile } from '../profile.mjs';
import { fmt } from '../lib/format.mjs';
import { createLoad, warmAndLoad } from '../lib/load.mjs';
import { dbServer, sandboxControl, startService } from '../lib/processes.mjs';
import { DURATION_S, PROFILE_PATH } from '../lib/settings.mjs';
import { details } from '../lib/state.mjs';
import { notificationBodies, notificationLoad, seedP3Invoices } from './notifications.mjs';
import { readLoad, seededReadDatabase } from './reads.mjs';

/** The create path under P1's load with --cpu-prof; the top costs by self time. */
export async function profile() {
  const dir = join('.data', 'bench-profiles');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const read = PROFILE_PATH === 'read';
  const db = read ? await seededReadDatabase('bench_profile') : await createDatabase(dbServer.serverUrl, 'bench_profile');
  const slow = PROFILE_PATH === 'p2';
  let answered = null;
  const service = await startService(db, slow ? { DB_POOL_SIZE: '10' } : {}, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  if (read) await warmAndLoad(service.url, readLoad());
  else if (slow) {
    await sandboxControl('POST', '/settings', { latencyMs: 200 });
    try {
      answered = (await createLoad(service.url, 'prof', 256, DURATION_S)).ok;
    } finally {
      await sandboxControl('POST', '/settings', { latencyMs: 0 });
    }
  }
  else if (PROFILE_PATH === 'notify') {
    await seedP3Invoices(db);
    await notificationLoad(service.url, notificationBodies());
  } else answered = (await createLoad(service.url, 'prof', 64, DURATION_S)).ok;
  await stopProcess(service);
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no CPU profile written');
  const summary = summariseProfile(JSON.parse(readFileSync(join(dir, file), 'utf8')));
  details.profile = { file: join(dir, file), ...summary };
  console.log(`\nCPU profile of the ${PROFILE_PATH} path (self time${answered === null ? '' : `; ${fmt(answered)} creates answered 2xx in the measured load`}):`);
  for (const f of summary.functions.slice(0, 15)) console.log(`  ${fmt(f.percent, 1).padStart(5)} %  ${f.name}`);
  console.log('By package / area:');
  for (const f of summary.areas.slice(0, 12)) console.log(`  ${fmt(f.percent, 1).padStart(5)} %  ${f.name}`);
}
