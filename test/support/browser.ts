import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserContext, chromium } from 'playwright-core';

/**
 * Headless Chromium for browser tests: Debian's chromium (`apt-get install chromium`), or the
 * binary named by CHROMIUM_PATH, driven by playwright-core with a fresh profile per launch.
 */

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(path)) {
    throw new Error(
      `Chromium not found at ${path}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`,
    );
  }
  return path;
}

export interface LaunchedBrowser {
  context: BrowserContext;
  /** Closes the browser and deletes its profile. */
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<LaunchedBrowser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'chromium-test-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath(),
    headless: true,
    args: ARGS,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
