import { Module } from '@nestjs/common';
import { InvoicesModule } from '../invoices/invoices.module';
import { PayLinkController } from './pay-link.controller';
import { PaymentLinksController } from './payment-links.controller';
import { PaymentLinksService } from './payment-links.service';

/** Payment links: the shop's API, the payer's page, and the link following its invoices. */
@Module({
  // A link's attempt is made by the invoice create itself.
  imports: [InvoicesModule],
  controllers: [PaymentLinksController, PayLinkController],
  providers: [PaymentLinksService],
  exports: [PaymentLinksService],
})
export class PaymentLinksModule {}
