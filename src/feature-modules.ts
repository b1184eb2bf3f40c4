import type { Type } from '@nestjs/common';
import { RefundsModule } from './refunds/refunds.module';
import { PaywayConfigModule } from './payway-config/payway-config.module';
import { InvoicesModule } from './invoices/invoices.module';
import { NotificationsModule } from './notifications/notifications.module';
import { InvoiceReconciliationModule } from './reconciliation/invoice-reconciliation.module';

/** The business modules, each adding itself here (one line per module). */
export const FEATURE_MODULES: Type[] = [RefundsModule, InvoiceReconciliationModule, NotificationsModule, PaywayConfigModule, InvoicesModule];
