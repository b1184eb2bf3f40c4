import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { SHOP_EVENT_TYPES } from '../../src/audit/shop-events';
import { ADMIN_KEY, SHOP_KEY, startTestApp, TestContext } from '../support/app';
import { eventually, WebhookReceiver } from '../support/webhook-receiver';

/** `npm run events -- trigger|listen` (the compiled CLI) against a running service and the sandbox. */
const CLI = join(process.cwd(), 'dist', 'src', 'events', 'cli.js');

let ctx: TestContext;

beforeAll(async () => {
  // Jobs on: a payout reaches its final status by polling, as under `npm start`.
  ctx = await startTestApp({
    env: {
      SCHEDULER_ENABLED: 'true',
      RECONCILE_TICK_MS: '100',
      PAYOUT_POLL_INTERVAL_S: '0.2',
      // payout.needs_attention: no final status by a short poll deadline (no sandbox clock here).
      PAYOUT_POLL_MAX_S: '3',
      // payout.awaiting_approval, payout.approved: the trigger's large payout waits for an admin.
      PAYOUT_APPROVAL_THRESHOLD: '643:50000.00',
    },
  });
}, 120000);

afterAll(async () => {
  await ctx?.close();
});

function run(args: string[]): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  let out = '';
  const child = spawn(process.execPath, [CLI, ...args, '--url', ctx.url, '--key', SHOP_KEY, '--admin-key', ADMIN_KEY, '--sandbox', ctx.sandbox.origin], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return {
    child,
    output: () => out,
    exited: new Promise((r) => child.on('exit', (code) => r(code))),
  };
}

/** What the object's status is in the event each trigger prints (its data as the GET answers it). */
const STATUS_OF: Record<string, string | undefined> = {
  'invoice.succeeded': 'succeeded',
  'invoice.rejected': 'rejected',
  'refund.success': 'SUCCESS',
  'refund.failed': 'FAILED',
  'refund.waiting': 'WAITING',
  'payout.succeeded': 'succeeded',
  'payout.rejected': 'rejected',
  'payout.failed': 'failed',
  'payout.cancelled': 'cancelled',
  'payout.needs_attention': 'needs_attention',
  'invoice.awaiting_payer': 'awaiting_payer',
  'invoice.ps_create_failed': 'ps_create_failed',
  'invoice.ps_notice_failed': 'ps_notice_failed',
  'invoice.held': 'held',
  'invoice.unheld': 'unheld',
  'invoice.expired': 'expired',
  'invoice.refund_updated': 'succeeded',
  'payment_link.created': 'active',
  'payment_link.deactivated': 'deactivated',
  'payment_link.expired': 'expired',
  'payment_link.paid': 'paid',
  'dispute.opened': 'open',
  'dispute.won': 'won',
  'dispute.lost': 'lost',
  'dispute.accepted': 'accepted',
};

it.each(SHOP_EVENT_TYPES.filter((t) => t !== 'invoice.pending').map((t) => [t]))(
  'trigger %s drives a real flow and prints its event',
  async (type) => {
    const cli = run(['trigger', type]);
    const code = await cli.exited;
    expect({ code, output: code === 0 ? '' : cli.output() }).toEqual({ code: 0, output: '' });
    const event = JSON.parse(cli.output().slice(cli.output().indexOf('{'))) as { type: string; data: { status?: string } };
    expect(event.type).toBe(type);
    if (STATUS_OF[type] !== undefined) expect(event.data.status).toBe(STATUS_OF[type]);
  },
  90000,
);

it('listen --forward prints new events and forwards them signed with the given secret', async () => {
  const receiver = await new WebhookReceiver().start();
  const whsec = `whsec_${randomBytes(32).toString('base64')}`;
  const cli = run(['listen', '--forward', receiver.url, '--secret', whsec]);
  try {
    await eventually(() => expect(cli.output()).toContain('Listening'), 30000);
    const trigger = run(['trigger', 'payout.rejected']);
    expect(await trigger.exited).toBe(0);
    await eventually(
      () => expect(receiver.received.some((r) => r.event.type === 'payout.rejected')).toBe(true),
      30000,
    );
    for (const r of receiver.received)
      expect(new Webhook(whsec).verify(r.body, receiver.headersOf(r))).toBeTruthy();
    expect(cli.output()).toContain('payout.rejected');
  } finally {
    cli.child.kill('SIGTERM');
    await cli.exited;
    await receiver.close();
  }
}, 90000);

it('trigger invoice.pending says the service never emits it (an invoice is written pending without an event)', async () => {
  const cli = run(['trigger', 'invoice.pending']);
  expect(await cli.exited).toBe(2);
  expect(cli.output()).toContain('never emitted');
});

it('refuses an unknown trigger with the list of known ones', async () => {
  const cli = run(['trigger', 'invoice.nope']);
  expect(await cli.exited).toBe(2);
  expect(cli.output()).toContain('invoice.succeeded');
});

/** The CLI with exactly `env` (plus PATH) and no --url: it finds the service as a developer's shell would. */
function runWithEnv(args: string[], env: Record<string, string>): ReturnType<typeof run> {
  let out = '';
  const child = spawn(process.execPath, [CLI, ...args, '--key', SHOP_KEY], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out, exited: new Promise((r) => child.on('exit', (code) => r(code))) };
}

/** A port nothing listens on (taken, then freed). */
async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

it('listen follows PUBLIC_BASE_URL when no --url is given', async () => {
  const cli = runWithEnv(['listen'], { PUBLIC_BASE_URL: ctx.url, PORT: '1' });
  try {
    await eventually(() => expect(cli.output()).toContain(`Listening for events from ${ctx.url}`), 30000);
  } finally {
    cli.child.kill('SIGTERM');
    await cli.exited;
  }
}, 60000);

it('listen follows PORT, and a service that is not there is named by its cause (ECONNREFUSED), not "fetch failed"', async () => {
  const port = await closedPort();
  const cli = runWithEnv(['listen'], { PORT: String(port) });
  expect(await cli.exited).toBe(1);
  expect(cli.output()).toContain(`localhost:${port}`);
  expect(cli.output()).toContain('ECONNREFUSED');
  expect(cli.output()).not.toContain('fetch failed');
}, 60000);

it('listen --forward to an address nothing listens on names ECONNREFUSED and goes on listening', async () => {
  const port = await closedPort();
  const cli = run(['listen', '--forward', `http://127.0.0.1:${port}/hook`]);
  try {
    await eventually(() => expect(cli.output()).toContain('Listening'), 30000);
    const trigger = run(['trigger', 'invoice.rejected']);
    expect(await trigger.exited).toBe(0);
    await eventually(() => expect(cli.output()).toMatch(new RegExp(`-> http://127\\.0\\.0\\.1:${port}/hook failed: ECONNREFUSED 127\\.0\\.0\\.1:${port}`)), 30000);
    expect(cli.output()).not.toContain('fetch failed');
    expect(cli.child.exitCode).toBeNull();
  } finally {
    cli.child.kill('SIGTERM');
    await cli.exited;
  }
}, 90000);

it('resend sends past events, by type, by id or since a time, to the forward target, signed', async () => {
  const receiver = await new WebhookReceiver().start();
  const whsec = `whsec_${randomBytes(32).toString('base64')}`;
  try {
    const trigger = run(['trigger', 'invoice.rejected']);
    expect(await trigger.exited).toBe(0);
    const past = JSON.parse(trigger.output()) as { id: string; type: string; createdAt: string };
    const byType = run(['resend', '--type', 'invoice.rejected', '--forward', receiver.url, '--secret', whsec]);
    expect(await byType.exited).toBe(0);
    expect(receiver.received.length).toBeGreaterThanOrEqual(1);
    expect(receiver.received.every((r) => r.event.type === 'invoice.rejected')).toBe(true);
    expect(receiver.received.map((r) => r.event.id)).toContain(past.id);
    // Signed the Standard Webhooks way with the given secret.
    const first = receiver.received[0];
    const headers = { 'webhook-id': first.id, 'webhook-timestamp': first.timestamp, 'webhook-signature': first.signature };
    expect(() => new Webhook(whsec).verify(first.body, headers)).not.toThrow();
    const before = receiver.received.length;
    const byId = run(['resend', '--id', past.id, '--forward', receiver.url, '--secret', whsec]);
    expect(await byId.exited).toBe(0);
    expect(receiver.received.slice(before).map((r) => r.event.id)).toEqual([past.id]);
    const later = run(['resend', '--since', new Date(Date.now() + 60_000).toISOString(), '--forward', receiver.url]);
    expect(await later.exited).toBe(0);
    expect(later.output()).toContain('0 events sent again');
    const none = run(['resend', '--forward', receiver.url]);
    expect(await none.exited).toBe(1);
    expect(none.output()).toContain('--id ID, --type TYPE and/or --since');
  } finally {
    await receiver.close();
  }
}, 90000);
