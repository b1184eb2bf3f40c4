import { Global, Module } from '@nestjs/common';
import { PaywayConfigController } from './payway-config.controller';
import { PaywayConfigService } from './payway-config.service';

/** Global: invoices and payouts validate against the payway configuration. */
@Global()
@Module({
  controllers: [PaywayConfigController],
  providers: [PaywayConfigService],
  exports: [PaywayConfigService],
})
export class PaywayConfigModule {}
