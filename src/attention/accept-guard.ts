/**
 * The guard on an operator's `accept`, pure: an operator acts, never overwrites, and a
 * correction needs the gateway's word. Accept settles flagged objects only, never while a
 * gateway call on the object is in flight, and only with the gateway's evidence for the chosen
 * status: its own record of this object (read through the object's record rule) says it, or,
 * for `failed`/`rejected` of a payout, the gateway answered that it has no such payout or holds
 * another payout's record under our id (proof ours was never created there). A gateway that
 * cannot be reached, has no record of an invoice or refund it may have, or says anything else
 * is no evidence: the object stays as it is.
 */
import type { AttentionObject } from '../common/attention';
import { GatewayError, GatewayTransportError } from '../gateway/gateway.errors';
import {
  isFinal as isFinalInvoice,
  statusFromGatewayNumber as invoiceStatusOf,
} from '../invoices/invoice.state';
import type { PayoutStatusConfig } from '../config/config';
import type { PayoutRecord } from '../gateway/gateway.types';
import { readPayoutRecord, type StoredPayoutFacts } from '../payouts/payout.rules';
import { isFinal as isFinalPayout } from '../payouts/payout.state';
import { isFinalRefund, refundStatusFromGateway } from '../refunds/refund.state';

/** What the gateway said when asked just now, in the object's own status words. */
export type GatewayView =
  | {
      kind: 'record';
      /** The mapped status; null for a word or number the service does not know (not final). */
      status: string | null;
      final: boolean;
      /** As named to the operator, e.g. `held (8)`. */
      text: string;
    }
  | { kind: 'absent' }
  /**
   * A record under our id that is not this object's (payout.rules.ts `readPayoutRecord`): proof
   * that ours was never created there, never agreement with any status.
   */
  | { kind: 'foreign'; text: string }
  /** Provably never sent (a refund of an invoice the gateway never gave an id): no record can exist. */
  | { kind: 'never_sent' }
  | { kind: 'unreachable'; detail: string };

export type GatewayAnswer = 'agrees' | 'absent' | 'foreign' | 'never_sent';

export type AcceptDecision =
  | { kind: 'apply'; gatewayAnswer: GatewayAnswer }
  /** `gatewaySays`: what the gateway answered; `missing`: the evidence the choice would need. */
  | { kind: 'refuse'; gatewaySays: string; missing: string };

export type AcceptBlock = 'not_flagged' | 'in_flight' | null;

/** Whether accept may even ask: the object is flagged and no gateway call on it is in flight. */
export function acceptBlocked(
  row: { needsAttention: boolean; callLeaseUntil: Date | null },
  now: Date,
): AcceptBlock {
  if (!row.needsAttention) return 'not_flagged';
  if (row.callLeaseUntil !== null && row.callLeaseUntil.getTime() > now.getTime())
    return 'in_flight';
  return null;
}

/**
 * May the operator's `chosen` final status be recorded, given the gateway's fresh answer?
 * `current`: the object's status now. A released hold has no status of its own at the gateway
 * (gateway-facts.md): its 6 agrees with `unheld` for an invoice that was held.
 */
export function decideAccept(
  object: AttentionObject,
  chosen: string,
  current: string,
  view: GatewayView,
): AcceptDecision {
  const saying = `the gateway's record of this ${object} saying ${chosen}`;
  const moneyless = chosen === 'failed' || chosen === 'rejected';
  switch (view.kind) {
    case 'absent':
      // "No such payout" after every create it may have had: nothing was paid.
      if (object === 'payout' && moneyless) return { kind: 'apply', gatewayAnswer: 'absent' };
      return {
        kind: 'refuse',
        gatewaySays: 'no record of it',
        missing: `${saying} (it has no record of one it may have)`,
      };
    case 'foreign':
      // Ours was never created there: only a status that moved no money fits.
      if (object === 'payout' && moneyless) return { kind: 'apply', gatewayAnswer: 'foreign' };
      return { kind: 'refuse', gatewaySays: view.text, missing: `${saying} (it holds ${view.text})` };
    case 'never_sent':
      if (chosen === 'FAILED' || moneyless) return { kind: 'apply', gatewayAnswer: 'never_sent' };
      return {
        kind: 'refuse',
        gatewaySays: 'no record of it (never sent)',
        missing: `${saying} (it was never sent there)`,
      };
    case 'unreachable':
      return {
        kind: 'refuse',
        gatewaySays: `no answer (${view.detail})`,
        missing: `${saying} (the gateway could not be asked: ${view.detail}; try again when it answers)`,
      };
    case 'record':
      break;
  }
  if (!view.final)
    return {
      kind: 'refuse',
      gatewaySays: view.text,
      missing: `${saying} (it says ${view.text}, not final)`,
    };
  if (view.status === chosen) return { kind: 'apply', gatewayAnswer: 'agrees' };
  const releasedHold =
    object === 'invoice' &&
    chosen === 'unheld' &&
    view.status === 'rejected' &&
    (current === 'held' || current === 'unheld');
  if (releasedHold) return { kind: 'apply', gatewayAnswer: 'agrees' };
  return { kind: 'refuse', gatewaySays: view.text, missing: `${saying} (it says ${view.text})` };
}

/** An invoice's gateway number (invoice/check), as the invoice rule maps it. */
export function invoiceView(status: unknown): GatewayView {
  const n = typeof status === 'number' ? status : Number(status);
  const mapped = Number.isInteger(n) ? invoiceStatusOf(n) : null;
  return {
    kind: 'record',
    status: mapped,
    final: mapped !== null && isFinalInvoice(mapped),
    text: `${mapped ?? 'an unknown status'} (${String(status)})`,
  };
}

/** A refund's status word from invoice/get-refunds. */
export function refundView(status: unknown): GatewayView {
  const mapped = refundStatusFromGateway(status);
  return {
    kind: 'record',
    status: mapped,
    final: mapped !== null && isFinalRefund(mapped),
    text: mapped ?? `an unknown status (${String(status)})`,
  };
}

/**
 * A payout's gateway record: first whether it is this payout's at all (the same rule as Recheck
 * and the poller), then its number mapped through configuration (PAYOUT_STATUS_*).
 */
export function payoutView(
  stored: StoredPayoutFacts,
  record: PayoutRecord,
  cfg: PayoutStatusConfig,
): GatewayView {
  const reading = readPayoutRecord(stored, record, cfg);
  if (!reading.ours)
    return { kind: 'foreign', text: `a record that is not this payout's (${reading.reason})` };
  const { mapped } = reading;
  const status = record.status;
  return {
    kind: 'record',
    status: mapped.status,
    final: isFinalPayout(mapped.status),
    text: `${mapped.known ? mapped.status : 'an unknown status'} (${status})`,
  };
}

/** A failed status question: "no such object" is absence; any other failure is unreachable. */
export function viewOfFailure(err: unknown): GatewayView {
  if (err instanceof GatewayError && err.isAbsent) return { kind: 'absent' };
  if (err instanceof GatewayError || err instanceof GatewayTransportError)
    return { kind: 'unreachable', detail: err.message };
  throw err;
}
