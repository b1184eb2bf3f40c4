/**
 * `npm run events -- listen [--forward URL]` prints (and forwards, re-signed) the shop events
 * of a running service as they happen; `npm run events -- trigger <type>` drives the sandbox
 * through a real flow that produces that event; `npm run events -- resend --forward URL [--id ID]
 * [--type TYPE] [--since ISO-TIME]` sends past events of the feed again to the forward target
 * (re-signed as listen forwards them). Talks to the service over its public API only.
 *
 * Options: --url (default PUBLIC_BASE_URL, else http://localhost:$PORT or :3000), --key (default EVENTS_API_KEY, else
 * the first of API_KEYS, else sandbox mode's development shop key), --admin-key for the triggers
 * an admin acts in (default EVENTS_ADMIN_KEY, else the first of ADMIN_API_KEYS, else the
 * development admin key), --sandbox (default http://localhost:$SANDBOX_PORT or :4010),
 * --secret for forwarding (default SHOP_WEBHOOK_SECRET, else generated and printed),
 * --from-start (listen from the first event instead of from now). `trigger` knows every type
 * of SHOP_EVENT_TYPES (./triggers.ts).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeWebhookSecret, WEBHOOK_SECRET_PROBLEM } from '../common/webhook-secret';
import { NOT_EMITTED, type TriggerContext, TRIGGERS } from './triggers';
import { webhookHeaders } from './webhook-signature';

interface Options {
  url: string;
  key: string;
  /** The admin key, for the triggers that need an admin's act (approve, recheck, accept, reconcile). */
  adminKey?: string;
  /** The sandbox's origin, for the triggers that drive it (pay, restate, settings). */
  sandbox: string;
  forward?: string;
  secret?: string;
  fromStart: boolean;
  /** resend: one event by id, events of one type, events created at or after a time. */
  id?: string;
  type?: string;
  since?: string;
}

interface FeedEvent {
  id: string;
  type: string;
  createdAt?: string;
  objectType: string;
  objectId: string;
  sequence: number;
  data: Record<string, unknown>;
}

async function call(
  o: Options,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  opts: { key?: string; tolerate?: boolean } = {},
): Promise<unknown> {
  const res = await fetch(new URL(path, o.url), {
    method,
    headers: {
      authorization: `Bearer ${opts.key ?? o.key}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  }).catch((err: unknown) => {
    throw new Error(`${method} ${new URL(path, o.url).origin}: ${whyFailed(err)}`);
  });
  const text = await res.text();
  if (!res.ok && !opts.tolerate) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
  try {
    return text ? (JSON.parse(text) as unknown) : null;
  } catch {
    return { status: res.status, text };
  }
}

/** A sandbox control route's `data`, or null when the sandbox has no such route (404). */
async function sandboxCall(o: Options, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown> | null> {
  const res = await fetch(new URL(path, o.sandbox), {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  }).catch((err: unknown) => {
    throw new Error(`${method} ${new URL(path, o.sandbox).origin} (the sandbox; --sandbox URL): ${whyFailed(err)}`);
  });
  const text = await res.text();
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`sandbox ${method} ${path}: HTTP ${res.status} ${text}`);
  const parsed = JSON.parse(text) as { data?: Record<string, unknown> };
  return parsed.data ?? {};
}

/** What the trigger flows (./triggers.ts) act through. */
function triggerContext(o: Options): TriggerContext {
  return {
    api: async (method, path, body, tolerate) =>
      ((await call(o, method, path, body, { tolerate })) ?? {}) as Record<string, unknown>,
    admin: async (method, path, body) => {
      if (o.adminKey === undefined)
        throw new Error('this trigger needs an admin key: --admin-key, EVENTS_ADMIN_KEY or ADMIN_API_KEYS (sandbox mode: DATA_DIR/development-api-keys)');
      return ((await call(o, method, path, body, { key: o.adminKey })) ?? {}) as Record<string, unknown>;
    },
    sandbox: (method, path, body) => sandboxCall(o, method, path, body),
    payerForm: async (path, fields) => {
      const res = await fetch(new URL(path, o.url), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
        redirect: 'manual',
      });
      await res.arrayBuffer();
      return res.status;
    },
    waitFor: (type, objectIds, nudge) => waitFor(o, type, objectIds, nudge),
    log: (line) => console.error(line),
  };
}

async function page(
  o: Options,
  after: string | null,
): Promise<{ items: FeedEvent[]; nextCursor: string }> {
  const q = after ? `&after=${encodeURIComponent(after)}` : '';
  return (await call(o, 'GET', `/api/v1/events?limit=500${q}`)) as {
    items: FeedEvent[];
    nextCursor: string;
  };
}

/** The cursor after the last event there is now. */
async function endOfFeed(o: Options): Promise<string | null> {
  let after: string | null = null;
  for (;;) {
    const p = await page(o, after);
    after = p.nextCursor;
    if (p.items.length === 0) return after;
  }
}

async function waitFor(
  o: Options,
  type: string,
  objectIds: string[],
  nudge?: string,
  timeoutMs = 60000,
): Promise<FeedEvent> {
  let after: string | null = null;
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const p = await page(o, after);
    const hit = p.items.find((e) => e.type === type && objectIds.includes(e.objectId));
    if (hit) return hit;
    after = p.nextCursor;
    if (p.items.length === 0) {
      if (nudge) await call(o, 'GET', nudge).catch(() => undefined);
      await sleep(250);
    }
  }
  throw new Error(`no ${type} event for ${objectIds.join(', ')} within ${timeoutMs / 1000} s`);
}

/** The key forwarded events are signed with: the secret as the service reads SHOP_WEBHOOK_SECRET. */
function signingKey(whsec: string): Buffer {
  const key = decodeWebhookSecret(whsec);
  if (key === null) throw new Error(`--secret ${WEBHOOK_SECRET_PROBLEM}`);
  return key;
}

async function listen(o: Options): Promise<never> {
  let secret: Buffer | null = null;
  if (o.forward) {
    const whsec = o.secret ?? `whsec_${randomBytes(32).toString('base64')}`;
    secret = signingKey(whsec);
    console.log(`Forwarding to ${o.forward}, signed with ${o.secret ? 'the given secret' : whsec}`);
  }
  let after = o.fromStart ? null : await endOfFeed(o);
  console.log(`Listening for events from ${o.url} (Ctrl-C to stop)`);
  for (;;) {
    const p = await page(o, after);
    for (const e of p.items) {
      const status = typeof e.data.status === 'string' ? ` ${e.data.status}` : '';
      console.log(
        `${new Date().toISOString()}  ${e.type.padEnd(28)} ${e.objectType} ${e.objectId} #${e.sequence}${status}  [${e.id}]`,
      );
      if (o.forward && secret) await forward(o.forward, secret, e);
    }
    after = p.nextCursor;
    if (p.items.length === 0) await sleep(500);
  }
}

/** The past events `resend` picks: one by id, or the feed's events of a type and/or since a time. */
export function picked(e: { id: string; type: string; createdAt?: string }, o: Pick<Options, 'id' | 'type' | 'since'>): boolean {
  if (o.id !== undefined && e.id !== o.id) return false;
  if (o.type !== undefined && e.type !== o.type) return false;
  if (o.since !== undefined && (e.createdAt === undefined || Date.parse(e.createdAt) < Date.parse(o.since))) return false;
  return true;
}

async function resend(o: Options): Promise<void> {
  if (!o.forward) throw new Error('resend: name the target with --forward URL (or SHOP_WEBHOOK_URL)');
  if (o.id === undefined && o.type === undefined && o.since === undefined)
    throw new Error('resend: choose the events with --id ID, --type TYPE and/or --since ISO-TIME');
  if (o.since !== undefined && Number.isNaN(Date.parse(o.since)))
    throw new Error(`resend: --since ${o.since} is not a time (2026-12-01T10:00:00Z)`);
  const whsec = o.secret ?? `whsec_${randomBytes(32).toString('base64')}`;
  const secret = signingKey(whsec);
  console.log(`Sending past events to ${o.forward}, signed with ${o.secret ? 'the given secret' : whsec}`);
  const events: FeedEvent[] = [];
  if (o.id !== undefined) {
    events.push((await call(o, 'GET', `/api/v1/events/${encodeURIComponent(o.id)}`)) as FeedEvent);
  } else {
    let after: string | null = null;
    for (;;) {
      const p = await page(o, after);
      events.push(...p.items.filter((e) => picked(e, o)));
      after = p.nextCursor;
      if (p.items.length === 0) break;
    }
  }
  for (const e of events) {
    console.log(`${e.type.padEnd(28)} ${e.objectType} ${e.objectId} #${e.sequence}  [${e.id}]`);
    await forward(o.forward, secret, e);
  }
  console.log(`${events.length} event${events.length === 1 ? '' : 's'} sent again`);
}

async function forward(url: string, secret: Buffer, e: FeedEvent): Promise<void> {
  const body = JSON.stringify(e);
  try {
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...webhookHeaders(secret, e.id, body) },
      signal: AbortSignal.timeout(10000),
    });
    console.log(`  -> ${url} ${res.status}`);
  } catch (err) {
    console.log(`  -> ${url} failed: ${whyFailed(err)}`);
  }
}

/**
 * Why a fetch failed, as its cause says (`ECONNREFUSED 127.0.0.1:4000`, `ENOTFOUND shop.local`,
 * a time-out), not fetch's own "fetch failed".
 */
export function whyFailed(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
    return 'no answer within 10 s (timed out)';
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    const { code, address, port, hostname } = e as Error & { code?: string; address?: string; port?: number; hostname?: string };
    if (typeof code === 'string') {
      const where = address !== undefined ? ` ${address}${port !== undefined ? `:${port}` : ''}` : hostname !== undefined ? ` ${hostname}` : '';
      return `${code}${where}${code === 'ECONNREFUSED' ? ' (nothing listens there)' : ''}`;
    }
    // undici's connect errors carry several causes (one per address tried).
    if (e instanceof AggregateError && e.errors.length > 0) e = e.errors[0];
    else e = e.cause;
  }
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Sandbox mode's development keys (DATA_DIR/development-api-keys), when there are. */
function developmentKeys(): { shop?: string; admin?: string } {
  const file = join(process.env.DATA_DIR ?? '.data', 'development-api-keys');
  if (!existsSync(file)) return {};
  const keys: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^(shop|admin)=(\S+)$/.exec(line.trim());
    if (m !== null) keys[m[1]] = m[2];
  }
  return keys;
}

function parse(argv: string[]): {
  command: string | undefined;
  arg: string | undefined;
  o: Options;
} {
  const flags = new Map<string, string | true>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--from-start') flags.set(a, true);
    else if (a.startsWith('--')) flags.set(a, argv[++i] ?? '');
    else rest.push(a);
  }
  const str = (k: string): string | undefined => {
    const v = flags.get(k);
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const dev = developmentKeys();
  const key =
    str('--key') ??
    process.env.EVENTS_API_KEY ??
    process.env.API_KEYS?.split(',')[0]?.split(':')[0] ??
    dev.shop;
  const adminKey =
    str('--admin-key') ?? process.env.EVENTS_ADMIN_KEY ?? process.env.ADMIN_API_KEYS?.split(',')[0] ?? dev.admin;
  return {
    command: rest[0],
    arg: rest[1],
    o: {
      url: str('--url') ?? process.env.PUBLIC_BASE_URL ?? `http://localhost:${process.env.PORT ?? '3000'}`,
      key: key ?? '',
      adminKey: adminKey === '' ? undefined : adminKey,
      sandbox: str('--sandbox') ?? `http://localhost:${process.env.SANDBOX_PORT ?? '4010'}`,
      forward: str('--forward') ?? (rest[0] === 'resend' ? process.env.SHOP_WEBHOOK_URL?.split(',')[0] : undefined),
      id: str('--id'),
      type: str('--type'),
      since: str('--since'),
      secret: str('--secret') ?? process.env.SHOP_WEBHOOK_SECRET,
      fromStart: flags.has('--from-start'),
    },
  };
}

async function main(): Promise<void> {
  const { command, arg, o } = parse(process.argv.slice(2));
  if (command !== 'listen' && command !== 'trigger' && command !== 'resend') {
    console.error(
      'usage: npm run events -- listen [--forward URL] | trigger <type> | resend --forward URL [--id ID] [--type TYPE] [--since ISO-TIME]   [--url URL] [--key KEY]',
    );
    console.error(`types: ${Object.keys(TRIGGERS).join(', ')}`);
    process.exit(2);
  }
  if (o.key === '') {
    console.error(
      'No API key: pass --key, or set EVENTS_API_KEY (the shop key `npm start` printed)',
    );
    process.exit(2);
  }
  if (command === 'listen') return void (await listen(o));
  if (command === 'resend') return resend(o);
  if (arg !== undefined && NOT_EMITTED[arg] !== undefined) {
    console.error(`trigger: ${arg} is never emitted: ${NOT_EMITTED[arg]}`);
    process.exit(2);
  }
  const flow = arg ? TRIGGERS[arg] : undefined;
  if (!flow) {
    console.error(`trigger: one of ${Object.keys(TRIGGERS).join(', ')}`);
    process.exit(2);
  }
  const { objectIds, nudge } = await flow(triggerContext(o));
  const event = await waitFor(o, arg!, objectIds, nudge);
  console.log(JSON.stringify(event, null, 2));
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
