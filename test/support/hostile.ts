import { registeredRoutes as routesOf } from '../../src/common/http-edge';
import { connect } from 'node:net';
import type { RunningService } from '../../src/bootstrap';
import { auth, type TestContext } from './app';
import { PAYMENT } from './payways';

/** Helpers of the hostile-caller suites: raw HTTP, the route table, the sandbox's request log. */

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends exactly `target` as the request target (absolute form, `//`, `..`, odd encodings reach
 * the server as written; HTTP clients would normalise them) and reads the whole answer.
 */
export function rawRequest(
  url: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body = '',
): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  const lines = [
    `${method} ${target} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    'Connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(20_000, () => socket.destroy(new Error(`no answer to ${method} ${target}`)));
    socket.on('data', (d: Buffer) => chunks.push(d));
    // A server that answers early (413, 431) and closes may cut a long request short: the answer counts.
    socket.on('error', (e) => {
      if (chunks.length === 0) reject(e);
    });
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const status = Number(statusLine.split(' ')[1]);
      if (!Number.isInteger(status)) return reject(new Error(`no status line for ${method} ${target}: ${text.slice(0, 80)}`));
      const hs: Record<string, string> = {};
      for (const l of headerLines) {
        const i = l.indexOf(':');
        if (i > 0) hs[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status, headers: hs, body: rest.join('\r\n\r\n') });
    });
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  });
}


/** Every route registered on the server, as [METHOD, path]. */
export function registeredRoutes(service: RunningService): Array<[string, string]> {
  return [...routesOf(service.app.getHttpAdapter().getInstance())];
}

/** Fills path parameters with a plausible value. */
export const concrete = (path: string, value = 'x1'): string =>
  path.replace(/:(\w+)/g, value).replace(/\{\*\w+\}|\*\w+/g, 'x');

export interface SandboxRequest {
  path: string;
  body: Record<string, unknown>;
}

export async function sandboxRequests(ctx: TestContext): Promise<SandboxRequest[]> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/requests`);
  return ((await res.json()) as { data: SandboxRequest[] }).data;
}

export async function sandboxPost(ctx: TestContext, path: string, body: unknown = {}): Promise<Response> {
  return fetch(`${ctx.sandbox.origin}/sandbox/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A new invoice (card payway unless `overrides` say otherwise); fails the test if not created. */
export async function newInvoice(
  ctx: TestContext,
  overrides: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const res = await ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({
      shopOrderId: `h-${Date.now()}-${Math.random().toString(36).slice(2)}`,
      amount: '100.10',
      currency: 643,
      payway: PAYMENT.card,
      ...overrides,
    });
  expect([res.status, res.body]).toEqual([201, expect.anything()]);
  return res.body as Record<string, unknown>;
}
