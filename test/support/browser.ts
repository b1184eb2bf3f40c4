import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BrowserContext, chromium } from 'playwright-core';

/**
 * Headless Chromium for browser tests, driven by playwright-core with a fresh profile per launch.
 * A system browser wins (CHROMIUM_PATH, then chromium / chromium-browser / google-chrome on PATH,
 * then the usual macOS install); otherwise the headless build shipped inside the npm package
 * `@sparticuz/chromium`, so `npm install && npm test` needs no system package on Linux x64.
 */

const SYSTEM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const ON_PATH = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
const WELL_KNOWN = [
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];

export const NO_CHROMIUM =
  'No Chromium for the browser tests: install Chromium or Google Chrome (on PATH), or set CHROMIUM_PATH to its binary';

export interface ChromiumBinary {
  executablePath: string;
  args: string[];
  source: 'CHROMIUM_PATH' | 'system' | '@sparticuz/chromium';
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first system Chromium found, or undefined. */
export function systemChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = (env.PATH ?? '').split(delimiter).filter((d) => d !== '');
  for (const name of ON_PATH) {
    for (const dir of dirs) {
      if (executable(join(dir, name))) return join(dir, name);
    }
  }
  return WELL_KNOWN.find(executable);
}

/** Where the packaged Chromium is unpacked, one directory per package version. */
function sparticuzDir(version: string): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return join(tmpdir(), `sparticuz-chromium-${version}-${uid}`);
}

/**
 * Unpacks @sparticuz/chromium once per version. The package unpacks into `os.tmpdir()` and
 * trusts any file already there, so a half-written binary (a run killed mid-way) would be used as
 * is. It runs instead in a child process whose TMPDIR is a private staging directory (Jest's
 * `process.env` is a copy that `os.tmpdir()` never reads), renamed into place when complete.
 */
async function packagedChromium(): Promise<ChromiumBinary> {
  // Resolved from the project, as Jest's ESM mode has no `require`.
  const require = createRequire(join(process.cwd(), 'package.json'));
  let pkgDir: string;
  try {
    // The package exports no package.json: its entry sits at build/cjs/index.cjs.
    pkgDir = join(dirname(require.resolve('@sparticuz/chromium')), '..', '..');
  } catch {
    throw new Error(NO_CHROMIUM);
  }
  const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  const finalDir = sparticuzDir(version);
  if (!existsSync(join(finalDir, 'chromium'))) await unpackOnce(finalDir, pkgDir);
  const { default: Chromium } = await import('@sparticuz/chromium');
  return {
    executablePath: join(finalDir, 'chromium'),
    args: Chromium.args,
    source: '@sparticuz/chromium',
  };
}

/**
 * One unpacking per machine even when several Jest workers ask at once (each would spend seconds
 * of CPU on 200 MB of brotli): a lock directory elects one, the others wait for its result. A
 * lock left by a killed run is taken over once it is old.
 */
async function unpackOnce(finalDir: string, pkgDir: string): Promise<void> {
  const lock = `${finalDir}.lock`;
  const giveUp = Date.now() + 5 * 60_000;
  while (!existsSync(join(finalDir, 'chromium'))) {
    if (Date.now() > giveUp)
      throw new Error(
        `${NO_CHROMIUM} (another run holds ${lock}; delete it if no test is running)`,
      );
    try {
      mkdirSync(lock);
    } catch {
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 3 * 60_000)
        rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    try {
      if (existsSync(join(finalDir, 'chromium'))) return;
      const staging = mkdtempSync(`${finalDir}.partial-`);
      try {
        await unpackInto(staging, pkgDir);
        renameSync(staging, finalDir);
      } catch (e) {
        rmSync(staging, { recursive: true, force: true });
        throw new Error(
          `${NO_CHROMIUM} (unpacking @sparticuz/chromium failed: ${(e as Error).message.split('\n')[0]})`,
          {
            cause: e,
          },
        );
      }
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

function unpackInto(dir: string, pkgDir: string): Promise<void> {
  const script = `import(${JSON.stringify(pathToFileURL(join(pkgDir, 'build', 'esm', 'index.js')).href)})
    .then((m) => m.default.executablePath(${JSON.stringify(join(pkgDir, 'bin'))}))`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', script],
      { env: { ...process.env, TMPDIR: dir } },
      (err, _out, stderr) => (err ? reject(new Error(stderr.trim() || err.message)) : resolve()),
    );
  });
}

/** The Chromium the browser tests use; throws one line naming what to install when there is none. */
export async function findChromium(env: NodeJS.ProcessEnv = process.env): Promise<ChromiumBinary> {
  if (env.CHROMIUM_PATH) {
    if (!executable(env.CHROMIUM_PATH)) {
      throw new Error(
        `CHROMIUM_PATH=${env.CHROMIUM_PATH} is not an executable file. ${NO_CHROMIUM}`,
      );
    }
    return { executablePath: env.CHROMIUM_PATH, args: SYSTEM_ARGS, source: 'CHROMIUM_PATH' };
  }
  const system = systemChromium(env);
  if (system) return { executablePath: system, args: SYSTEM_ARGS, source: 'system' };
  // The packaged build is a Linux x64 binary.
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(NO_CHROMIUM);
  return packagedChromium();
}

export interface LaunchedBrowser {
  context: BrowserContext;
  /** Closes the browser and deletes its profile. */
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<LaunchedBrowser> {
  const binary = await findChromium();
  const userDataDir = mkdtempSync(join(tmpdir(), 'chromium-test-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: binary.executablePath,
    headless: true,
    args: binary.args,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
