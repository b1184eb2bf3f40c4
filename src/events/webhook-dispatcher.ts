import { OWED_DELIVERIES_SQL } from './delivery-states';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import { AuditEventEntity } from '../audit/audit-event.entity';
import { crashPoint } from '../common/crash-point';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { type Tracing, tracingOf } from '../tracing/tracing';
import { shopWebhookDead, shopWebhookDeliveries, shopWebhookLag } from '../metrics/metrics';
import { forEachBounded } from '../jobs/claim';
import { scheduleJob, singleFlight } from '../jobs/schedule';
import { EventRelay } from './event-relay';
import { toShopEvent } from './event.view';
import { retryDelayS, webhookHeaders } from './webhook-signature';
import { describeDeliveryFailure } from './delivery-failure';
import { shownAddress } from '../common/redact';
import { clock } from '../common/clock';

/** Deliveries claimed per tick. */
const CLAIM_LIMIT = 200;

interface Claimed {
  id: string;
  event_id: string;
  url: string;
  created_at: Date;
  attempts: number;
}

type Attempt = { ok: true; status: number } | { ok: false; status: number | null; error: string };

/**
 * Pushes shop events to every SHOP_WEBHOOK_URL. Each tick relays new events into deliveries,
 * claims due deliveries with a lease (FOR UPDATE SKIP LOCKED, committed before any POST, so no
 * connection is held while a receiver answers), POSTs them signed, and writes the outcome only
 * if the claim is still ours. A delivery is claimed only when no earlier event of the same
 * object to the same address is still pending or failing: per object, event n+1 waits for n to
 * be acknowledged or dead. A crashed instance's claims are taken over when their lease runs out.
 * Addresses come from configuration only: a delivery to an address this instance does not have
 * in SHOP_WEBHOOK_URL is never claimed by it (it stays pending, listed for operators), so
 * instances with different lists during a deploy never send outside their own.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap {
  private readonly log = logger.child({ component: 'shop-webhooks' });
  readonly instanceId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly relay: EventRelay,
    private readonly scheduler: SchedulerRegistry,
  ) {
    this.tracing = tracingOf(config.otel);
  }

  /** Undefined unless OTEL_EXPORTER_OTLP_ENDPOINT is set (src/tracing). */
  private readonly tracing: Tracing | undefined;

  private get settings(): AppConfig['shopEvents'] {
    return this.config.shopEvents;
  }

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled || this.settings.urls.length === 0) return;
    scheduleJob(
      this.scheduler,
      'shop-webhooks',
      this.settings.tickMs,
      () => this.runOnce(),
      this.log,
    );
  }

  /** One tick; never overlaps itself. Returns how many deliveries were attempted. */
  readonly runOnce = singleFlight(() => this.tick());

  private async tick(): Promise<number> {
    await this.relay.run();
    const claimed = await this.claim();
    if (claimed.length > 0) {
      crashPoint('shop-event.deliver.after_claim');
      const events = await this.dataSource
        .getRepository(AuditEventEntity)
        .findBy({ id: In([...new Set(claimed.map((c) => c.event_id))]) });
      const byId = new Map(events.map((e) => [e.id, e]));
      await forEachBounded(claimed, this.settings.concurrency, async (d) => {
        try {
          await this.deliver(d, byId.get(d.event_id)!);
        } catch (err) {
          this.log.error(
            { deliveryId: d.id, err: (err as Error).message },
            'delivery not recorded; retried after the lease',
          );
        }
      });
    }
    await this.measureLag();
    return claimed.length;
  }

  private async claim(): Promise<Claimed[]> {
    const rows = (await this.dataSource.query(
      `UPDATE webhook_deliveries d SET lease_until = clock_now() + make_interval(secs => $2), lease_owner = $3
        WHERE d.id IN (
          SELECT c.id FROM webhook_deliveries c
           WHERE c.state IN (${OWED_DELIVERIES_SQL}) AND c.next_attempt_at <= clock_now()
             AND (c.lease_until IS NULL OR c.lease_until < clock_now())
             AND c.url = ANY($4::text[])
             AND NOT EXISTS (
               SELECT 1 FROM webhook_deliveries p
                WHERE p.url = c.url AND p.entity_type = c.entity_type AND p.entity_id = c.entity_id
                  AND p.sequence < c.sequence AND p.state IN (${OWED_DELIVERIES_SQL}))
           ORDER BY c.next_attempt_at, c.id
           LIMIT $1
           FOR UPDATE SKIP LOCKED)
        RETURNING d.id, d.event_id, d.url, d.created_at, d.attempts`,
      [CLAIM_LIMIT, this.settings.leaseS, this.instanceId, this.settings.urls],
    )) as [Claimed[], number];
    return rows[0];
  }

  private async deliver(d: Claimed, event: AuditEventEntity): Promise<void> {
    if (event.data === null) {
      // Pruned by the feed's retention (which waits for this instance's open deliveries; this
      // one is another instance's address list): nothing left to send, so it ends here.
      await this.dataSource.query(
        `UPDATE webhook_deliveries SET state = 'dead', last_error = 'event pruned by retention',
                lease_until = NULL, lease_owner = NULL, updated_at = clock_now()
          WHERE id = $1 AND lease_owner = $2`,
        [d.id, this.instanceId],
      );
      shopWebhookDeliveries.inc({ result: 'dead' });
      return;
    }
    const body = JSON.stringify(toShopEvent(event));
    // Tracing on: a client span per attempt, its traceparent sent with the event; a child of the
    // request that recorded the event, when one did (its trace goes on to the shop).
    const span = this.tracing?.startSpan(
      'shop webhook delivery',
      'client',
      event.traceParent ?? undefined,
      {
        'event.id': event.publicId,
        'event.type': event.type ?? undefined,
        'delivery.attempt': d.attempts + 1,
        'url.host': hostOf(d.url),
      },
    );
    const attempt = await this.post(d.url, event.publicId, body, span?.traceparent);
    span?.end(attempt.ok ? undefined : attempt.error);
    if (attempt.ok) {
      await this.dataSource.query(
        `UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, last_status = $3, last_error = NULL,
                delivered_at = clock_now(), lease_until = NULL, lease_owner = NULL, updated_at = clock_now()
          WHERE id = $1 AND lease_owner = $2`,
        [d.id, this.instanceId, attempt.status],
      );
      shopWebhookDeliveries.inc({ result: 'delivered' });
      return;
    }
    const delayS = retryDelayS(
      d.attempts + 1,
      this.settings.retryBaseS,
      this.settings.retryMaxIntervalS,
    );
    const dead =
      clock.now() + delayS * 1000 > d.created_at.getTime() + this.settings.retryForS * 1000;
    await this.dataSource.query(
      `UPDATE webhook_deliveries SET state = $3, attempts = attempts + 1, last_status = $4, last_error = $5,
              next_attempt_at = clock_now() + make_interval(secs => $6), lease_until = NULL, lease_owner = NULL, updated_at = clock_now()
        WHERE id = $1 AND lease_owner = $2`,
      [d.id, this.instanceId, dead ? 'dead' : 'failed', attempt.status, attempt.error, delayS],
    );
    shopWebhookDeliveries.inc({ result: dead ? 'dead' : 'failed' });
    // One line per failed attempt, saying why, so a dead endpoint shows in the log at once.
    this.log.warn(
      {
        eventId: event.publicId,
        url: shownAddress(d.url),
        attempt: d.attempts + 1,
        cause: attempt.error,
        nextAttemptInS: dead ? null : delayS,
      },
      'shop event delivery failed',
    );
    if (dead) {
      shopWebhookDead.inc();
      this.log.error(
        { eventId: event.publicId, url: shownAddress(d.url), attempts: d.attempts + 1 },
        'shop event delivery dead: retry window over',
      );
    }
  }

  /** One POST; redirects are not followed (the address list is the only place events go). */
  private async post(
    url: string,
    id: string,
    body: string,
    traceparent?: string,
  ): Promise<Attempt> {
    const headers: Record<string, string> = webhookHeaders(this.settings.secret!, id, body);
    if (traceparent !== undefined) headers.traceparent = traceparent;
    try {
      const res = await fetch(url, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'piastrix-orchestrator-webhooks',
          ...headers,
        },
        redirect: 'manual',
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
      return { ok: false, status: res.status, error: `HTTP ${res.status}` };
    } catch (err) {
      return {
        ok: false,
        status: null,
        error: describeDeliveryFailure(err, this.settings.timeoutMs),
      };
    }
  }

  private async measureLag(): Promise<void> {
    const [row] = (await this.dataSource.query(
      `SELECT COALESCE(EXTRACT(EPOCH FROM clock_now() - MIN(e.created_at)), 0)::float8 AS lag
         FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE d.state IN (${OWED_DELIVERIES_SQL})`,
    )) as Array<{ lag: number }>;
    shopWebhookLag.set(row.lag);
  }
}

/** The host an event goes to, for a span (never the path or query, which may hold a token). */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid';
  }
}
