import { Writable } from 'node:stream';
import { createLogger, scrubText } from './logger';

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
