import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { raiseAttention, watchMayFlag, WATCH_ENDED_DETAIL } from '../common/attention';
import { KeyRing } from '../common/key-ring';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayError, GatewayService, type InvoiceCheckRecord } from '../gateway';
import { InvoiceEntity } from './invoice.entity';
import { absencePolicy, applyInvoiceEvidence } from './invoice-evidence';
import { applyCheckRecord } from './operations/apply-check-record';
import { FINAL_INVOICE_STATUSES, isFinal } from './invoice.state';
import { sqlList } from '../common/sql';
import { reconcileRuns } from '../metrics/metrics';
import { claimDue, forEachBounded, releaseLeases } from '../jobs/claim';
import { runGatewayOperation, type CallAnswer } from '../jobs/gateway-operation';
import { nextInvoiceCheck } from './invoice-reconciler.schedule';
import { watchRunsSql } from '../common/watch';
import { jobsStopping, scheduleJob } from '../jobs/schedule';
import { clock } from '../common/clock';

const log = logger.child({ component: 'invoice-reconciler' });

const BATCH = 100;
const CONCURRENCY = 8;
/** Longer than a gateway call can take; a crashed instance's claims are taken over after it. */
const LEASE_S = 120;

/**
 * Open invoices not yet scheduled get a first check and a deadline; a flagged one too while
 * its watch lasts (a flag never stops the watch). The predicate implies
 * ix_invoices_unscheduled's, so the statement never reads the (many) final invoices: the final
 * statuses are written into the text (sqlList), as the index's predicate must match them.
 */
export const SCHEDULE_OPEN_INVOICES_SQL = `UPDATE invoices
    SET next_check_at = created_at + make_interval(secs => $1),
        check_deadline = COALESCE(check_deadline, created_at + make_interval(secs => $2))
  WHERE next_check_at IS NULL AND processed_at IS NULL AND status NOT IN (${sqlList(FINAL_INVOICE_STATUSES)})
    AND (needs_attention = false OR ${watchRunsSql('created_at', '$3')})`;

type Outcome = 'settled' | 'rescheduled' | 'flagged' | 'never_created' | 'error';

/**
 * Settles invoices whose notification is late or lost: every non-final invoice gets a first check
 * time (created + grace) and a deadline (created + max age); due ones are claimed (FOR UPDATE SKIP
 * LOCKED + lease, so several instances never check one invoice twice per cycle), asked with
 * invoice/check and moved through the state machine; still open ones back off; past the
 * deadline they are flagged and still checked every WATCH_INTERVAL_S until WATCH_MAX_S after
 * their creation, then left to an operator.
 */
@Injectable()
export class InvoiceReconciler implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly scheduler: SchedulerRegistry,
    private readonly keys: KeyRing,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled) return;
    scheduleJob(
      this.scheduler,
      'invoice-reconciler',
      this.config.tickMs,
      () => this.runOnce(),
      log,
    );
  }

  /** One cycle: schedule new open invoices, claim the due ones, check each once. Returns how many were checked. */
  async runOnce(): Promise<number> {
    await this.scheduleOpenInvoices();
    const ids = await claimDue(this.dataSource, {
      table: 'invoices',
      dueColumn: 'next_check_at',
      limit: BATCH,
      leaseSeconds: LEASE_S,
      shopId: this.gateway.shopId('payment'),
    });
    const skipped = await forEachBounded(
      ids,
      CONCURRENCY,
      async (id) => {
        const outcome = await this.checkOne(id).catch((e: Error) => {
          log.error({ invoicePk: id, err: e.message }, 'invoice check failed');
          return 'error' as const;
        });
        reconcileRuns.inc({ kind: 'invoice', outcome });
      },
      () => jobsStopping(this.scheduler),
    );
    await releaseLeases(this.dataSource, 'invoices', skipped);
    return ids.length - skipped.length;
  }

  /** Open invoices without a check time get one (after the grace period) and a deadline. */
  private async scheduleOpenInvoices(): Promise<void> {
    const { reconcileGraceS, reconcileMaxS } = this.config.invoices;
    await this.dataSource.query(SCHEDULE_OPEN_INVOICES_SQL, [
      reconcileGraceS,
      reconcileMaxS,
      this.config.watch.maxS,
    ]);
  }

  /**
   * One invoice, in atomic phases: read it, ask invoice/check with nothing held, then apply the
   * answer through the invoice rule under a short row lock. A create or charge still in flight
   * (its call lease running) is left to finish; one whose lease ran out is settled by this
   * check, never sent again.
   */
  private async checkOne(id: string): Promise<Outcome> {
    const invoice = await this.dataSource.getRepository(InvoiceEntity).findOne({ where: { id } });
    if (invoice === null) return 'error';
    if (isFinal(invoice.status)) {
      await this.release(id);
      return 'settled';
    }
    if (invoice.callLeaseUntil !== null && invoice.callLeaseUntil.getTime() > clock.now()) {
      await this.dataSource.query(
        `UPDATE invoices SET next_check_at = $2, lease_until = NULL WHERE id = $1`,
        [id, invoice.callLeaseUntil],
      );
      return 'rescheduled';
    }
    return runGatewayOperation(this.dataSource, {
      name: 'invoice.reconcile',
      // The reconciler acts for nobody: its writes record no key.
      by: undefined,
      call: () => this.gateway.checkInvoice(invoice.shopOrderId),
      lock: (m) => m.findOne(InvoiceEntity, { where: { id }, lock: { mode: 'pessimistic_write' } }),
      missing: (): Outcome => 'error',
      record: (m, inv, answer) => this.checked(m, inv, answer),
    });
  }

  /** Phase 3 of a check (the row locked): the answer through the invoice rule, then what is next. */
  private async checked(
    m: EntityManager,
    inv: InvoiceEntity,
    answer: CallAnswer<InvoiceCheckRecord>,
  ): Promise<Outcome> {
    const id = inv.id;
    if (!answer.ok && !(answer.err instanceof GatewayError && answer.err.isAbsent)) {
      // Transport or gateway trouble: keep the invoice, ask again later.
      log.warn(
        { shopOrderId: inv.shopOrderId, err: (answer.err as Error).message },
        'invoice/check failed; will retry',
      );
      return this.reschedule(m, id);
    }
    const record = answer.ok ? answer.value : null;
    if (inv.callLeaseUntil !== null && inv.callLeaseUntil.getTime() > clock.now())
      return this.reschedule(m, id);
    if (inv.callLeaseUntil !== null) {
      // The call's owner died: this check settles it, and the row is free for the next call.
      await m.update(InvoiceEntity, { id }, { callOwner: null, callLeaseUntil: null });
    }
    const policy = absencePolicy(this.config);
    const verdict = record
      ? await applyCheckRecord(
          m,
          inv,
          record,
          'reconciliation',
          policy,
          this.keys,
          this.config.gateway.nowOffset,
        )
      : await applyInvoiceEvidence(
          m,
          inv,
          { kind: 'absent' },
          'reconciliation',
          { via: 'invoice/check', reason: 'absent' },
          policy,
        );
    if (verdict.kind === 'never_created')
      log.info({ shopOrderId: inv.shopOrderId }, 'invoice never reached the gateway; rejected');
    if (isFinal(inv.status)) {
      await this.release(id, m);
      return verdict.kind === 'never_created' ? 'never_created' : 'settled';
    }
    // Flagged or not, an open invoice stays watched: the flag is beside the status.
    return this.reschedule(m, id);
  }

  /**
   * Next check with backoff; past the deadline flagged and checked every WATCH_INTERVAL_S; past
   * the watch end flagged `watch_ended` and no longer checked. Clears the lease.
   */
  private async reschedule(m: EntityManager, id: string): Promise<Outcome> {
    const inv = await m.findOne(InvoiceEntity, { where: { id } });
    if (inv === null) return 'error';
    const next = nextInvoiceCheck({
      now: clock.date(),
      attempts: inv.checkAttempts,
      deadline: inv.checkDeadline,
      graceS: this.config.invoices.reconcileGraceS,
      createdAt: inv.createdAt,
      watch: this.config.watch,
    });
    await m.query(
      `UPDATE invoices SET check_attempts = check_attempts + 1, next_check_at = $2, lease_until = NULL WHERE id = $1`,
      [id, next.nextAt],
    );
    if (next.flag !== null && watchMayFlag(inv, next.flag))
      await raiseAttention(
        m,
        { object: 'invoice', id, shopId: inv.shopOrderId, status: inv.status },
        next.flag,
        next.flag === 'deadline'
          ? 'not final at its check deadline; still checked until the watch ends'
          : WATCH_ENDED_DETAIL,
        'reconciliation',
      );
    return next.flag !== null || inv.needsAttention ? 'flagged' : 'rescheduled';
  }

  private async release(id: string, m?: EntityManager): Promise<void> {
    await (m ?? this.dataSource.manager).query(
      `UPDATE invoices SET next_check_at = NULL, lease_until = NULL WHERE id = $1`,
      [id],
    );
  }
}
