/**
 * `npm run events -- listen [--forward URL]` prints (and forwards, re-signed) the shop events
 * of a running service as they happen; `npm run events -- trigger <type>` drives the sandbox
 * through a real flow that produces that event; `npm run events -- resend --forward URL [--id ID]
 * [--type TYPE] [--since ISO-TIME]` sends past events of the feed again to the forward target
 * (re-signed as listen forwards them). Talks to the service over its public API only.
 *
 * Options: --url (default PUBLIC_BASE_URL, else http://localhost:$PORT or :3000), --key (default EVENTS_API_KEY, else
 * the first of API_KEYS), --secret for forwarding (default SHOP_WEBHOOK_SECRET, else generated
 * and printed), --from-start (listen from the first event instead of from now).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { webhookHeaders } from './webhook-signature';

interface Options {
  url: string;
  key: string;
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

/** What `trigger` can produce, and the flow that produces it. */
const TRIGGERS: Record<string, (o: Options) => Promise<{ objectId: string; nudge?: string }>> = {
  'invoice.succeeded': (o) => invoice(o, 'card_core_payin_rub[mock_server,success]'),
  'invoice.rejected': (o) => invoice(o, 'card_core_payin_rub[mock_server,rejected_with_callback]'),
  'refund.success': async (o) => {
    const { objectId, nudge } = await invoice(o, 'card_core_payin_rub[mock_server,success]');
    await waitFor(o, 'invoice.succeeded', objectId, nudge);
    const shopRefundId = `cli-refund-${randomUUID()}`;
    await call(o, 'POST', `/api/v1/invoices/${encodeURIComponent(objectId)}/refunds`, {
      shopRefundId,
      amount: '10.00',
    });
    return {
      objectId: shopRefundId,
      nudge: `/api/v1/invoices/${encodeURIComponent(objectId)}/refunds?refresh=true`,
    };
  },
  'payout.succeeded': (o) => payout(o, 'qiwi_topup_rub_to_card[mock_server,success]'),
  'payout.rejected': (o) => payout(o, 'qiwi_topup_rub_to_card[sandbox,reject]'),
  'payout.failed': (o) => payout(o, 'qiwi_topup_rub_to_card[sandbox,decline]'),
  'invoice.awaiting_payer': (o) => invoice(o, 'card_core_payin_rub[mock_server,success_with_callback]'),
  'refund.waiting': (o) => refundOf(o),
  'invoice.refund_updated': async (o) => {
    const { orderId, nudge } = await refundOf(o);
    return { objectId: orderId, nudge };
  },
  'payment_link.created': async (o) => ({ objectId: (await paymentLink(o)).id }),
  'payment_link.deactivated': async (o) => {
    const { id } = await paymentLink(o);
    await call(o, 'POST', `/api/v1/payment-links/${id}/deactivate`);
    return { objectId: id };
  },
  'payment_link.paid': async (o) => {
    const { id } = await paymentLink(o);
    // The payer's form, as the page posts it; the payway pays at once, without the payer.
    const res = await fetch(new URL(`/pay/l/${id}`, o.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ payway: LINK_PAYWAY, attempt: `cli-${randomUUID()}` }).toString(),
      redirect: 'manual',
    });
    if (res.status !== 303) throw new Error(`the payment link's form answered ${res.status}`);
    return { objectId: id, nudge: `/api/v1/invoices/${id}-1?refresh=true` };
  },
};

/** A payer-less payway of the sandbox: a link's invoice on it is paid at once. */
const LINK_PAYWAY = 'card_core_payin_rub[mock_server,success]';

/** A single-use payment link on LINK_PAYWAY. */
async function paymentLink(o: Options): Promise<{ id: string }> {
  const link = (await call(o, 'POST', '/api/v1/payment-links', {
    amount: '100.00',
    currency: 643,
    description: 'cli payment link',
    payways: [LINK_PAYWAY],
  })) as { id: string };
  return { id: link.id };
}

/** A paid invoice and a refund of part of it. */
async function refundOf(o: Options): Promise<{ objectId: string; orderId: string; nudge: string }> {
  const { objectId, nudge } = await invoice(o, 'card_core_payin_rub[mock_server,success]');
  await waitFor(o, 'invoice.succeeded', objectId, nudge);
  const shopRefundId = `cli-refund-${randomUUID()}`;
  await call(o, 'POST', `/api/v1/invoices/${encodeURIComponent(objectId)}/refunds`, {
    shopRefundId,
    amount: '10.00',
  });
  return {
    objectId: shopRefundId,
    orderId: objectId,
    nudge: `/api/v1/invoices/${encodeURIComponent(objectId)}/refunds?refresh=true`,
  };
}

async function invoice(o: Options, payway: string): Promise<{ objectId: string; nudge: string }> {
  const shopOrderId = `cli-order-${randomUUID()}`;
  await call(o, 'POST', '/api/v1/invoices', {
    shopOrderId,
    amount: '100.00',
    currency: 643,
    payway,
  });
  // A payer-less success is not notified: ask the gateway (refresh) while waiting.
  return {
    objectId: shopOrderId,
    nudge: `/api/v1/invoices/${encodeURIComponent(shopOrderId)}?refresh=true`,
  };
}

async function payout(o: Options, payway: string): Promise<{ objectId: string }> {
  const shopPaymentId = `cli-payout-${randomUUID()}`;
  await call(o, 'POST', '/api/v1/payouts', {
    shopPaymentId,
    amount: '100.00',
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway,
    account: '4111111111111111',
  });
  return { objectId: shopPaymentId };
}

async function call(
  o: Options,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<unknown> {
  const res = await fetch(new URL(path, o.url), {
    method,
    headers: {
      authorization: `Bearer ${o.key}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  }).catch((err: unknown) => {
    throw new Error(`${method} ${new URL(path, o.url).origin}: ${whyFailed(err)}`);
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
  return text ? (JSON.parse(text) as unknown) : null;
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
  objectId: string,
  nudge?: string,
  timeoutMs = 60000,
): Promise<FeedEvent> {
  let after: string | null = null;
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const p = await page(o, after);
    const hit = p.items.find((e) => e.type === type && e.objectId === objectId);
    if (hit) return hit;
    after = p.nextCursor;
    if (p.items.length === 0) {
      if (nudge) await call(o, 'GET', nudge).catch(() => undefined);
      await sleep(250);
    }
  }
  throw new Error(`no ${type} event for ${objectId} within ${timeoutMs / 1000} s`);
}

async function listen(o: Options): Promise<never> {
  let secret: Buffer | null = null;
  if (o.forward) {
    const whsec = o.secret ?? `whsec_${randomBytes(32).toString('base64')}`;
    secret = Buffer.from(whsec.replace(/^whsec_/, ''), 'base64');
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
  const secret = Buffer.from(whsec.replace(/^whsec_/, ''), 'base64');
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
  const key =
    str('--key') ??
    process.env.EVENTS_API_KEY ??
    process.env.API_KEYS?.split(',')[0]?.split(':')[0];
  return {
    command: rest[0],
    arg: rest[1],
    o: {
      url: str('--url') ?? process.env.PUBLIC_BASE_URL ?? `http://localhost:${process.env.PORT ?? '3000'}`,
      key: key ?? '',
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
  const flow = arg ? TRIGGERS[arg] : undefined;
  if (!flow) {
    console.error(`trigger: one of ${Object.keys(TRIGGERS).join(', ')}`);
    process.exit(2);
  }
  const { objectId, nudge } = await flow(o);
  const event = await waitFor(o, arg!, objectId, nudge);
  console.log(JSON.stringify(event, null, 2));
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
