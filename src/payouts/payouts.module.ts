import { Module } from '@nestjs/common';
import { PayoutPoller } from './payout-poller';
import { AdminPayoutsController } from './admin-payouts.controller';
import { PayoutProcessor } from './payout-processor';
import { PayoutsController } from './payouts.controller';
import { PayoutsService } from './payouts.service';

@Module({
  controllers: [PayoutsController, AdminPayoutsController],
  providers: [PayoutsService, PayoutProcessor, PayoutPoller],
  exports: [PayoutsService, PayoutProcessor],
})
export class PayoutsModule {}
