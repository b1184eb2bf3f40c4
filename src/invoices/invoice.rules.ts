/**
 * What a gateway message about an invoice means — the one rule every path uses (notification,
 * reconciler, `?refresh=true`, admin recheck), pure: a check added here holds everywhere.
 *
 * - A record that is not ours (shop, amount, currency) changes nothing and raises attention.
 * - A status the state machine allows is applied; an unknown word or number is never final.
 * - A final status contradicting our final one (success after rejected, ...) changes no money
 *   state and raises attention.
 * - "Absent" is evidence over time: an invoice whose create may not have reached the gateway
 *   becomes `rejected` only after `checks` absent answers spread over at least `windowS`.
 */
import { Amount } from '../common/money';
import { decideTransition, isFinal, type InvoiceStatus } from './invoice.state';

export interface InvoiceRuleFacts {
  status: InvoiceStatus;
  amount: Amount;
  currency: number;
  shopId: number;
  absentCount: number;
  firstAbsentAt: Date | null;
}

export type InvoiceEvidence =
  | {
      kind: 'record';
      /** Mapped status; null for a word or number we do not know. */
      status: InvoiceStatus | null;
      /** As received, for the audit trail and the reason texts. */
      statusText: string;
      shopId?: string;
      amount?: string;
      currency?: string;
    }
  | { kind: 'absent' };

export interface AbsencePolicy {
  checks: number;
  windowS: number;
  now: Date;
}

export type InvoiceVerdict =
  | { kind: 'apply'; to: InvoiceStatus }
  | { kind: 'ignore'; reason: string }
  | { kind: 'attention'; reason: 'mismatch' | 'contradiction'; detail: string }
  /** Absent once more, not yet conclusive: record it and ask again. */
  | { kind: 'absent'; count: number; firstAt: Date }
  /** Absent on enough checks over the window: the create never reached the gateway. */
  | { kind: 'never_created'; count: number };

/** Why reported facts are not those of our invoice, or null (amounts compared exactly). */
export function invoiceMismatch(
  inv: Pick<InvoiceRuleFacts, 'amount' | 'currency' | 'shopId'>,
  reported: { shopId?: string; amount?: string; currency?: string },
): string | null {
  if (reported.shopId !== undefined && reported.shopId !== String(inv.shopId))
    return `shop_id ${reported.shopId} is not this shop`;
  if (reported.amount !== undefined && reported.amount !== '') {
    let amount: Amount;
    try {
      amount = Amount.fromText(reported.amount);
    } catch {
      return 'shop_amount is not a decimal amount';
    }
    if (!amount.eq(inv.amount))
      return `shop_amount ${amount.toString()} differs from the invoice amount ${inv.amount.toString()}`;
  }
  if (
    reported.currency !== undefined &&
    reported.currency !== '' &&
    reported.currency !== String(inv.currency)
  )
    return `shop_currency ${reported.currency} differs from the invoice currency ${inv.currency}`;
  return null;
}

export function judgeInvoice(
  inv: InvoiceRuleFacts,
  ev: InvoiceEvidence,
  policy: AbsencePolicy,
): InvoiceVerdict {
  if (ev.kind === 'absent') {
    // Only a create whose answer we never had can be absent; anything else is asked again.
    if (inv.status !== 'pending' && inv.status !== 'unknown')
      return {
        kind: 'ignore',
        reason: `the gateway does not list an invoice that is ${inv.status}`,
      };
    const count = inv.absentCount + 1;
    const firstAt = inv.firstAbsentAt ?? policy.now;
    const spread = policy.now.getTime() - firstAt.getTime() >= policy.windowS * 1000;
    return count >= policy.checks && spread
      ? { kind: 'never_created', count }
      : { kind: 'absent', count, firstAt };
  }
  const mismatch = invoiceMismatch(inv, ev);
  if (mismatch !== null) return { kind: 'attention', reason: 'mismatch', detail: mismatch };
  if (ev.status === null)
    return { kind: 'ignore', reason: `status "${ev.statusText}" is not known: not final` };
  const decision = decideTransition(inv.status, ev.status);
  if (decision.allowed) return { kind: 'apply', to: ev.status };
  if (decision.reason === 'final' && isFinal(ev.status) && ev.status !== inv.status)
    return {
      kind: 'attention',
      reason: 'contradiction',
      detail: `the gateway says ${ev.status}, the invoice is ${inv.status}`,
    };
  return {
    kind: 'ignore',
    reason: `invoice is ${inv.status}, the gateway says ${ev.status} (${decision.reason})`,
  };
}
