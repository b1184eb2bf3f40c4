import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import {
  createLogger,
  LineLogger,
  NEST_START_CONTEXTS,
  scrubText,
  wantsPrettyLogs,
} from './logger';

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
    for (const c of ['RouterExplorer', 'RoutesResolver', 'InstanceLoader'])
      expect(NEST_START_CONTEXTS.has(c)).toBe(true);
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
      while (
        Date.now() < end &&
        !(existsSync(file) && readFileSync(file, 'utf8').includes('gateway call'))
      ) {
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

describe('fixed-shape lines (LineLogger)', () => {
  // The line pino wrote for the same values before (the main logger's format without redaction).
  const pinoLine = (stream: Writable, level: string, component: string) =>
    pino(
      {
        level,
        base: { pid: process.pid },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      stream,
    ).child({ component });
  const sameTime = (line: string) => line.replace(/"time":"[^"]+"/, '"time":"T"');

  it('writes exactly the line pino writes: field order, undefined fields left out, escaping, numbers', () => {
    const values = [
      {
        method: 'POST',
        route: '/api/v1/invoices',
        status: 201,
        durationMs: 1.25,
        keyId: undefined,
        requestId: 'r-1',
        ip: '127.0.0.1',
      },
      {
        path: 'invoice/create',
        shopId: 2001,
        durationMs: 0,
        result: 'ok',
        errorCode: undefined,
        traceId: 'a"b\\c\u2028\u0001é',
      },
      { flag: true, n: -0.5, big: 12345678901234, nan: Number.NaN },
    ];
    for (const fields of values) {
      const ours = capture();
      const theirs = capture();
      new LineLogger('gateway', ours.stream as unknown as pino.DestinationStream, 'info').info(
        fields,
        'gateway "call"',
      );
      pinoLine(theirs.stream, 'info', 'gateway').info(fields, 'gateway "call"');
      expect(ours.lines().map(sameTime)).toEqual(theirs.lines().map(sameTime));
      expect(JSON.parse(ours.lines()[0]).time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it('writes every string value as pino does: plain, escaped, long, control and non-ASCII', () => {
    // The plain-text shortcut (printable ASCII but `"` and `\\`, up to 128 characters) against
    // JSON.stringify, through pino, on each edge of its range and on generated strings.
    const alphabet = [
      'a',
      'Z',
      '0',
      ' ',
      '!',
      '#',
      '[',
      ']',
      '~',
      '"',
      '\\',
      '\x7f',
      '\x1f',
      '\u00e9',
      '\ud800',
      '/',
    ];
    const texts = ['', 'x'.repeat(128), 'x'.repeat(129), 'a"b', 'a\\b', '\x7f', '\x1f', '\u2028'];
    let seed = 7;
    for (let i = 0; i < 300; i++) {
      let t = '';
      const n = (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 140;
      for (let k = 0; k < n; k++)
        t += alphabet[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % alphabet.length];
      texts.push(t);
    }
    const ours = capture();
    const theirs = capture();
    const line = new LineLogger('access', ours.stream as unknown as pino.DestinationStream, 'info');
    const pinos = pinoLine(theirs.stream, 'info', 'access');
    for (const value of texts) {
      line.info({ value, [value]: 1 }, 'request');
      pinos.info({ value, [value]: 1 }, 'request');
    }
    expect(ours.lines().map(sameTime)).toEqual(theirs.lines().map(sameTime));
    expect(ours.lines()).toHaveLength(texts.length);
  });

  it('keeps to the level: nothing below it', () => {
    const out = capture();
    const dest = out.stream as unknown as pino.DestinationStream;
    const info = new LineLogger('access', dest, 'info');
    expect(info.isLevelEnabled('info')).toBe(true);
    info.info({ status: 200 }, 'request');
    expect(out.lines()).toHaveLength(1);
    expect(JSON.parse(out.lines()[0])).toMatchObject({
      level: 'info',
      component: 'access',
      status: 200,
    });
    for (const level of ['warn', 'silent']) {
      const above = new LineLogger('access', dest, level);
      expect(above.isLevelEnabled('info')).toBe(false);
      above.info({ status: 201 }, 'request');
    }
    expect(out.lines()).toHaveLength(1);
  });
});
