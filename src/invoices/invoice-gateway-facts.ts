import type { EntityManager } from 'typeorm';
import type { AuditCause } from '../audit/audit-event.entity';
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
  await takeHoldExpiry(m, inv, record, gatewayOffset);
  await compareRefunded(m, inv, record, cause);
}

/**
 * A hold's `expires_at` (invoice/check): shown as holdExpiresAt, warned of by the hold-expiry job,
 * and the moment the hold is asked about again (next_check_at no later than it).
 */
async function takeHoldExpiry(
  m: EntityManager,
  inv: InvoiceEntity,
  record: InvoiceRecord,
  gatewayOffset: string,
): Promise<void> {
  if (inv.status !== 'held') return;
  const expires = parseGatewayTime(record.expires_at, gatewayOffset);
  if (expires === null || inv.holdExpiresAt?.getTime() === expires.getTime()) return;
  const changes: Partial<Pick<InvoiceEntity, 'holdExpiresAt' | 'nextCheckAt'>> = {
    holdExpiresAt: expires,
  };
  if (inv.nextCheckAt === null || inv.nextCheckAt.getTime() > expires.getTime())
    changes.nextCheckAt = expires;
  await m.update(InvoiceEntity, { id: inv.id }, changes);
  Object.assign(inv, changes);
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
    `SELECT 1 FROM refunds WHERE invoice_pk = $1 AND (status = 'WAITING' OR submit_state IN ('pending', 'unknown')) LIMIT 1`,
    [inv.id],
  )) as unknown[];
  if (open.length > 0) return;
  await flagInvoiceForOperator(m, inv, 'refunded_amount_mismatch', cause, {
    gatewayRefunded: theirs.toString(),
    ourRefunded: inv.refundedAmount.toString(),
  });
}
