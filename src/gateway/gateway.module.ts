import { Global, Module } from '@nestjs/common';
import { APP_CONFIG } from '../config/config';
import type { AppConfig } from '../config/config';
import { Clock, GATEWAY_CLOCK, GatewayService } from './gateway.service';

/** Global: every feature module injects GatewayService; needs APP_CONFIG from ConfigModule. */
@Global()
@Module({
  providers: [
    {
      provide: GatewayService,
      useFactory: (config: AppConfig, clock?: Clock) => new GatewayService(config, clock),
      inject: [APP_CONFIG, { token: GATEWAY_CLOCK, optional: true }],
    },
  ],
  exports: [GatewayService],
})
export class GatewayModule {}
