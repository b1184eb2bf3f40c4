import { Module } from '@nestjs/common';
import { PaymentTokensController } from './payment-tokens.controller';
import { PaymentTokensService } from './payment-tokens.service';

@Module({
  controllers: [PaymentTokensController],
  providers: [PaymentTokensService],
  exports: [PaymentTokensService],
})
export class PaymentTokensModule {}
