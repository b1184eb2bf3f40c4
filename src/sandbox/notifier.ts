import { request as httpRequest } from 'node:http';
import { clock } from '../common/clock';
import { request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import type { OutcomeScenario } from './faults';
import { JsonOut, textOf, toJsonText } from './json-text';
import type {
  Notice,
  NoticeType,
  NotifyFormat,
  PendingDelivery,
  SandboxState,
} from './sandbox.state';
import type { Scheduler } from './scheduler';
import { notificationSignature } from './signature';

/**
 * Server notifications: signed like the gateway signs them, POSTed as JSON or as a form, and
 * re-sent with growing intervals until the shop answers HTTP 200 with body `OK` (25 attempts).
 * The dup_notify, out_of_order and notify_none scenarios act here.
 */

export const MAX_ATTEMPTS = 25;

/**
 * Seconds between attempts (24 gaps for 25 attempts): doubling from one minute, then even
 * steps, so the last attempt falls at about the end of the day. Scaled by timeScale.
 */
export const RETRY_GAPS_S: readonly number[] = [
  60,
  120,
  240,
  480,
  960,
  1920,
  ...Array<number>(18).fill(4500),
];

const ATTEMPT_TIMEOUT_MS = 10_000;

export interface NoticeRequest {
  type: NoticeType;
  group: string;
  url: string | null;
  /** Fields without `sign`; numbers that are money as LosslessNumber. */
  fields: Record<string, JsonOut>;
  scenarios: ReadonlySet<OutcomeScenario>;
  /** Final notices release the ones out_of_order held back. */
  final: boolean;
}

interface Reply {
  status: number | null;
  text: string;
}

export class Notifier {
  private readonly inFlight = new Set<AbortController>();
  /** Bumped by stop(): deliveries of an earlier generation record nothing and retry no more. */
  private generation = 0;

  constructor(
    private readonly state: SandboxState,
    private readonly scheduler: Scheduler,
    /** The secret of the shop a notice is for (its `shop_id`). */
    private readonly secretOf: (shopId: number) => string,
    private readonly log: Logger,
  ) {}

  /** Builds, signs and stores a notice, then delivers it as the scenarios say. */
  send(req: NoticeRequest): void {
    const secret = this.secretOf(Number(textOf(req.fields.shop_id)));
    const fields = { ...req.fields, sign: notificationSignature(req.fields, secret) };
    const notice: Notice = { type: req.type, group: req.group, url: this.target(req.url), fields };
    this.state.notices.push(notice);
    if (req.scenarios.has('notify_none') || this.state.settings.suppressNotifications) return;
    const copies = req.scenarios.has('dup_notify') ? 2 : 1;
    if (req.scenarios.has('out_of_order')) {
      const held = this.state.withheld.get(req.group) ?? [];
      if (!req.final) {
        this.state.withheld.set(req.group, [...held, notice]);
        return;
      }
      this.state.withheld.delete(req.group);
      for (const n of [notice, ...held]) this.deliverCopies(n, copies);
      return;
    }
    this.deliverCopies(notice, copies);
  }

  /** Delivers the last notice of a group again, `times` times; false when there is none. */
  resend(group: string, times: number): boolean {
    const last = [...this.state.notices].reverse().find((n) => n.group === group);
    if (last === undefined) return false;
    this.deliverCopies(last, times);
    return true;
  }

  /** Aborts the deliveries under way and their retries (on reset and close). */
  stop(): void {
    this.generation += 1;
    for (const c of this.inFlight) c.abort();
    this.inFlight.clear();
  }

  /** The shop-level URL, when set, wins over the request's. */
  private target(requestUrl: string | null): string | null {
    return this.state.settings.shopNotifyUrl ?? requestUrl;
  }

  /**
   * Schedules the attempts a restarted sandbox still owes (its outbox as saved): each when due,
   * at once when overdue.
   */
  resume(): void {
    for (const pending of this.state.outbox) this.schedule(pending);
  }

  private deliverCopies(notice: Notice, copies: number): void {
    if (notice.url === null) {
      this.log.info({ group: notice.group }, 'notification not sent: no notification URL');
      return;
    }
    for (let i = 0; i < copies; i += 1) this.enqueue(notice, 1, clock.date());
  }

  /** An attempt stays in the outbox until its result is recorded, so a shutdown never loses it. */
  private enqueue(notice: Notice, attempt: number, dueAt: Date): void {
    const pending: PendingDelivery = { notice, attempt, dueAt };
    this.state.outbox.push(pending);
    this.schedule(pending);
  }

  private schedule(pending: PendingDelivery): void {
    const generation = this.generation;
    this.scheduler.afterReal(pending.dueAt.getTime() - clock.now(), () =>
      this.attempt(pending, generation),
    );
  }

  private async attempt(pending: PendingDelivery, generation: number): Promise<void> {
    const { notice, attempt } = pending;
    if (notice.url === null) return;
    const url = new URL(notice.url);
    url.searchParams.set('type', notice.type);
    const format = this.state.settings.notifyFormat;
    const reply = await this.post(url, format, notice.fields);
    if (generation !== this.generation) return;
    this.state.outbox = this.state.outbox.filter((p) => p !== pending);
    const ok = reply.status === 200 && reply.text.trim() === 'OK';
    this.state.deliveries.push({
      time: clock.date().toISOString(),
      url: url.toString(),
      type: notice.type,
      format,
      body: notice.fields,
      attempt,
      status: reply.status,
      reply: reply.text.slice(0, 500),
      ok,
    });
    this.log.info(
      { group: notice.group, attempt, status: reply.status, ok },
      'notification delivery attempt',
    );
    if (!ok && attempt < MAX_ATTEMPTS) {
      const gapMs = RETRY_GAPS_S[attempt - 1] * 1000 * this.state.settings.timeScale;
      this.enqueue(notice, attempt + 1, new Date(clock.now() + gapMs));
    }
  }

  private post(url: URL, format: NotifyFormat, fields: Record<string, JsonOut>): Promise<Reply> {
    const body =
      format === 'json'
        ? toJsonText(fields)
        : new URLSearchParams(
            Object.entries(fields).map(([k, v]): [string, string] => [k, textOf(v)]),
          ).toString();
    const contentType =
      format === 'json' ? 'application/json' : 'application/x-www-form-urlencoded';
    const controller = new AbortController();
    this.inFlight.add(controller);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Reply>((resolve) => {
      const req = send(
        url,
        {
          method: 'POST',
          agent: false,
          signal: controller.signal,
          timeout: ATTEMPT_TIMEOUT_MS,
          headers: {
            'Content-Type': `${contentType}; charset=utf-8`,
            'Content-Length': Buffer.byteLength(body),
            Connection: 'close',
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? null,
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', (e) => resolve({ status: res.statusCode ?? null, text: e.message }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('time-out')));
      req.on('error', (e) => resolve({ status: null, text: e.message }));
      req.on('close', () => this.inFlight.delete(controller));
      req.end(body);
    });
  }
}
