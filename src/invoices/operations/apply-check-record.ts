import type { EntityManager } from 'typeorm';
import type { AuditCause } from '../../audit/audit-event.entity';
import type { KeyRing } from '../../common/key-ring';
import { Amount } from '../../common/money';
import type { InvoiceCheckRecord, InvoiceRecord } from '../../gateway/gateway.types';
import { InvoiceEntity } from '../invoice.entity';
import { applyInvoiceEvidence, evidenceOfCheck } from '../invoice-evidence';
import { applyGatewayFacts, priceFactsOf, takePriceFacts } from '../invoice-gateway-facts';
import type { AbsencePolicy, InvoiceVerdict } from '../invoice.rules';
import { storePaymentToken, tokenInfoFromCheck } from '../payment-token';

/**
 * What a gateway invoice record (invoice/check, and the answers of charge and unhold) writes on
 * a locked invoice, through the one invoice rule (judgeInvoice, in applyInvoiceEvidence): used
 * by a refresh, a recheck, a charge or unhold and the reconciler alike.
 */

/** Facts of an invoice record (check, charge) that fill what we did not know yet. */
export async function applyRecordFacts(
  m: EntityManager,
  inv: InvoiceEntity,
  r: InvoiceRecord,
): Promise<void> {
  const changes: {
    paymentId?: string;
    shopAmount?: Amount;
  } = {};
  if (r.payment_id !== undefined && r.payment_id !== null) changes.paymentId = String(r.payment_id);
  if (typeof r.shop_amount === 'string') changes.shopAmount = Amount.fromText(r.shop_amount);
  if (Object.keys(changes).length > 0) {
    await m.update(InvoiceEntity, { id: inv.id }, changes);
    Object.assign(inv, changes);
  }
  await takePriceFacts(m, inv, priceFactsOf(r));
}

/**
 * Applies an invoice/check record to a locked invoice: its facts, its status through the state
 * machine, and the payment token when one was issued. Used by reconciliation too.
 */
export async function applyCheckRecord(
  m: EntityManager,
  inv: InvoiceEntity,
  record: InvoiceCheckRecord,
  cause: AuditCause,
  policy: AbsencePolicy,
  keys: KeyRing,
  gatewayOffset: string,
): Promise<InvoiceVerdict> {
  const n = typeof record.status === 'number' ? record.status : Number(record.status);
  const verdict = await applyInvoiceEvidence(
    m,
    inv,
    evidenceOfCheck(record),
    cause,
    { call: 'invoice/check', gatewayStatus: n },
    policy,
    // The price goes with the status change, so the change's event carries it.
    { gatewayStatus: n, ...priceFactsOf(record) },
  );
  // A record that is not ours teaches nothing about our invoice.
  if (verdict.kind === 'attention' && verdict.reason === 'mismatch') return verdict;
  await applyRecordFacts(m, inv, record);
  await applyGatewayFacts(m, inv, record, gatewayOffset, cause);
  const token = record.payment_token;
  if (
    token &&
    typeof token.token === 'string' &&
    token.token !== '' &&
    (token.status === undefined || token.status === 'SUCCESS')
  ) {
    await storePaymentToken(m, inv, token.token, tokenInfoFromCheck(token), keys);
  }
  return verdict;
}
