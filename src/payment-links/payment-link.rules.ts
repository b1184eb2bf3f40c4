import type { FieldError } from '../common/errors';
import { Amount } from '../common/money';
import type { InputPayway, PaywayGroup } from '../gateway/gateway.types';
import { paymentLinkPublicId } from '../invoices/invoice.view';
import { checkPaymentAgainstPayway, isActive } from '../payway-config/payway-validation';
import { checkAmountBounds } from '../payway-config/amount-bounds';
import type { PaymentLinkEntity } from './payment-link.entity';
import { linkMayMove, type PaymentLinkStatus } from './payment-link.state';

/**
 * Every rule of a payment link, each a named function: its ids, what the payer may do with it
 * now, what its invoices make of it, and which payways it offers.
 */

const PUBLIC_ID = /^plink_([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/;

/** `plink_` and the row's uuid without dashes. */
export const publicIdOf = paymentLinkPublicId;

/** The row id a public id names; null for anything else (any other spelling is no link). */
export function rowIdOf(publicId: string): string | null {
  const m = PUBLIC_ID.exec(publicId);
  return m ? m.slice(1).join('-') : null;
}

/** The shopOrderId of attempt n of a link: `<link id>-<n>`. */
export function attemptOrderId(publicId: string, n: number): string {
  return `${publicId}-${n}`;
}

/** The payer page of a link. */
export function linkUrl(publicBaseUrl: string, publicId: string): string {
  return `${publicBaseUrl}/pay/l/${publicId}`;
}

/** An active link whose expiresAt has passed is expired, whether or not the job wrote it yet. */
export function isDue(link: Pick<PaymentLinkEntity, 'status' | 'expiresAt'>, now: number): boolean {
  return link.status === 'active' && link.expiresAt !== null && link.expiresAt.getTime() <= now;
}

/** The status a reader is shown: the stored one, `expired` once an active link's time is up. */
export function shownStatus(
  link: Pick<PaymentLinkEntity, 'status' | 'expiresAt'>,
  now: number,
): PaymentLinkStatus {
  return isDue(link, now) ? 'expired' : link.status;
}

/** Why a payer may not start a payment on the link now; null when they may. */
export function payRefusal(
  link: Pick<PaymentLinkEntity, 'status' | 'expiresAt'>,
  now: number,
): Exclude<PaymentLinkStatus, 'active'> | null {
  const status = shownStatus(link, now);
  return status === 'active' ? null : status;
}

/**
 * What an invoice's new status makes of its link: a single-use link is `paid` when its invoice
 * succeeds, whatever it became meanwhile (the payment happened: expiry or deactivation during the
 * payment does not undo it). A reusable link stays as it is.
 */
export function statusAfterInvoice(
  link: Pick<PaymentLinkEntity, 'status' | 'reusable'>,
  invoiceStatus: string,
): PaymentLinkStatus | null {
  if (link.reusable || invoiceStatus !== 'succeeded' || link.status === 'paid') return null;
  return 'paid';
}

/** May the link move from its status to `to`? (payment-link.state.ts, plus a late payment.) */
export function mayMove(from: PaymentLinkStatus, to: PaymentLinkStatus): boolean {
  return linkMayMove(from, to) || (to === 'paid' && from !== 'paid');
}

/** A time given for expiresAt must be in the future. */
export function expiryProblem(expiresAt: Date | null, now: number): FieldError | null {
  return expiresAt !== null && expiresAt.getTime() <= now
    ? { field: 'expiresAt', message: 'must be in the future' }
    : null;
}

/**
 * The payways a link offers when the shop names none: every active payway of the currency
 * whose bounds take the amount, in the configuration's order.
 */
export function defaultPayways(
  groups: readonly PaywayGroup<InputPayway>[],
  amount: Amount,
  currency: number,
): string[] {
  const out: string[] = [];
  for (const g of groups)
    for (const p of g.payways ?? [])
      if (
        isActive(p) &&
        Number(p.currency) === currency &&
        checkAmountBounds(amount, p) === null &&
        !out.includes(p.alias)
      )
        out.push(p.alias);
  return out;
}

/**
 * The payways a shop named, each checked as an invoice create checks its payway (known,
 * active, the amount within its bounds), errors named `payways[i]`; a payway named twice too.
 */
export function checkNamedPayways(
  named: readonly string[],
  found: ReadonlyArray<InputPayway | undefined>,
  amount: Amount,
  currency: number,
  suggestions: ReadonlyArray<readonly string[] | undefined>,
): FieldError[] {
  const errors: FieldError[] = [];
  named.forEach((alias, i) => {
    if (named.indexOf(alias) !== i) {
      errors.push({ field: `payways[${i}]`, message: `names ${alias} again` });
      return;
    }
    const problems = checkPaymentAgainstPayway(
      { payway: alias, amount, currency, checkExtras: false, suggestions: suggestions[i] },
      found[i],
    );
    for (const p of problems)
      errors.push({ field: p.field === 'payway' ? `payways[${i}]` : p.field, message: p.message });
  });
  return errors;
}
