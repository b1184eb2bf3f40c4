#!/usr/bin/env node
// The history search's runner: `npm run test:histories -- --seed N --runs M`.
// Turns the options into HISTORY_* variables and runs the search through the ESM Jest setup
// (jest.histories.config.js), as the other test scripts run theirs.
//
//   --seed N          first seed (default: a random one, printed)
//   --seeds a,b,c     exactly these seeds (the CI budget's list)
//   --runs M          histories, seeds N, N+1, … (default 1)
//   --steps S         steps per history (default 30)
//   --no-accept       no operator Accept
//   --no-restate      the gateway never restates a final status
//   --no-corrections  both of the above
//   --no-faults       no gateway faults (nor Accept while the gateway is unreachable)
//   --no-restarts     the service is never killed
//   --no-disputes     no chargebacks (disputes recorded and resolved)
//   --verbose         print every history as played, passing or not
//   --shrink R        shorten a failing history with up to R replays (default 0: print it whole)
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const env = { ...process.env };
const flags = new Set();
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  const value = () => {
    const v = args[++i];
    if (v === undefined || !/^\d+(,\d+)*$/.test(v)) {
      console.error(`${a} needs a number (or, for --seeds, a comma list)`);
      process.exit(2);
    }
    return v;
  };
  if (a === '--seed') env.HISTORY_SEED = value();
  else if (a === '--seeds') env.HISTORY_SEEDS = value();
  else if (a === '--runs') env.HISTORY_RUNS = value();
  else if (a === '--steps') env.HISTORY_STEPS = value();
  else if (a === '--shrink') env.HISTORY_SHRINK = value();
  else if (a === '--verbose') env.HISTORY_VERBOSE = '1';
  else if (a === '--no-corrections') flags.add('accept').add('restate');
  else if (['--no-accept', '--no-restate', '--no-faults', '--no-restarts', '--no-disputes'].includes(a))
    flags.add(a.slice(5));
  else {
    console.error(`unknown option ${a} (see scripts/histories.mjs)`);
    process.exit(2);
  }
}
if (flags.size > 0) env.HISTORY_OFF = [...flags].join(',');
if (env.HISTORY_SEED === undefined && env.HISTORY_SEEDS === undefined)
  env.HISTORY_SEED = String(Math.floor(Math.random() * 2 ** 31));
const r = spawnSync(
  process.execPath,
  [
    '--experimental-vm-modules',
    '--disable-warning=ExperimentalWarning',
    'node_modules/jest/bin/jest.js',
    '-c',
    'jest.histories.config.js',
  ],
  { stdio: 'inherit', env },
);
process.exit(r.status ?? 1);
