import { Writable } from 'node:stream';
import { createLogger } from './logger';
import { isSensitiveField, luhnValid, redact, scrubText } from './redact';

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { stream, text: () => chunks.join('') };
}

function deep(levels: number, leaf: Record<string, unknown>): Record<string, unknown> {
  let v: Record<string, unknown> = leaf;
  for (let i = 0; i < levels; i += 1) v = { [`level${i}`]: v };
  return v;
}

const PAN = '4111111111111111';
const withCause = (): Error => {
  const root = new Error(`declined card ${PAN}`);
  const mid = new Error('gateway call failed', { cause: root });
  return Object.assign(new Error('payout failed', { cause: mid }), { cvv: '737' });
};

describe('redaction by shape', () => {
  it.each([
    ['plain PAN', `card ${PAN} used`, '411111******1111'],
    ['PAN with spaces', 'card 4111 1111 1111 1111 used', '411111******1111'],
    ['PAN with dashes', 'card 5555-5555-5555-4444 used', '555555******4444'],
    ['19-digit PAN', 'pan 6011000990139424', '601100******9424'],
    ['13-digit PAN', 'pan 4222222222222', '422222******2222'],
    [
      'pay link token (an address is shown without its query)',
      'go to https://shop.example/pay/o-1?t=abcDEF123_-x&x=1',
      'go to https://shop.example/pay/o-1',
    ],
    [
      "an address's user information and query",
      'Request cannot be constructed from a URL that includes credentials: http://user:pass@hooks.example:8080/hook?token=abcDEF123.',
      'credentials: http://hooks.example:8080/hook.',
    ],
    ['bearer key', 'Authorization: Bearer shop-key-0123456789', 'Bearer [redacted]'],
  ])('masks %s in text', (_name, input, expected) => {
    const out = scrubText(input);
    expect(out).toContain(expected);
    expect(out).not.toMatch(
      /4111 1111 1111 1111|5555-5555-5555-4444|abcDEF123|shop-key-0123456789|pass/,
    );
  });

  it.each([
    ['an order id that fails Luhn', 'order 4111111111111112'],
    ['a short number', 'order 12345 amount 100.10'],
    ['a 20-digit run', 'id 41111111111111110000'],
    ['a timestamp', '2026-11-22T05:18:08.000Z'],
  ])('leaves %s alone', (_name, input) => {
    expect(scrubText(input)).toBe(input);
  });

  it.each([
    ['cvv'],
    ['CVV'],
    ['sign'],
    ['secret'],
    ['secretKey'],
    ['secret_key'],
    ['token'],
    ['payment_token'],
    ['t'],
    ['payUrl'],
    ['metricsToken'],
    ['authorization'],
    ['account'],
    ['ps_data'],
  ])('treats the field %s as sensitive', (name) => {
    expect(isSensitiveField(name)).toBe(true);
  });

  it.each([['status'], ['amount'], ['shopOrderId'], ['path'], ['type']])(
    'keeps the field %s',
    (name) => {
      expect(isSensitiveField(name)).toBe(false);
    },
  );

  it('checks Luhn', () => {
    expect(luhnValid(PAN)).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
  });

  it.each([
    ['sensitive field 2 levels down', deep(2, { cvv: '737' }), '737'],
    ['sensitive field 30 levels down', deep(30, { secret: 'deep-secret' }), 'deep-secret'],
    ['PAN as a structured value, deep', deep(12, { note: PAN }), PAN],
    [
      'PAN with spaces in an array',
      { list: [{ x: ['4111 1111 1111 1111'] }] },
      '4111 1111 1111 1111',
    ],
    ['t in a query object', deep(6, { query: { t: 'pay-link-secret' } }), 'pay-link-secret'],
    ['payUrl', { invoice: { payUrl: 'https://x/pay/1?t=pay-link-secret' } }, 'pay-link-secret'],
    ['error with a cause chain', { err: withCause() }, PAN],
    ['error field', { err: withCause() }, '737'],
  ])('structured: %s', (_name, value, secret) => {
    expect(JSON.stringify(redact(value))).not.toContain(secret);
  });

  it('survives cycles', () => {
    const a: Record<string, unknown> = { cvv: '737' };
    a.self = a;
    expect(JSON.stringify(redact(a))).not.toContain('737');
  });

  it.each([
    [
      'structured object',
      (l: ReturnType<typeof createLogger>) => l.info(deep(8, { cvv: '737', n: PAN }), 'x'),
    ],
    ['message', (l: ReturnType<typeof createLogger>) => l.info(`charged ${PAN} with cvv 737`)],
    [
      'interpolated value',
      (l: ReturnType<typeof createLogger>) => l.info('charged %s', '4111-1111-1111-1111'),
    ],
    ['error first', (l: ReturnType<typeof createLogger>) => l.error(withCause())],
    [
      'error as a field',
      (l: ReturnType<typeof createLogger>) => l.error({ err: withCause() }, 'failed'),
    ],
    [
      'child bindings',
      (l: ReturnType<typeof createLogger>) =>
        l.child({ component: 'x' }).warn({ body: { sign: 'f00dfeed' } }, 'y'),
    ],
  ])('the logger writes no secret from a %s', (_name, write) => {
    const out = capture();
    write(createLogger(out.stream, 'info'));
    const text = out.text();
    expect(text.length).toBeGreaterThan(0);
    for (const secret of [PAN, '4111-1111-1111-1111', '"737"', 'f00dfeed'])
      expect(text).not.toContain(secret);
  });

  it('keeps what an operator needs', () => {
    const out = capture();
    createLogger(out.stream, 'info').error({ err: withCause(), path: 'withdraw/create' }, 'failed');
    const line = JSON.parse(out.text()) as {
      err: { message: string; cause: { cause: { message: string } } };
      path: string;
    };
    expect(line.path).toBe('withdraw/create');
    expect(line.err.message).toContain('payout failed');
    expect(line.err.message).toContain('declined card 411111******1111');
  });
});
