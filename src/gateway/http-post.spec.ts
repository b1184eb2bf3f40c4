import { Agent as HttpAgent, createServer, type Server } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { postText } from './http-post';

/** The gateway client's transport against real local servers: what each failure looks like. */
describe('postText', () => {
  const httpAgent = new HttpAgent({ keepAlive: true });
  const httpsAgent = new HttpsAgent({ keepAlive: true });
  const opts = (timeoutMs = 2000) => ({ timeoutMs, httpAgent, httpsAgent });
  let server: Server;
  let base: string;
  let handler: Parameters<typeof createServer>[1];

  beforeAll(async () => {
    server = createServer((req, res) => handler!(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    httpAgent.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('posts the body with its length and returns status and text; a redirect is an answer, not followed', async () => {
    let seen = '';
    handler = (req, res) => {
      req.setEncoding('utf8');
      req.on('data', (c: string) => (seen += c));
      req.on('end', () => {
        res.writeHead(302, { Location: '/elsewhere' });
        res.end(`{"len":${req.headers['content-length']}}`);
      });
    };
    const answer = await postText(new URL(`${base}/gateway/v1/x`), '{"a":"é"}', { sign: 's' }, opts());
    expect(seen).toBe('{"a":"é"}');
    expect(answer).toEqual({ status: 302, data: '{"len":10}' });
  });

  it('a server that never answers: ETIMEDOUT after the time-out (outcome unknown)', async () => {
    handler = () => undefined;
    const err = (await postText(new URL(`${base}/slow`), '{}', {}, opts(150)).catch((e) => e)) as NodeJS.ErrnoException;
    expect(err.code).toBe('ETIMEDOUT');
    expect(err.message).toBe('timeout of 150ms exceeded');
  });

  it('a connection closed in the middle of the body: ECONNRESET (outcome unknown)', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('{"result":');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const err = (await postText(new URL(`${base}/cut`), '{}', {}, opts()).catch((e) => e)) as NodeJS.ErrnoException;
    expect(err.code).toBe('ECONNRESET');
  });

  it('nobody listening: ECONNREFUSED on connect (never sent)', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const err = (await postText(new URL(`http://127.0.0.1:${port}/x`), '{}', {}, opts()).catch((e) => e)) as NodeJS.ErrnoException;
    expect(err.code).toBe('ECONNREFUSED');
    expect(err.syscall).toBe('connect');
  });
});
