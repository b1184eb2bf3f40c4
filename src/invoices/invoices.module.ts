import { Module } from '@nestjs/common';
import { HoldPolicyJob } from './hold-policy';
import { InvoicesController } from './invoices.controller';
import { InvoicesService } from './invoices.service';
import { PayController } from './pay.controller';

@Module({
  controllers: [InvoicesController, PayController],
  providers: [InvoicesService, HoldPolicyJob],
  exports: [InvoicesService, HoldPolicyJob],
})
export class InvoicesModule {}
