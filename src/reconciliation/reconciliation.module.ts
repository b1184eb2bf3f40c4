import { Module } from '@nestjs/common';
import { GatewayModule } from '../gateway/gateway.module';
import { ReconciliationController } from './reconciliation.controller';
import { ReconciliationJob } from './reconciliation-job';
import { ReconciliationService } from './reconciliation.service';

@Module({
  imports: [GatewayModule],
  controllers: [ReconciliationController],
  providers: [ReconciliationService, ReconciliationJob],
  exports: [ReconciliationService],
})
export class ReconciliationModule {}
