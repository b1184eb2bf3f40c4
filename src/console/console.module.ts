import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { AttentionModule } from '../attention/attention.module';
import { BalanceModule } from '../balance/balance.module';
import { EventsModule } from '../events/events.module';
import { LedgerModule } from '../ledger/ledger.module';
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
import { addConsoleNotFound } from './console-not-found';
import { RefundsModule } from '../refunds/refunds.module';
import { ReconciliationModule } from '../reconciliation/reconciliation.module';
import { DisputesModule } from '../disputes/disputes.module';
import { PaymentLinksModule } from '../payment-links/payment-links.module';

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
    LedgerModule,
    ReconciliationModule,
    DisputesModule,
    PaymentLinksModule,
  ],
  controllers: CONSOLE_CONTROLLERS,
  providers: [ConsoleService, ConsoleSessions, ConsoleActions, ConsoleSavedSearches, ConsoleWeb],
})
export class ConsoleModule implements OnModuleInit {
  constructor(private readonly http: HttpAdapterHost) {}

  /** After the routes are registered, before the server listens: the console's 404 page. */
  onModuleInit(): void {
    // An application context without an HTTP server (a CLI) has no adapter.
    const adapter = this.http.httpAdapter as HttpAdapterHost['httpAdapter'] | undefined;
    if (adapter) addConsoleNotFound(adapter.getInstance<FastifyInstance>());
  }
}
