import { Module } from '@nestjs/common';
import { AdminDisputesController } from './disputes.controller';
import { DisputesService } from './disputes.service';

@Module({
  controllers: [AdminDisputesController],
  providers: [DisputesService],
  exports: [DisputesService],
})
export class DisputesModule {}
