import { Module } from '@nestjs/common';
import { PayoutPoller } from './payout-poller';
import { AdminPayoutsController } from './admin-payouts.controller';
import { PayoutControls } from './payout-controls';
import { PayoutProcessor } from './payout-processor';
import { PayoutsController } from './payouts.controller';
import { PayoutsService } from './payouts.service';

@Module({
  controllers: [PayoutsController, AdminPayoutsController],
  providers: [PayoutsService, PayoutProcessor, PayoutPoller, PayoutControls],
  exports: [PayoutsService, PayoutProcessor, PayoutControls],
})
export class PayoutsModule {}
