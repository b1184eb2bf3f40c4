import { Module } from '@nestjs/common';
import { InvoicesModule } from '../invoices/invoices.module';
import { RefundReconciler } from './refund-reconciler';
import { AdminRefundsController, RefundsController } from './refunds.controller';
import { RefundsService } from './refunds.service';

@Module({
  // A refund of an invoice whose gateway id is not known yet first asks invoice/check.
  imports: [InvoicesModule],
  controllers: [RefundsController, AdminRefundsController],
  providers: [RefundsService, RefundReconciler],
  exports: [RefundsService, RefundReconciler],
})
export class RefundsModule {}
