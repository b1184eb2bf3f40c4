import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findChromium, NO_CHROMIUM } from '../support/browser';

/** Which Chromium the browser tests take, and what they say when there is none. */
describe('Chromium for the browser tests', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fake-chromium-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes CHROMIUM_PATH first, and refuses one that is not an executable, naming what to install', async () => {
    const fake = join(dir, 'my-chrome');
    writeFileSync(fake, '#!/bin/sh\n');
    chmodSync(fake, 0o755);
    await expect(findChromium({ CHROMIUM_PATH: fake, PATH: '' })).resolves.toMatchObject({
      executablePath: fake,
      source: 'CHROMIUM_PATH',
    });
    const missing = join(dir, 'nothing-here');
    const err = await findChromium({ CHROMIUM_PATH: missing, PATH: '' }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain(NO_CHROMIUM);
    expect((err as Error).message.split('\n')).toHaveLength(1);
  });

  it('takes a chromium on PATH before the packaged one', async () => {
    const bin = mkdtempSync(join(dir, 'bin-'));
    writeFileSync(join(bin, 'chromium-browser'), '#!/bin/sh\n');
    chmodSync(join(bin, 'chromium-browser'), 0o755);
    await expect(findChromium({ PATH: bin })).resolves.toMatchObject({
      executablePath: join(bin, 'chromium-browser'),
      source: 'system',
    });
  });

  it('with no system browser on Linux x64, unpacks the one inside @sparticuz/chromium', async () => {
    if (process.platform !== 'linux' || process.arch !== 'x64') {
      await expect(findChromium({ PATH: '' })).rejects.toThrow(NO_CHROMIUM);
      return;
    }
    const found = await findChromium({ PATH: '' });
    expect(found.source).toBe('@sparticuz/chromium');
    expect(found.executablePath).toMatch(/sparticuz-chromium-[\d.]+-\d+\/chromium$/);
  });
});
