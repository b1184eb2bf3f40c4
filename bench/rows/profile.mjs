// PROFILE: one path under load with --cpu-prof, its top costs printed.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createDatabase, stopProcess } from '../support.mjs';
import { stagesOf, summariseProfile } from '../profile.mjs';
import { fmt } from '../lib/format.mjs';
import { createLoad, warmAndLoad } from '../lib/load.mjs';
import { dbServer, sandboxControl, startBaseline, startService } from '../lib/processes.mjs';
import { DURATION_S, PROFILE_PATH } from '../lib/settings.mjs';
import { details, row } from '../lib/state.mjs';
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
  let measured = null;
  const service = await startService(db, slow ? { DB_POOL_SIZE: '10' } : {}, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  if (read) measured = await warmAndLoad(service.url, { ...readLoad(), pid: service.pid });
  else if (slow) {
    await sandboxControl('POST', '/settings', { latencyMs: 200 });
    try {
      measured = await createLoad(service.url, 'prof', 256, DURATION_S, service.pid);
      answered = measured.ok;
    } finally {
      await sandboxControl('POST', '/settings', { latencyMs: 0 });
    }
  }
  else if (PROFILE_PATH === 'notify') {
    await seedP3Invoices(db);
    measured = await notificationLoad(service.url, notificationBodies(), service.pid);
  } else {
    measured = await createLoad(service.url, 'prof', 64, DURATION_S, service.pid);
    answered = measured.ok;
  }
  const stopping = Date.now();
  await stopProcess(service, 120_000);
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no CPU profile written (stopped in ${Date.now() - stopping} ms, exit ${service.child.exitCode} signal ${service.child.signalCode})`);
  console.log(`stopped in ${Date.now() - stopping} ms`);
  const summary = summariseProfile(JSON.parse(readFileSync(join(dir, file), 'utf8')), FIRST_FRAME[PROFILE_PATH]);
  details.profile = { file: join(dir, file), ...summary };
  console.log(`\nCPU profile of the ${PROFILE_PATH} path (self time${answered === null ? '' : `; ${fmt(answered)} creates answered 2xx in the measured load`}):`);
  for (const f of summary.functions.slice(0, 15)) console.log(`  ${fmt(f.percent, 1).padStart(5)} %  ${f.name}`);
  console.log('By package / area:');
  for (const f of summary.areas.slice(0, 12)) console.log(`  ${fmt(f.percent, 1).padStart(5)} %  ${f.name}`);
  // A row per stage of a request (bench/profile.mjs STAGES): its share of the busy time once the
  // load began, and what that share is of the CPU per 2xx the process accounted for in the
  // measured load (--cpu-prof adds its own cost to that figure; the shares are the point).
  const { stages } = stagesOf(JSON.parse(readFileSync(join(dir, file), 'utf8')), FIRST_FRAME[PROFILE_PATH]);
  const cpuUs = measured?.cpuMsPerOk ?? measured?.r?.cpuMsPerOk ?? null;
  details.profile.stages = stages;
  // The create path: the bare script profiled under the same load, so each stage of the service
  // stands beside the same stage of the bare script (its node:http edge, pg statements and
  // gateway call; its own code counts as its handler).
  const bare = PROFILE_PATH === 'create' ? await bareCreateProfile() : null;
  if (bare) details.profile.bare = bare;
  const usOf = (st, cpu) => (cpu === null ? null : (st.percent / 100) * cpu * 1000);
  for (const st of stages) {
    const b = bare?.stages.find((x) => x.name === st.name);
    const bareUs = b ? usOf(b, bare.cpuMsPerOk) : null;
    row(
      `PROFILE ${PROFILE_PATH}: ${st.name} (information)`,
      `${fmt(st.percent, 1)} % of busy time${cpuUs === null ? '' : `, ${fmt(usOf(st, cpuUs))} µs of ${fmt(cpuUs * 1000)} µs CPU per 2xx`}` +
        (bare && bareUs !== null ? `; bare script ${fmt(bareUs)} µs of ${fmt(bare.cpuMsPerOk * 1000)} µs` : ''),
      'information',
      '',
      null,
    );
  }
}

/** The bare script under P1's create load with --cpu-prof: its stages and CPU per 2xx. */
async function bareCreateProfile() {
  const dir = join('.data', 'bench-profiles-bare');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const db = await createDatabase(dbServer.serverUrl, 'bench_profile_bare');
  const bare = await startBaseline(db, {}, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  const measured = await createLoad(bare.url, 'profb', 64, DURATION_S, bare.pid);
  await stopProcess(bare, 60_000);
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no CPU profile of the bare script written');
  const { stages } = stagesOf(JSON.parse(readFileSync(join(dir, file), 'utf8')), 'bench/baseline.mjs');
  return { file: join(dir, file), stages, cpuMsPerOk: measured.cpuMsPerOk };
}

/** The frame that marks the start of each path's load in its profile (start-up is left out). */
const FIRST_FRAME = {
  create: 'invoices/operations/create-invoice.js',
  p2: 'invoices/operations/create-invoice.js',
  read: 'invoices/invoices.controller.js',
  notify: 'notifications/',
};
