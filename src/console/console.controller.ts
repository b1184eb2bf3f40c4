import { ConsoleDisputesController } from './controllers/console-disputes.controller';
import { ConsoleHomeController } from './controllers/console-home.controller';
import { ConsoleLinksController } from './controllers/console-links.controller';
import { ConsoleInboxController } from './controllers/console-inbox.controller';
import { ConsoleLedgerController } from './controllers/console-ledger.controller';
import { ConsoleObjectsController } from './controllers/console-objects.controller';
import { ConsoleQueuesController } from './controllers/console-queues.controller';
import { ConsoleReportsController } from './controllers/console-reports.controller';

/**
 * The operators' console: server-rendered pages behind a sign-in with an admin key. The global
 * bearer guard does not apply (@Public); every page checks the console session itself
 * (console-web.ts), and every state-changing form carries the session's CSRF token. One
 * controller per group of pages, in controllers/.
 */
export const CONSOLE_CONTROLLERS = [
  ConsoleHomeController,
  ConsoleQueuesController,
  ConsoleInboxController,
  ConsoleReportsController,
  ConsoleObjectsController,
  ConsoleLedgerController,
  ConsoleDisputesController,
  ConsoleLinksController,
];

/** Every console route, outside the /api/v1 prefix (bootstrap.ts excludes exactly these). */
export const CONSOLE_ROUTES = [
  'admin',
  'admin/login',
  'admin/logout',
  'admin/ui/console.css',
  'admin/ui/attention',
  'admin/ui/approvals',
  'admin/ui/approvals/:id/:decision',
  'admin/ui/batches',
  'admin/ui/batches/:batchId',
  'admin/ui/notifications',
  'admin/ui/notifications/:id/replay',
  'admin/ui/deliveries',
  'admin/ui/deliveries/redeliver',
  'admin/ui/deliveries/drop-unconfigured',
  'admin/ui/events/:id/redeliver',
  'admin/ui/sessions',
  'admin/ui/sessions/revoke',
  'admin/ui/payment-tokens',
  'admin/ui/payment-tokens/:id/revoke',
  'admin/ui/payment-links',
  'admin/ui/payment-links/:id',
  'admin/ui/payment-links/:id/deactivate',
  'admin/ui/reports/daily',
  'admin/ui/reports/daily.csv',
  'admin/ui/lists/:list/export.csv',
  'admin/ui/lists/:list/searches',
  'admin/ui/lists/:list/searches/:id/delete',
  'admin/ui/invoices/:id/refund',
  'admin/ui/invoices/:id/disputes',
  'admin/ui/disputes',
  'admin/ui/disputes/:id/resolve',
  'admin/ui/ledger/entries.csv',
  'admin/ui/ledger/adjustments',
  'admin/ui/reconciliations/:id/items.csv',
  'admin/ui/:kind',
  'admin/ui/:kind/:id',
  'admin/ui/:kind/:id/resolve',
];
