import { Module } from '@nestjs/common';
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
 * approvals, the accept guard, the poller and its quiet rounds, recheck) live in one place each,
 * in payout.rules.ts:
 * - is this gateway record ours (and its status mapping): `readPayoutRecord`;
 * - the day a payout counts on against the caps (the day it is sent): `COUNTS_ON_TODAY_SQL`,
 *   `capDayLockKey` (read by PayoutControls.holdSend and previewCaps);
 * - what is in flight for a balance figure: `IN_FLIGHT_SQL` (PayoutControls.holdBalance);
 * - when the watch starts (when it is sent): `watchStart` / `payoutWatchStep`;
 * - which approvals count (keys still configured, never the creating key): `countingApprovals`,
 *   `mayApprove`.
 * The operations themselves are one file each under operations/.
 */
@Module({
  controllers: [PayoutBatchesController, PayoutsController, AdminPayoutsController],
  providers: [
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
