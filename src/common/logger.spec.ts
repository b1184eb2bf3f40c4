import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, NEST_START_CONTEXTS, scrubText, wantsPrettyLogs } from './logger';

function capture(): { stream: Writable; lines: () => string[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { stream, lines: () => chunks.join('').trim().split('\n') };
}

describe('logger redaction', () => {
  it('never writes card data, CVV, secrets, signatures or bearer keys', () => {
    const out = capture();
    const log = createLogger(out.stream, 'info');
    log.info(
      {
        card: { number: '4111111111111111', cvv: '123' },
        body: { sign: 'abcdef0123', secretKey: 'top-secret', payment_token: 'tok_1' },
        req: { headers: { authorization: 'Bearer shop-key-123456789' } },
        nested: { deeper: { cvv: '999', account: '5555555555554444' } },
        path: 'invoice/create',
      },
      'card 4111111111111111 was used',
    );
    const text = out.lines().join('\n');
    for (const secret of [
      '4111111111111111',
      '123"',
      'abcdef0123',
      'top-secret',
      'tok_1',
      'shop-key-123456789',
      '999',
      '5555555555554444',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('invoice/create');
    expect(text).toContain('411111******1111');
    expect(text).toContain('[redacted]');
  });

  it('masks card-number-like digit runs in free text only', () => {
    expect(scrubText('pan 5555555555554444 ok')).toBe('pan 555555******4444 ok');
    expect(scrubText('order 12345 amount 100.10')).toBe('order 12345 amount 100.10');
  });
});

describe('start-up lines', () => {
  it("Nest's route map and module loading are debug lines, not the default level's", () => {
    for (const c of ['RouterExplorer', 'RoutesResolver', 'InstanceLoader']) expect(NEST_START_CONTEXTS.has(c)).toBe(true);
  });
});

describe('log format', () => {
  it.each([
    [{}, true, true],
    [{}, false, false],
    [{ NODE_ENV: 'production' }, true, false],
    [{ NODE_ENV: 'test' }, true, false],
    [{ LOG_FILE: '/tmp/x.log' }, true, false],
  ])('pretty for %p with a TTY=%p: %p', (env, tty, pretty) => {
    expect(wantsPrettyLogs(env, tty)).toBe(pretty);
  });

  it('pretty lines come from the pino-pretty transport, still redacted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pretty-log-'));
    const file = join(dir, 'out.log');
    try {
      const log = createLogger(undefined, 'info', { pretty: { destination: file } });
      log.info({ path: 'invoice/create', secretKey: 'top-secret' }, 'gateway call');
      await new Promise<void>((resolve) => log.flush(() => resolve()));
      // The transport's worker writes on its own thread: wait for the line to land.
      const end = Date.now() + 10_000;
      while (Date.now() < end && !(existsSync(file) && readFileSync(file, 'utf8').includes('gateway call'))) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const text = readFileSync(file, 'utf8');
      expect(text).toMatch(/^\[\d{2}:\d{2}:\d{2}\] INFO: gateway call /m);
      expect(text).toContain('"path":"invoice/create"');
      expect(text).not.toContain('top-secret');
      expect(() => JSON.parse(text.trim())).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
