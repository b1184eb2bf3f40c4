import { Module } from '@nestjs/common';
import { RefundReconciler } from './refund-reconciler';
import { AdminRefundsController, RefundsController } from './refunds.controller';
import { RefundsService } from './refunds.service';

@Module({
  controllers: [RefundsController, AdminRefundsController],
  providers: [RefundsService, RefundReconciler],
  exports: [RefundsService, RefundReconciler],
})
export class RefundsModule {}
