/**
 * What a gateway message about an invoice means — the one rule every path uses (notification,
 * reconciler, `?refresh=true`, admin recheck), pure: a check added here holds everywhere.
 *
 * - A record that is not ours (shop, amount, currency) changes nothing and raises attention.
 * - A status the state machine allows is applied; an unknown word or number is never final.
 * - A final status contradicting our final one (success after rejected, ...) changes no money
 *   state and raises attention.
 * - A record's `payment_id` is the gateway's invoice id: it fills an unknown one; a different one
 *   means the record is not ours. A `held` or `succeeded` invoice without it is flagged.
 * - After our invoice/unhold, a 6 is the released hold (`unheld`), and a 6 for an `unheld`
 *   invoice is the same outcome; a 4 answering an unhold is applied and flagged.
 * - Without an unhold of ours, a 6 for a hold whose known `expires_at` has passed is the hold
 *   that lapsed (`expired`, final); a 6 for an `expired` invoice is the same outcome.
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
  /** The gateway's invoice id, once known. */
  invoiceId?: string | null;
  /** When our invoice/unhold was sent (null: never). */
  unholdRequestedAt?: Date | null;
  /** The hold's `expires_at` once a record carried it (null: not known). */
  holdExpiresAt?: Date | null;
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
      /** The record's `payment_id`: the gateway's invoice id. */
      invoiceId?: string;
    }
  | { kind: 'absent' };

export interface AbsencePolicy {
  checks: number;
  windowS: number;
  now: Date;
}

/** Attention raised beside what the verdict does (the record itself is ours and applied). */
export interface InvoiceFlag {
  reason: 'missing_invoice_id' | 'charge_on_unhold';
  detail: string;
}

/** Facts a record of ours teaches besides its status: an invoice id we did not know. */
interface Learnt {
  invoiceId?: string;
}

export type InvoiceVerdict =
  | ({ kind: 'apply'; to: InvoiceStatus; flag?: InvoiceFlag } & Learnt)
  | ({ kind: 'ignore'; reason: string; flag?: InvoiceFlag } & Learnt)
  | ({ kind: 'attention'; reason: 'mismatch' | 'contradiction'; detail: string } & Learnt)
  /** Absent once more, not yet conclusive: record it and ask again. */
  | { kind: 'absent'; count: number; firstAt: Date }
  /** Absent on enough checks over the window: the create never reached the gateway. */
  | { kind: 'never_created'; count: number };

/** Why reported facts are not those of our invoice, or null (amounts compared exactly). */
export function invoiceMismatch(
  inv: Pick<InvoiceRuleFacts, 'amount' | 'currency' | 'shopId' | 'invoiceId'>,
  reported: { shopId?: string; amount?: string; currency?: string; invoiceId?: string },
): string | null {
  if (reported.shopId !== undefined && reported.shopId !== String(inv.shopId))
    return `shop_id ${reported.shopId} is not this shop`;
  if (
    reported.invoiceId !== undefined &&
    inv.invoiceId !== undefined &&
    inv.invoiceId !== null &&
    reported.invoiceId !== inv.invoiceId
  )
    return `payment_id ${reported.invoiceId} is not this invoice's gateway id ${inv.invoiceId}`;
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
    // Only a create whose answer we never had can be absent. An invoice the gateway answered
    // (it gave us its id) and now does not know is a disagreement an operator must see (a reset
    // or restored gateway, another environment's database): never silently kept as it is.
    if (inv.status !== 'pending' && inv.status !== 'unknown')
      return inv.invoiceId !== undefined && inv.invoiceId !== null
        ? {
            kind: 'attention',
            reason: 'mismatch',
            detail: `the gateway has no record of invoice ${inv.invoiceId}, which is ${inv.status} here`,
          }
        : {
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
  const known = inv.invoiceId ?? null;
  const learnt = known === null && ev.invoiceId !== undefined ? { invoiceId: ev.invoiceId } : {};
  const verdict = { ...judgeStatus(inv, ev, policy.now), ...learnt };
  if (verdict.kind === 'attention' || verdict.flag !== undefined) return verdict;
  const after = verdict.kind === 'apply' ? verdict.to : inv.status;
  if (!lacksInvoiceId(after, known ?? learnt.invoiceId ?? null)) return verdict;
  return {
    ...verdict,
    flag: {
      reason: 'missing_invoice_id',
      detail: `the invoice is ${after} and the gateway's invoice id is not known`,
    },
  };
}

/**
 * A held invoice cannot be charged or released, nor a paid one refunded, without the gateway's
 * invoice id: such an invoice needs an operator until a record brings the id.
 */
export function lacksInvoiceId(status: InvoiceStatus, invoiceId: string | null): boolean {
  return invoiceId === null && (status === 'held' || status === 'succeeded');
}

/**
 * Is the gateway's status the released hold? It has no status of its own for one and reports 6
 * (`rejected`): for an invoice `unheld` already, or `held` with our invoice/unhold sent. Used by
 * every path that reads a gateway status against an invoice (judgeStatus, reconciliation).
 */
export function releasedHold(
  inv: Pick<InvoiceRuleFacts, 'status' | 'unholdRequestedAt'>,
  gatewayStatus: InvoiceStatus | null,
): boolean {
  if (gatewayStatus !== 'rejected') return false;
  return (
    inv.status === 'unheld' || (inv.status === 'held' && (inv.unholdRequestedAt ?? null) !== null)
  );
}

/**
 * Is the gateway's 6 the hold that lapsed? For an invoice `expired` already, or `held` without
 * an unhold of ours whose known `expires_at` is reached (`now`, the service's clock). A hold
 * whose expiry is not known is never taken as lapsed.
 */
export function lapsedHold(
  inv: Pick<InvoiceRuleFacts, 'status' | 'unholdRequestedAt' | 'holdExpiresAt'>,
  gatewayStatus: InvoiceStatus | null,
  now: Date,
): boolean {
  if (gatewayStatus !== 'rejected') return false;
  if (inv.status === 'expired') return true;
  const expires = inv.holdExpiresAt ?? null;
  return (
    inv.status === 'held' &&
    (inv.unholdRequestedAt ?? null) === null &&
    expires !== null &&
    now.getTime() >= expires.getTime()
  );
}

/** What a gateway 6 means for a hold (`unheld`, `expired`), or the reported status itself. */
export function holdReading(
  inv: Pick<InvoiceRuleFacts, 'status' | 'unholdRequestedAt' | 'holdExpiresAt'>,
  gatewayStatus: InvoiceStatus | null,
  now: Date,
): InvoiceStatus | null {
  if (releasedHold(inv, gatewayStatus)) return 'unheld';
  if (lapsedHold(inv, gatewayStatus, now)) return 'expired';
  return gatewayStatus;
}

/** What the record's status means for the invoice (the record is ours). */
function judgeStatus(
  inv: InvoiceRuleFacts,
  ev: Extract<InvoiceEvidence, { kind: 'record' }>,
  now: Date,
): Extract<InvoiceVerdict, { kind: 'apply' | 'ignore' | 'attention' }> {
  if (ev.status === null)
    return { kind: 'ignore', reason: `status "${ev.statusText}" is not known: not final` };
  const unholdSent = (inv.unholdRequestedAt ?? null) !== null;
  // The gateway has no status of its own for a released hold: it reports 6.
  if (releasedHold(inv, ev.status))
    return inv.status === 'unheld'
      ? { kind: 'ignore', reason: 'the released hold is reported as 6: the same outcome' }
      : { kind: 'apply', to: 'unheld' };
  // Nor for a hold that lapsed at its expiry: 6 again.
  if (lapsedHold(inv, ev.status, now))
    return inv.status === 'expired'
      ? { kind: 'ignore', reason: 'the lapsed hold is reported as 6: the same outcome' }
      : { kind: 'apply', to: 'expired' };
  // Charged although we asked for a release (a charge still queued at the gateway): the
  // gateway's books say paid, so the invoice says so too, and an operator must look.
  if (ev.status === 'succeeded' && inv.status === 'held' && unholdSent)
    return {
      kind: 'apply',
      to: 'succeeded',
      flag: {
        reason: 'charge_on_unhold',
        detail: 'the gateway charged the hold after our invoice/unhold was sent',
      },
    };
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
