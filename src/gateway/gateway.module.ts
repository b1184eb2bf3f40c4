import { Global, Module } from '@nestjs/common';
import { GatewayService } from './gateway.service';

/** Global: every feature module injects GatewayService; needs APP_CONFIG from ConfigModule. */
@Global()
@Module({
  providers: [GatewayService],
  exports: [GatewayService],
})
export class GatewayModule {}
