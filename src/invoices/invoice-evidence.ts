import type { EntityManager } from 'typeorm';
import type { AuditCause } from '../audit/audit-event.entity';
import { clearFlagOnFinal, raiseAttention } from '../common/attention';
import type { AppConfig } from '../config/config';
import type { InvoiceRecord } from '../gateway/gateway.types';
import { InvoiceEntity } from './invoice.entity';
import {
  judgeInvoice,
  type AbsencePolicy,
  type InvoiceEvidence,
  type InvoiceVerdict,
} from './invoice.rules';
import { isFinal, statusFromGatewayNumber } from './invoice.state';
import { transitionInvoice, type TransitionExtra } from './invoice-transitions';

export function absencePolicy(config: AppConfig): AbsencePolicy {
  return { checks: config.absentChecks, windowS: config.absentWindowS, now: new Date() };
}

/**
 * An invoice/check record (also a charge answer) as evidence for the rule. Its shop_id is not
 * compared: the record answers our own signed request (test-server recordings carry another
 * shop's number); amount and currency are.
 */
export function evidenceOfCheck(record: InvoiceRecord): InvoiceEvidence {
  const n = typeof record.status === 'number' ? record.status : Number(record.status);
  return {
    kind: 'record',
    status: statusFromGatewayNumber(n),
    statusText: String(record.status),
    ...(record.shop_amount !== undefined && record.shop_amount !== null
      ? { amount: String(record.shop_amount) }
      : {}),
    ...(record.shop_currency !== undefined && record.shop_currency !== null
      ? { currency: String(record.shop_currency) }
      : {}),
  };
}

/**
 * Runs the invoice rule on evidence about a locked invoice and does what it says, inside the
 * caller's transaction: a status through the state machine (audited), attention (audited, no
 * money state changed), or one more piece of evidence of absence. A final status clears a flag
 * that only said "not final yet" (cause `gateway`, issue #22).
 */
export async function applyInvoiceEvidence(
  m: EntityManager,
  inv: InvoiceEntity,
  ev: InvoiceEvidence,
  cause: AuditCause,
  details: Record<string, unknown>,
  policy: AbsencePolicy,
  extra: TransitionExtra = {},
): Promise<InvoiceVerdict> {
  const verdict = judgeInvoice(inv, ev, policy);
  switch (verdict.kind) {
    case 'apply':
      await transitionInvoice(m, inv, verdict.to, cause, details, extra);
      if (inv.absentCount > 0) await forgetAbsence(m, inv);
      await settleFlag(m, inv, details);
      break;
    case 'attention':
      await raiseAttention(
        m,
        { object: 'invoice', id: inv.id, shopId: inv.shopOrderId, status: inv.status },
        verdict.reason,
        verdict.detail,
        cause,
      );
      inv.needsAttention = true;
      inv.attentionReason = `${verdict.reason}: ${verdict.detail}`;
      break;
    case 'absent':
      await m.update(
        InvoiceEntity,
        { id: inv.id },
        { absentCount: verdict.count, firstAbsentAt: verdict.firstAt },
      );
      Object.assign(inv, { absentCount: verdict.count, firstAbsentAt: verdict.firstAt });
      break;
    case 'never_created':
      await transitionInvoice(
        m,
        inv,
        'rejected',
        cause,
        { ...details, reason: 'absent', absentChecks: verdict.count },
        { gatewayMessage: 'The gateway does not know this invoice: it was never created' },
      );
      await settleFlag(m, inv, details);
      break;
    case 'ignore':
      break;
  }
  return verdict;
}

async function settleFlag(
  m: EntityManager,
  inv: InvoiceEntity,
  details: Record<string, unknown>,
): Promise<void> {
  if (!isFinal(inv.status)) return;
  await clearFlagOnFinal(
    m,
    { object: 'invoice', id: inv.id, shopId: inv.shopOrderId, status: inv.status },
    inv,
    typeof details.call === 'string' ? { call: details.call } : {},
  );
}

async function forgetAbsence(m: EntityManager, inv: InvoiceEntity): Promise<void> {
  await m.update(InvoiceEntity, { id: inv.id }, { absentCount: 0, firstAbsentAt: null });
  Object.assign(inv, { absentCount: 0, firstAbsentAt: null });
}
