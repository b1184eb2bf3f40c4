import { Module } from '@nestjs/common';
import { InvoicesModule } from '../invoices/invoices.module';
import { PayoutsModule } from '../payouts/payouts.module';
import { RefundsModule } from '../refunds/refunds.module';
import { AttentionController } from './attention.controller';
import { AttentionService } from './attention.service';

/** The operator's attention queue and its resolutions (imports the domains; none imports it). */
@Module({
  imports: [InvoicesModule, RefundsModule, PayoutsModule],
  controllers: [AttentionController],
  providers: [AttentionService],
  exports: [AttentionService],
})
export class AttentionModule {}
