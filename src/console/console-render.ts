import { clock } from '../common/clock';
import { Eta } from 'eta';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as fmt from './console-format';

/**
 * The console's templates (Eta, auto-escaping every interpolation) and its one stylesheet.
 * Beside this module in the build (`npm run build` copies them), under src/ when the ES-module
 * test runner runs the sources from the repository root.
 */
function viewsDir(): string {
  const candidates = [
    ...(typeof __dirname === 'string' ? [join(__dirname, 'views')] : []),
    resolve('src', 'console', 'views'),
  ];
  const found = candidates.find((d) => existsSync(join(d, 'layout.eta')));
  if (!found) throw new Error(`console templates not found (looked in ${candidates.join(', ')})`);
  return found;
}

let eta: Eta | undefined;
let css: string | undefined;

function engine(): Eta {
  eta ??= new Eta({ views: viewsDir(), autoEscape: true, cache: true });
  return eta;
}

export function stylesheet(): string {
  css ??= readFileSync(join(viewsDir(), 'console.css'), 'utf8');
  return css;
}

export interface PageData {
  title?: string;
  session?: { keyId: string; csrfToken: string } | null;
  active?: string;
  flash?: { kind: 'ok' | 'error'; text: string } | null;
  [key: string]: unknown;
}

export const NAV: Array<[string, string]> = [
  ['/admin', 'Overview'],
  ['/admin/ui/attention', 'Attention'],
  ['/admin/ui/approvals', 'Approvals'],
  ['/admin/ui/invoices', 'Invoices'],
  ['/admin/ui/refunds', 'Refunds'],
  ['/admin/ui/disputes', 'Disputes'],
  ['/admin/ui/payouts', 'Payouts'],
  ['/admin/ui/batches', 'Payout batches'],
  ['/admin/ui/payment-tokens', 'Payment tokens'],
  ['/admin/ui/payment-links', 'Payment links'],
  ['/admin/ui/notifications', 'Notifications'],
  ['/admin/ui/deliveries', 'Webhook deliveries'],
  ['/admin/ui/reports/daily', 'Daily report'],
  ['/admin/ui/ledger', 'Ledger'],
  ['/admin/ui/reconciliations', 'Reconciliations'],
  ['/admin/ui/sessions', 'Sessions'],
];

export function renderPage(view: string, data: PageData): string {
  // The sandbox clock moved (sandbox mode only): every page says so, with the moved time.
  const movedClock = clock.offsetSeconds() > 0 ? { now: clock.date().toISOString(), offsetSeconds: clock.offsetSeconds() } : null;
  return engine().render(view, { nav: NAV, flash: null, session: null, movedClock, ...data, fmt });
}
