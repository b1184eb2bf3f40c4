import type { EntityManager } from 'typeorm';
import {
  openRefundSql,
  REFUND_FINAL_STATUSES,
  REFUND_OPEN_SUBMIT_STATES,
} from '../domain/statuses';
import type { AuditCause } from '../audit/audit-event.entity';
import { AuditService } from '../audit/audit.service';
import { Amount } from '../common/money';
import { parseGatewayTime } from '../gateway/gateway-time';
import type { InvoiceRecord } from '../gateway/gateway.types';
import { flagInvoiceForOperator } from './invoice-attention';
import { InvoiceEntity } from './invoice.entity';
import { isFinal } from './invoice.state';

/**
 * What an invoice record (invoice/check, invoice/charge) says that we take the gateway's word
 * for, applied after its status: when the payment was processed, when a hold lapses, and how
 * much the gateway counts as refunded. Called with the row locked, in the transaction that applies the record.
 */
export async function applyGatewayFacts(
  m: EntityManager,
  inv: InvoiceEntity,
  record: InvoiceRecord,
  gatewayOffset: string,
  cause: AuditCause,
): Promise<void> {
  await takeProcessedAt(m, inv, record, gatewayOffset);
  await takeHoldExpiry(m, inv, record, gatewayOffset, cause);
  await compareRefunded(m, inv, record, cause);
}

const audit = new AuditService();

/**
 * A hold's `expires_at` (invoice/check, or any record that carries it): shown as holdExpiresAt,
 * warned of by the hold-expiry job, acted on by the hold policy, and the moment the hold is asked
 * about again (next_check_at no later than it). Learning it, or a change of it, is the shop event
 * `invoice.hold_updated`.
 */
async function takeHoldExpiry(
  m: EntityManager,
  inv: InvoiceEntity,
  record: InvoiceRecord,
  gatewayOffset: string,
  cause: AuditCause,
): Promise<void> {
  if (inv.status !== 'held') return;
  const expires = parseGatewayTime(record.expires_at, gatewayOffset);
  if (expires === null || inv.holdExpiresAt?.getTime() === expires.getTime()) return;
  const before = inv.holdExpiresAt;
  const changes: Partial<Pick<InvoiceEntity, 'holdExpiresAt' | 'nextCheckAt'>> = {
    holdExpiresAt: expires,
  };
  if (inv.nextCheckAt === null || inv.nextCheckAt.getTime() > expires.getTime())
    changes.nextCheckAt = expires;
  await m.update(InvoiceEntity, { id: inv.id }, changes);
  Object.assign(inv, changes);
  await audit.record(m, {
    entityType: 'invoice',
    entityId: inv.shopOrderId,
    rowId: inv.id,
    fromStatus: 'held',
    toStatus: 'held',
    cause,
    notice: 'hold_updated',
    details: { holdExpiresAt: expires.toISOString(), previous: before ? before.toISOString() : null },
  });
}

/** A final invoice's processedAt is the gateway's `processed`, not the moment we learnt of it. */
async function takeProcessedAt(
  m: EntityManager,
  inv: InvoiceEntity,
  record: InvoiceRecord,
  gatewayOffset: string,
): Promise<void> {
  if (!isFinal(inv.status)) return;
  const processed = parseGatewayTime(record.processed, gatewayOffset);
  if (processed === null || inv.processedAt?.getTime() === processed.getTime()) return;
  await m.update(InvoiceEntity, { id: inv.id }, { processedAt: processed });
  inv.processedAt = processed;
}

/**
 * `shop_refund` (the refunded sum the gateway knows) against our sum of successful refunds. A
 * refund still waiting for its outcome may explain a difference, so the comparison waits until
 * none is open. A difference is never written over our sum: it is flagged for an operator.
 */
async function compareRefunded(
  m: EntityManager,
  inv: InvoiceEntity,
  record: InvoiceRecord,
  cause: AuditCause,
): Promise<void> {
  const text = record.shop_refund;
  if (text === undefined || text === null) return;
  let theirs: Amount;
  try {
    theirs = Amount.fromText(String(text));
  } catch {
    return;
  }
  if (theirs.eq(inv.refundedAmount)) return;
  const open = (await m.query(
    // A refund still open (src/domain/statuses.ts isOpenRefund).
    `SELECT 1 FROM refunds WHERE invoice_pk = $1 AND ${openRefundSql('$2', '$3')} LIMIT 1`,
    [inv.id, REFUND_FINAL_STATUSES, REFUND_OPEN_SUBMIT_STATES],
  )) as unknown[];
  if (open.length > 0) return;
  await flagInvoiceForOperator(m, inv, 'refunded_amount_mismatch', cause, {
    gatewayRefunded: theirs.toString(),
    ourRefunded: inv.refundedAmount.toString(),
  });
}

/** The payer's fee-inclusive price and its currency, as a record or notification carries them. */
export type PriceFacts = Partial<Pick<InvoiceEntity, 'payerPrice' | 'clientPrice' | 'psCurrency'>>;

/**
 * `client_price` (what the payer pays, fees included, in the payway's currency) and
 * `ps_currency` of an invoice record (JSON: exact text from the lossless parse, and a number) or
 * a notification (form fields: text). A part that is missing, zero or malformed is left out, so
 * it never overwrites what is known. The price is read as text, never through a float.
 */
export function priceFactsOf(r: { client_price?: unknown; ps_currency?: unknown }): PriceFacts {
  const facts: PriceFacts = {};
  const price = typeof r.client_price === 'string' ? r.client_price.trim() : undefined;
  if (Amount.isValid(price)) {
    const amount = Amount.parse(price);
    if (!amount.isZero()) {
      facts.payerPrice = amount;
      facts.clientPrice = amount;
    }
  }
  const currency = r.ps_currency;
  if (typeof currency === 'number' && Number.isInteger(currency) && currency > 0 && currency < 1000)
    facts.psCurrency = currency;
  else if (typeof currency === 'string' && /^[1-9]\d{0,2}$/.test(currency))
    facts.psCurrency = Number(currency);
  return facts;
}

/** Writes the price facts that differ from the row's (under the caller's row lock); true when any did. */
export async function takePriceFacts(
  m: EntityManager,
  inv: InvoiceEntity,
  facts: PriceFacts,
): Promise<boolean> {
  const changes: PriceFacts = {};
  if (facts.payerPrice && !(inv.payerPrice && sameDigits(inv.payerPrice, facts.payerPrice)))
    changes.payerPrice = facts.payerPrice;
  if (facts.clientPrice && !(inv.clientPrice && sameDigits(inv.clientPrice, facts.clientPrice)))
    changes.clientPrice = facts.clientPrice;
  if (facts.psCurrency !== undefined && inv.psCurrency !== facts.psCurrency)
    changes.psCurrency = facts.psCurrency;
  if (Object.keys(changes).length === 0) return false;
  await m.update(InvoiceEntity, { id: inv.id }, changes);
  Object.assign(inv, changes);
  return true;
}

/** Equal value and spelling: "1281.8" is rewritten as "1281.80" when the gateway says so. */
function sameDigits(a: Amount, b: Amount): boolean {
  return a.toString() === b.toString();
}
