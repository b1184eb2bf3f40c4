import { Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { keyIdOf } from '../common/auth.guard';
import { KeyRing } from '../common/key-ring';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway';
import { PaywayConfigService } from '../payway-config/payway-config.service';
import { PAYOUT_DEPS, type PayoutDeps } from './operations/payout-deps';
import { PayoutFingerprints } from './payout-fingerprint';
import type { PayoutEntity } from './payout.entity';
import { PayoutPoller } from './payout-poller';
import { AdminPayoutsController } from './admin-payouts.controller';
import { PayoutBatchRunner } from './payout-batch-runner';
import { PayoutBatchesController } from './payout-batches.controller';
import { PayoutBatchesService } from './payout-batches.service';
import { PayoutControls } from './payout-controls';
import { PayoutProcessor } from './payout-processor';
import { NoPayoutRowPreview, PAYOUT_ROW_PREVIEW } from './payout-row-preview';
import { PayoutsController } from './payouts.controller';
import { PayoutsService } from './payouts.service';

/**
 * Payouts. The control rules every path obeys (single creates, batch rows, the console,
 * approvals, the accept guard, the poller and its quiet rounds, recheck, reconciliation) live in
 * one place each, in payout.rules.ts (their SQL forms beside them, held to the same answers by
 * test/database/rules-sql.e2e-spec.ts):
 * - is this gateway record ours (and its status mapping): `readPayoutRecord`;
 * - the day a payout counts on against the caps (its send stamp's UTC day): `SEND_STAMP_SQL`,
 *   `capDayOf` / `capDaySql`, read by `COUNTS_ON_TODAY_SQL` and `capDayLockKey`
 *   (PayoutControls.holdSend and previewCaps);
 * - whether it holds a share of the caps and of a balance figure, and how much: `holdsShare` /
 *   `HOLDS_SHARE_SQL` (the statuses in src/domain/statuses.ts), `capShare` / `CAP_SHARE_SQL`;
 * - what is in flight for a balance figure: `IN_FLIGHT_SQL` (PayoutControls.holdBalance);
 * - when the watch starts (when it is sent): `watchStart` / `payoutWatchStep`; how long a
 *   just-sent payout is left alone: `firstPollGraceS`;
 * - which approvals count (keys still configured, never the creating key): `countingApprovals`,
 *   `mayApprove`; how many send it: `approvalsToSend`.
 * The operations are one file each under operations/, each taking the one PayoutDeps built here;
 * the payout's write path is payout-transitions.ts. No operation imports a facade back.
 */
/** The one dependencies object every payout operation takes (operations/payout-deps.ts). */
const payoutDeps = {
  provide: PAYOUT_DEPS,
  inject: [
    APP_CONFIG,
    getDataSourceToken(),
    GatewayService,
    PaywayConfigService,
    AuditService,
    KeyRing,
    PayoutControls,
  ],
  useFactory: (
    config: AppConfig,
    dataSource: DataSource,
    gateway: GatewayService,
    payways: PaywayConfigService,
    audit: AuditService,
    keys: KeyRing,
    controls: PayoutControls,
  ): PayoutDeps => ({
    config,
    dataSource,
    gateway,
    payways,
    audit,
    keys,
    controls,
    // Rows written before the key ring were fingerprinted under the payment shop's secret.
    fingerprints: new PayoutFingerprints(keys, config.gateway.shops.payment.secretKey),
    adminKeyIds: new Set(config.adminApiKeys.map(keyIdOf)),
    shopId: gateway.shopId('payout'),
    chosenByAnswer: new WeakSet<PayoutEntity>(),
  }),
};

@Module({
  controllers: [PayoutBatchesController, PayoutsController, AdminPayoutsController],
  providers: [
    payoutDeps,
    PayoutsService,
    PayoutProcessor,
    PayoutPoller,
    PayoutControls,
    PayoutBatchesService,
    PayoutBatchRunner,
    { provide: PAYOUT_ROW_PREVIEW, useClass: NoPayoutRowPreview },
  ],
  exports: [PayoutsService, PayoutProcessor, PayoutControls, PayoutBatchesService],
})
export class PayoutsModule {}
