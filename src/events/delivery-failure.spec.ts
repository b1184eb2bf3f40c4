import { createServer } from 'node:net';
import { shownAddress } from '../common/redact';
import { describeDeliveryFailure } from './delivery-failure';

/** A loopback port nobody listens on (taken, then closed). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function failureOf(url: string, timeoutMs = 2000): Promise<string> {
  try {
    await fetch(url, { method: 'POST', body: '{}', signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    return describeDeliveryFailure(e, timeoutMs);
  }
  throw new Error('the request did not fail');
}

describe('describeDeliveryFailure', () => {
  it('names a refused connection by its code, not "TypeError: fetch failed"', async () => {
    const said = await failureOf(`http://127.0.0.1:${await closedPort()}/hooks`);
    expect(said).toBe('ECONNREFUSED (connection refused)');
  });

  it('says time-out with the limit when the receiver never answers', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as { port: number }).port;
      expect(await failureOf(`http://127.0.0.1:${port}/`, 200)).toBe(
        'time-out: no answer within 200 ms',
      );
    } finally {
      silent.close();
    }
  });

  it('names a connection the receiver closes without an answer', async () => {
    const rude = createServer((s) => s.destroy());
    await new Promise<void>((r) => rude.listen(0, '127.0.0.1', r));
    try {
      const port = (rude.address() as { port: number }).port;
      expect(await failureOf(`http://127.0.0.1:${port}/`)).toMatch(
        /^(UND_ERR_SOCKET|ECONNRESET|EPIPE) \(/,
      );
    } finally {
      rude.close();
    }
  });

  it.each([
    [
      Object.assign(new TypeError('fetch failed'), { cause: { code: 'ENOTFOUND' } }),
      'ENOTFOUND (host not found)',
    ],
    [
      Object.assign(new TypeError('fetch failed'), {
        cause: { errors: [{ code: 'ECONNREFUSED' }, { code: 'ECONNREFUSED' }] },
      }),
      'ECONNREFUSED (connection refused)',
    ],
    [Object.assign(new TypeError('fetch failed'), { cause: { code: 'EWHATEVER' } }), 'EWHATEVER'],
    [new Error('boom'), 'Error: boom'],
    [
      new TypeError(
        'Request cannot be constructed from a URL that includes credentials: http://user:pass@hooks.example/hook?token=abc',
      ),
      'TypeError: Request cannot be constructed from a URL that includes credentials: http://hooks.example/hook',
    ],
  ])('%#: %s', (err, said) => {
    expect(describeDeliveryFailure(err, 1000)).toBe(said);
  });
});

describe('shownAddress', () => {
  it.each([
    ['https://user:secret@shop.example/hooks?token=abc#x', 'https://shop.example/hooks'],
    ['http://127.0.0.1:8080/a/b', 'http://127.0.0.1:8080/a/b'],
    ['not a url', '(not a URL)'],
  ])('%s → %s', (url, shown) => {
    expect(shownAddress(url)).toBe(shown);
  });
});
