import { Module } from '@nestjs/common';
import { InvoicesController } from './invoices.controller';
import { InvoicesService } from './invoices.service';
import { PayController } from './pay.controller';

@Module({
  controllers: [InvoicesController, PayController],
  providers: [InvoicesService],
  exports: [InvoicesService],
})
export class InvoicesModule {}
