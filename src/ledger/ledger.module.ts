import { Module } from '@nestjs/common';
import { ConsoleSessions } from '../console/console-sessions';
import { ReconciliationModule } from '../reconciliation/reconciliation.module';
import { LedgerConsoleController } from './ledger-console.controller';
import { LedgerController } from './ledger.controller';
import { LedgerService } from './ledger.service';

@Module({
  imports: [ReconciliationModule],
  controllers: [LedgerController, LedgerConsoleController],
  providers: [LedgerService, ConsoleSessions],
  exports: [LedgerService],
})
export class LedgerModule {}
