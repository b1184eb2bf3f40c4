import { Module } from '@nestjs/common';
import { AttentionModule } from '../attention/attention.module';
import { BalanceModule } from '../balance/balance.module';
import { EventsModule } from '../events/events.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { PayoutsModule } from '../payouts/payouts.module';
import { ReportsModule } from '../reports/reports.module';
import { PaymentTokensModule } from '../payment-tokens/payment-tokens.module';
import { ConsoleActions } from './console-actions';
import { CONSOLE_CONTROLLERS } from './console.controller';
import { ConsoleService } from './console.service';
import { ConsoleSessions } from './console-sessions';
import { ConsoleSavedSearches } from './console-saved-searches';
import { ConsoleWeb } from './console-web';
import { RefundsModule } from '../refunds/refunds.module';

/** The operators' console at /admin: server-rendered pages, sessions, CSRF-protected actions. */
@Module({
  imports: [
    NotificationsModule,
    BalanceModule,
    AttentionModule,
    EventsModule,
    ReportsModule,
    PayoutsModule,
    PaymentTokensModule,
    RefundsModule,
  ],
  controllers: CONSOLE_CONTROLLERS,
  providers: [ConsoleService, ConsoleSessions, ConsoleActions, ConsoleSavedSearches, ConsoleWeb],
})
export class ConsoleModule {}
