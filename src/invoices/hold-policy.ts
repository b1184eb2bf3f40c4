import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DomainError } from '../common/errors';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { HOLD_POLICIES, type HoldPolicy } from '../config/types';
import { GatewayService } from '../gateway/gateway.service';
import { forEachBounded } from '../jobs/claim';
import { scheduleJob } from '../jobs/schedule';
import { InvoicesService } from './invoices.service';

const log = logger.child({ component: 'hold-policy' });

const BATCH = 50;
const CONCURRENCY = 4;

/** The policies that act on a hold by themselves (`notify` only warns: hold-expiry.ts). */
export const ACTING_POLICIES: readonly HoldPolicy[] = HOLD_POLICIES.filter((p) => p !== 'notify');

/**
 * Rule "which hold the policy acts on now": held, not final, its expiry known (a hold whose
 * expiry is not known is never acted on blindly), not lapsed yet, within the lead time of it, no
 * unhold of ours sent, and not acted on before; its policy (the invoice's `holdPolicy`, else
 * HOLD_POLICY, `$2`) one of `$3`. The rows are stamped in the same statement (committed before
 * any call), so across instances each hold is acted on once, and a crash after the stamp leaves
 * the hold to lapse as `notify` would rather than risk a second act.
 */
export const CLAIM_HOLD_POLICY_SQL = `UPDATE invoices SET hold_policy_at = clock_now()
  WHERE id IN (
    SELECT id FROM invoices
     WHERE status = 'held' AND processed_at IS NULL AND shop_id = $1
       AND hold_expires_at IS NOT NULL AND hold_policy_at IS NULL AND unhold_requested_at IS NULL
       AND COALESCE(request_facts->>'holdPolicy', $2) = ANY($3::varchar[])
       AND hold_expires_at > clock_now()
       AND hold_expires_at <= clock_now() + make_interval(secs => $4)
     ORDER BY hold_expires_at
     LIMIT $5
     FOR UPDATE SKIP LOCKED)
  RETURNING shop_order_id, COALESCE(request_facts->>'holdPolicy', $2) AS policy, hold_expires_at`;

/** When the next hold falls within its policy's lead time (the sandbox clock stops there). */
export const NEXT_HOLD_POLICY_AT_SQL = `SELECT min(hold_expires_at - make_interval(secs => $4)) AS at FROM invoices
  WHERE status = 'held' AND processed_at IS NULL AND shop_id = $1
    AND hold_expires_at IS NOT NULL AND hold_policy_at IS NULL AND unhold_requested_at IS NULL
    AND COALESCE(request_facts->>'holdPolicy', $2) = ANY($3::varchar[])
    AND hold_expires_at > clock_now()`;

/**
 * The hold policy (HOLD_POLICY, HOLD_POLICY_LEAD_S, an invoice's `holdPolicy`): at the lead
 * time before a hold's expiry the service charges or releases it by itself, through the same
 * charge and unhold operations a shop's request goes through (their claim, their rule), by
 * nobody's key and with the policy named in the audit trail.
 */
@Injectable()
export class HoldPolicyJob implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly invoices: InvoicesService,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled) return;
    scheduleJob(this.scheduler, 'hold-policy', this.config.tickMs, () => this.runOnce(), log);
  }

  private params(): unknown[] {
    return [
      this.gateway.shopId('payment'),
      this.config.holdPolicy.policy,
      ACTING_POLICIES,
      this.config.holdPolicy.leadS,
    ];
  }

  /** One tick: claims the holds due and acts on each. Returns how many were acted on. */
  async runOnce(): Promise<number> {
    const result = (await this.dataSource.query(CLAIM_HOLD_POLICY_SQL, [...this.params(), BATCH])) as [
      Array<{ shop_order_id: string; policy: 'charge' | 'release'; hold_expires_at: Date }>,
      number,
    ];
    const rows = result[0];
    await forEachBounded(rows, CONCURRENCY, async (r) => {
      try {
        const inv = await this.invoices.actOnHold(r.shop_order_id, r.policy, {
          holdExpiresAt: r.hold_expires_at.toISOString(),
          leadS: this.config.holdPolicy.leadS,
        });
        log.info({ shopOrderId: r.shop_order_id, policy: r.policy, status: inv.status }, 'hold policy acted');
      } catch (e) {
        // The operation recorded what it learnt (a refusal, an unknown outcome it settles by a check).
        if (!(e instanceof DomainError)) throw e;
        log.warn({ shopOrderId: r.shop_order_id, policy: r.policy, err: e.message }, 'hold policy act failed');
      }
    });
    return rows.length;
  }

  /** The next moment a hold's policy falls due, or null. */
  async nextDueAt(): Promise<Date | null> {
    const rows = (await this.dataSource.query(NEXT_HOLD_POLICY_AT_SQL, this.params())) as Array<{ at: Date | null }>;
    return rows[0]?.at ?? null;
  }
}
