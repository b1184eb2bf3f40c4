import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { clock, moveClock } from '../common/clock';
import { logger } from '../common/logger';
import { storeClockOffset } from '../database/clock-sql';
import { WebhookDispatcher } from '../events/webhook-dispatcher';
import { EventRetention } from '../events/event-retention';
import { HoldExpiryJob } from '../invoices/hold-expiry';
import { HoldPolicyJob } from '../invoices/hold-policy';
import { InvoiceReconciler } from '../invoices/invoice-reconciler';
import { NotificationRetention } from '../notifications/notification-retention';
import { PayoutBatchRunner } from '../payouts/payout-batch-runner';
import { PayoutPoller } from '../payouts/payout-poller';
import { ReconciliationJob } from '../reconciliation/reconciliation-job';
import { RefundReconciler } from '../refunds/refund-reconciler';
import { PaymentLinksService } from '../payment-links/payment-links.service';

const log = logger.child({ component: 'sandbox-clock' });

/** The longest single advance: ten years. */
export const MAX_ADVANCE_S = 10 * 366 * 86_400;
/** Rounds of the jobs after each step, while the sandbox still has work due at that time. */
const ROUNDS = 4;
/** Steps of one advance at most (a stop at each hold warning and policy moment). */
const MAX_STEPS = 1000;

/** What the sandbox clock needs of the in-process sandbox (SandboxHandle). */
export interface SandboxTasks {
  runDue(until: number, moveTo: (at: number) => void): Promise<number>;
}

export interface ClockReading {
  now: string;
  offsetSeconds: number;
}

export interface AdvanceReport extends ClockReading {
  advancedSeconds: number;
  /** Each job that did something, in the order it ran, with how many times and its results. */
  jobs: Array<{ job: string; runs: number; results: unknown[] }>;
  /** Sandbox tasks run (hold lapses, payout and refund progress, notification attempts). */
  sandboxTasks: number;
  /** The shop events emitted while the clock moved, in commit order. */
  events: Array<{ id: string; type: string; objectType: string; objectId: string }>;
}

export class AdvanceRefused extends Error {}

interface Job {
  name: string;
  run(): Promise<unknown>;
}

/**
 * The sandbox clock (sandbox mode only; shared/API.md, Operations "Sandbox clock"). The service
 * owns it: an advance moves the service's clock (src/common/clock.ts) and the SQL clock
 * (`clock_now()`, stored in the database so every instance's statements see it) together, the
 * in-process sandbox reading the same clock. It steps forward to each moment something of the
 * service falls due in order (a hold's warning, a hold policy's act) and to each sandbox task on
 * the way (a hold's lapse at its expires_at, payout steps, notification retries), running the
 * service's jobs (their leases make each act once, whichever instance runs it) at each stop.
 */
export class SandboxClock {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly app: INestApplication,
    private readonly sandbox: SandboxTasks,
  ) {}

  read(): ClockReading {
    return { now: clock.date().toISOString(), offsetSeconds: clock.offsetSeconds() };
  }

  /** One advance at a time: a second waits for the first. */
  advance(seconds: number): Promise<AdvanceReport> {
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0)
      return Promise.reject(new AdvanceRefused('seconds must be a number above 0: the clock only moves forward'));
    if (seconds > MAX_ADVANCE_S)
      return Promise.reject(new AdvanceRefused(`seconds must be at most ${MAX_ADVANCE_S}`));
    const run = this.queue.then(() => this.advanceNow(seconds));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async advanceNow(seconds: number): Promise<AdvanceReport> {
    const ds = this.app.get(DataSource);
    const firstEvent = await lastEventId(ds);
    const target = clock.now() + seconds * 1000;
    const ran = new Map<string, { runs: number; results: unknown[] }>();
    let sandboxTasks = 0;
    let pendingStore: Promise<void> = Promise.resolve();
    const moveTo = (at: number): void => {
      const offset = Math.max(clock.offsetSeconds(), (at - Date.now()) / 1000);
      moveClock(offset);
      pendingStore = pendingStore.then(() => storeClockOffset(ds, offset));
    };
    const settle = async (): Promise<void> => {
      await pendingStore;
      for (let round = 0; round < ROUNDS; round++) {
        for (const job of this.jobs()) {
          const result = await job.run();
          if (isWork(result)) {
            const r = ran.get(job.name) ?? { runs: 0, results: [] };
            r.runs++;
            r.results.push(result);
            ran.set(job.name, r);
          }
        }
        // Another instance's act on the same objects (its own tick claimed a hold's charge):
        // the clock does not move past a call still in flight.
        await callsSettled(ds);
        // What the jobs' calls made due at once (notifications of a charge or a release).
        const n = await this.sandbox.runDue(clock.now(), moveTo);
        await pendingStore;
        sandboxTasks += n;
        if (n === 0) break;
      }
    };
    // What is due already is learnt before the clock moves (a hold's expiry, right after it).
    await settle();
    for (let step = 0; step < MAX_STEPS; step++) {
      const stop = Math.min(target, (await this.nextServiceStop()) ?? Infinity);
      const at = Math.max(stop, clock.now());
      sandboxTasks += await this.sandbox.runDue(at, moveTo);
      moveTo(at);
      await settle();
      if (at >= target) break;
    }
    const events = await eventsAfter(ds, firstEvent);
    log.info({ seconds, offsetSeconds: clock.offsetSeconds(), events: events.length }, 'sandbox clock advanced');
    return {
      ...this.read(),
      advancedSeconds: seconds,
      jobs: [...ran].map(([job, r]) => ({ job, ...r })),
      sandboxTasks,
      events,
    };
  }

  /**
   * The next moment, after now, something of the service falls due that must run at its own
   * time (ms on the clock): a hold's warning or policy, or the reconciliation of the next day
   * that ends (each day of a long advance is reconciled, in order).
   */
  private async nextServiceStop(): Promise<number | null> {
    const now = clock.now();
    const times = [
      await this.app.get(HoldExpiryJob, { strict: false }).nextDueAt(),
      await this.app.get(HoldPolicyJob, { strict: false }).nextDueAt(),
      await this.app.get(PaymentLinksService, { strict: false }).nextDueAt(),
    ]
      .filter((d): d is Date => d !== null)
      .map((d) => d.getTime());
    const day = nextDueDayAt(this.app.get(ReconciliationJob, { strict: false }), now);
    if (day !== null) times.push(day);
    const later = times.filter((t) => t > now);
    return later.length === 0 ? null : Math.min(...later);
  }

  /**
   * The time-driven work of the service, in the order of shared/API.md's list: hold warnings,
   * policies and lapses (the invoice checks), refunds, payout polls and deadlines (and the
   * watch), batches, webhook retries, the daily reconciliation, retention.
   */
  private jobs(): Job[] {
    const get = <T>(cls: new (...args: never[]) => T): T => this.app.get(cls, { strict: false });
    return [
      { name: 'hold-expiry', run: () => get(HoldExpiryJob).runOnce() },
      { name: 'hold-policy', run: () => get(HoldPolicyJob).runOnce() },
      { name: 'invoice-reconciler', run: () => get(InvoiceReconciler).runOnce() },
      { name: 'refund-reconciler', run: () => get(RefundReconciler).runOnce() },
      { name: 'payment-link-expiry', run: () => get(PaymentLinksService).expireDue() },
      { name: 'payout-poller', run: () => get(PayoutPoller).runOnce() },
      { name: 'payout-batch-runner', run: () => get(PayoutBatchRunner).runOnce() },
      { name: 'shop-webhooks', run: () => get(WebhookDispatcher).runOnce() },
      { name: 'reconcile-books', run: () => get(ReconciliationJob).runOnce() },
      { name: 'notification-retention', run: () => get(NotificationRetention).runOnce() },
      { name: 'event-retention', run: () => get(EventRetention).runOnce() },
    ];
  }
}

/**
 * When the reconciliation's due day next changes after `now` (to the second), within a day and
 * a bit (a day of 25 hours at a clock change); null when it does not (REPORT_TIMEZONE's days).
 */
export function nextDueDayAt(job: Pick<ReconciliationJob, 'dueDay'>, now: number): number | null {
  const day = job.dueDay(new Date(now));
  let lo = now;
  let hi = now + 26 * 3_600_000;
  if (job.dueDay(new Date(hi)) === day) return null;
  while (hi - lo > 1000) {
    const mid = Math.floor((lo + hi) / 2);
    if (job.dueDay(new Date(mid)) === day) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** A job's result that says it did something (a count above 0, an id, a non-empty report). */
function isWork(result: unknown): boolean {
  if (result === null || result === undefined || result === false) return false;
  if (typeof result === 'number') return result > 0;
  if (typeof result === 'object')
    return Object.values(result as Record<string, unknown>).some((v) => (typeof v === 'number' ? v > 0 : isWork(v)));
  return true;
}

/**
 * Waits (a few real seconds at most) until no gateway call on an invoice, refund or payout is in
 * flight by any instance, so that an advance never moves the clock past an act under way.
 */
async function callsSettled(ds: DataSource): Promise<void> {
  const until = Date.now() + 5000;
  for (;;) {
    const [row] = (await ds.query(
      `SELECT EXISTS (SELECT 1 FROM invoices WHERE call_owner IS NOT NULL AND call_lease_until > clock_now())
           OR EXISTS (SELECT 1 FROM refunds WHERE call_owner IS NOT NULL AND call_lease_until > clock_now())
           OR EXISTS (SELECT 1 FROM payouts WHERE call_owner IS NOT NULL AND call_lease_until > clock_now())
           -- A hold policy's act just stamped, its call not claimed yet.
           OR EXISTS (SELECT 1 FROM invoices WHERE status = 'held' AND hold_policy_at > clock_now() - interval '10 seconds') AS busy`,
    )) as Array<{ busy: boolean }>;
    if (!row.busy || Date.now() >= until) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function lastEventId(ds: DataSource): Promise<string> {
  const rows = (await ds.query(`SELECT COALESCE(max(id), 0)::text AS id FROM events`)) as Array<{ id: string }>;
  return rows[0].id;
}

async function eventsAfter(
  ds: DataSource,
  after: string,
): Promise<Array<{ id: string; type: string; objectType: string; objectId: string }>> {
  return (await ds.query(
    `SELECT public_id AS id, type, entity_type AS "objectType", entity_id AS "objectId" FROM events
      WHERE id > $1::bigint AND type IS NOT NULL ORDER BY id`,
    [after],
  )) as Array<{ id: string; type: string; objectType: string; objectId: string }>;
}
