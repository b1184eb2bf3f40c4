import type { Type } from '@nestjs/common';
import { PayoutsModule } from './payouts/payouts.module';
import { BalanceModule } from './balance/balance.module';
import { RefundsModule } from './refunds/refunds.module';
import { PaywayConfigModule } from './payway-config/payway-config.module';
import { InvoicesModule } from './invoices/invoices.module';
import { EventsModule } from './events/events.module';
import { NotificationsModule } from './notifications/notifications.module';
import { AttentionModule } from './attention/attention.module';
import { ConsoleModule } from './console/console.module';
import { InvoiceReconciliationModule } from './invoices/invoice-reconciliation.module';
import { ReportsModule } from './reports/reports.module';
import { PaymentTokensModule } from './payment-tokens/payment-tokens.module';
import { LedgerModule } from './ledger/ledger.module';
import { ReconciliationModule } from './reconciliation/reconciliation.module';
import { DisputesModule } from './disputes/disputes.module';
import { PaymentLinksModule } from './payment-links/payment-links.module';

/** The business modules, each adding itself here (one line per module). */
export const FEATURE_MODULES: Type[] = [PayoutsModule, BalanceModule, RefundsModule, InvoiceReconciliationModule, NotificationsModule, PaywayConfigModule, InvoicesModule, AttentionModule, ConsoleModule, EventsModule, ReportsModule, PaymentTokensModule, LedgerModule, ReconciliationModule, DisputesModule, PaymentLinksModule];
