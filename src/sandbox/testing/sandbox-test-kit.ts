import { createHash } from 'node:crypto';
import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLosslessNumber, parse } from 'lossless-json';
import {
  DEFAULT_GATEWAY_CALLS,
  GatewayCall,
  SANDBOX_DEFAULT_SECRET,
  SANDBOX_DEFAULT_SHOP_ID,
} from '../../config/config';
import { SandboxHandle, SandboxOptions, startSandbox } from '../sandbox.server';

/**
 * Test kit for the sandbox: a shop that signs its requests by the spec's rule with its own code
 * (independent of the sandbox and of src/gateway), a notification receiver, and waiting helpers.
 */

export const SHOP_ID = SANDBOX_DEFAULT_SHOP_ID;
/** The default catalogue's RUB card payway (test/support/payways.ts names it PAYMENT.card). */
export const DEFAULT_PAYWAY = 'card_core_payin_rub[mock_server,success_with_callback]';
export const SECRET = SANDBOX_DEFAULT_SECRET;

export type ParsedObject = Record<string, unknown>;

/** Text of a value as transmitted: a number keeps its digits. */
export function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (isLosslessNumber(value)) return value.value;
  return String(value);
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Spec, Authentication: signed fields sorted by name, values joined with `:`, secret appended. */
export function signRequest(
  body: Record<string, unknown>,
  signed: string[],
  secret = SECRET,
): string {
  return sha256(
    [...signed]
      .sort()
      .map((k) => asText(body[k]))
      .join(':') + secret,
  );
}

/** Spec, Events rule 2: every key but sign whose value is neither null nor empty, sorted. */
export function notificationSignOk(fields: ParsedObject, secret = SECRET): boolean {
  const text = Object.keys(fields)
    .filter((k) => k !== 'sign' && asText(fields[k]) !== '')
    .sort()
    .map((k) => asText(fields[k]))
    .join(':');
  return sha256(text + secret) === fields.sign;
}

export function nowText(): string {
  return new Date().toISOString().slice(0, 19) + '+00:00';
}

export interface CallResult {
  status: number;
  text: string;
  body: ParsedObject;
  result: boolean;
  error_code: number;
  message: string;
  data: ParsedObject;
  /** `data` when it is a list. */
  list: ParsedObject[];
}

export class TestShop {
  constructor(
    readonly sandbox: SandboxHandle,
    readonly shopId = SHOP_ID,
    readonly secret = SECRET,
  ) {}

  /** The body as it would be sent, with shop_id filled and signed. */
  signed(call: GatewayCall, fields: Record<string, unknown>): Record<string, unknown> {
    const body = { shop_id: this.shopId, ...fields };
    return { ...body, sign: signRequest(body, DEFAULT_GATEWAY_CALLS[call].signed, this.secret) };
  }

  /** Posts a signed call and parses the answer exactly. */
  async call(
    call: GatewayCall,
    fields: Record<string, unknown>,
    init: { signal?: AbortSignal } = {},
  ): Promise<CallResult> {
    return this.post(
      DEFAULT_GATEWAY_CALLS[call].path,
      JSON.stringify(this.signed(call, fields)),
      init,
    );
  }

  async post(
    path: string,
    text: string,
    init: { signal?: AbortSignal; contentType?: string } = {},
  ): Promise<CallResult> {
    const res = await fetch(this.sandbox.baseUrl + path, {
      method: 'POST',
      headers: { 'Content-Type': init.contentType ?? 'application/json' },
      body: text,
      signal: init.signal,
    });
    const raw = await res.text();
    let body: ParsedObject = {};
    try {
      body = parse(raw) as ParsedObject;
    } catch {
      // not JSON: an HTML error page
    }
    const num = (v: unknown): number => Number(asText(v));
    return {
      status: res.status,
      text: raw,
      body,
      result: body.result === true,
      error_code: num(body.error_code),
      message: String(body.message ?? ''),
      data: (body.data ?? {}) as ParsedObject,
      list: (Array.isArray(body.data) ? body.data : []) as ParsedObject[],
    };
  }

  /** Calls the control API (plain JSON numbers); throws on an error status. */
  async control<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.sandbox.origin}/sandbox${path}`, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return (JSON.parse(text) as { data: T }).data;
  }

  async check(shopOrderId: string): Promise<CallResult> {
    return this.call('invoice/check', { shop_order_id: shopOrderId, now: nowText() });
  }

  async createInvoice(
    fields: Record<string, unknown>,
    call: 'invoice/create' | 'invoice/hold' = 'invoice/create',
  ): Promise<CallResult> {
    return this.call(call, { amount: '100.00', currency: 643, payway: DEFAULT_PAYWAY, ...fields });
  }

  async status(shopOrderId: string): Promise<number> {
    return Number(asText((await this.check(shopOrderId)).data.status));
  }
}

export interface ReceivedNotification {
  type: string | null;
  contentType: string;
  raw: string;
  fields: ParsedObject;
}

/** A shop's notification endpoint: records every delivery and answers from a script. */
export class NotificationReceiver {
  readonly received: ReceivedNotification[] = [];
  /** Replies to give first, in order; afterwards 200 `OK`. */
  replies: { status: number; body: string }[] = [];
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.read(req).then((raw) => {
        const contentType = req.headers['content-type'] ?? '';
        const fields = contentType.startsWith('application/json')
          ? (parse(raw) as ParsedObject)
          : Object.fromEntries(new URLSearchParams(raw));
        const type = new URL(req.url ?? '/', 'http://x').searchParams.get('type');
        this.received.push({ type, contentType, raw, fields });
        const reply = this.replies.shift() ?? { status: 200, body: 'OK' };
        res.writeHead(reply.status, { 'Content-Type': 'text/plain' }).end(reply.body);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/notify`;
    return this;
  }

  private read(req: IncomingMessage): Promise<string> {
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
  }

  of(key: string, value: string): ReceivedNotification[] {
    return this.received.filter((n) => asText(n.fields[key]) === value);
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Polls until `check` returns a truthy value (a non-empty list); fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 5000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value && !(Array.isArray(value) && value.length === 0)) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A sandbox for one spec file: fast clock, random port. */
export function startTestSandbox(opts: SandboxOptions = {}): Promise<SandboxHandle> {
  return startSandbox({ port: 0, timeScale: 0.001, ...opts });
}

let counter = 0;
/** A shop_order_id / shop_payment_id unique within the test run. */
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}-${Date.now()}-${counter}`;
}

/** Submits an HTML form (by its action and fields) the way a browser would. */
export async function postForm(
  url: string,
  fields: Record<string, string>,
): Promise<{ status: number; text: string; location: string | null }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  return { status: res.status, text: await res.text(), location: res.headers.get('location') };
}
