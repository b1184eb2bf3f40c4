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
