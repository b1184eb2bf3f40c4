import type { EntityManager } from 'typeorm';
import type { AuditCause } from '../audit/audit-event.entity';
import { clearFlagOnFinal, raiseAttention, resolveAttention } from '../common/attention';
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
import { clock } from '../common/clock';

export function absencePolicy(config: AppConfig): AbsencePolicy {
  return { checks: config.absentChecks, windowS: config.absentWindowS, now: clock.date() };
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
    ...(invoiceIdOf(record.payment_id) !== undefined
      ? { invoiceId: invoiceIdOf(record.payment_id) }
      : {}),
  };
}

/**
 * Rule "is this `payment_id` an id": the gateway's invoice id as text when it is a whole number
 * of at most 19 digits (a bigint's), spaces around it dropped; otherwise none. Records and
 * notifications alike.
 */
export function invoiceIdOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text = String(value).trim();
  return /^\d{1,19}$/.test(text) ? text : undefined;
}

/**
 * Runs the invoice rule on evidence about a locked invoice and does what it says, inside the
 * caller's transaction: a status through the state machine (audited), attention (audited, no
 * money state changed), or one more piece of evidence of absence. A final status clears a flag
 * that only said "not final yet" (cause `gateway`).
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
  const learnt = 'invoiceId' in verdict ? verdict.invoiceId : undefined;
  switch (verdict.kind) {
    case 'apply':
      await transitionInvoice(m, inv, verdict.to, cause, details, {
        ...extra,
        ...(learnt !== undefined ? { invoiceId: learnt } : {}),
      });
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
  await applyInvoiceIdFacts(m, inv, verdict, cause);
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

/**
 * The invoice id a record taught (written unless the transition wrote it), and the flag beside
 * the verdict: `charge_on_unhold` always; `missing_invoice_id` unless another flag is up already.
 * A `missing_invoice_id` flag goes by itself once the id is known (cause gateway).
 */
async function applyInvoiceIdFacts(
  m: EntityManager,
  inv: InvoiceEntity,
  verdict: InvoiceVerdict,
  cause: AuditCause,
): Promise<void> {
  const learnt = 'invoiceId' in verdict ? verdict.invoiceId : undefined;
  if (learnt !== undefined && inv.invoiceId !== learnt) {
    await m.update(InvoiceEntity, { id: inv.id }, { invoiceId: learnt });
    inv.invoiceId = learnt;
  }
  const target = {
    object: 'invoice',
    id: inv.id,
    shopId: inv.shopOrderId,
    status: inv.status,
  } as const;
  const flag = verdict.kind === 'apply' || verdict.kind === 'ignore' ? verdict.flag : undefined;
  if (flag !== undefined && (flag.reason === 'charge_on_unhold' || !inv.needsAttention)) {
    if (await raiseAttention(m, target, flag.reason, flag.detail, cause)) {
      inv.needsAttention = true;
      inv.attentionReason = `${flag.reason}: ${flag.detail}`;
    }
    return;
  }
  if (learnt !== undefined && inv.attentionReason?.startsWith('missing_invoice_id:')) {
    await resolveAttention(
      m,
      target,
      { reason: 'missing_invoice_id', invoiceId: learnt },
      'gateway',
    );
    Object.assign(inv, { needsAttention: false, attentionReason: null, attentionAt: null });
  }
}

async function forgetAbsence(m: EntityManager, inv: InvoiceEntity): Promise<void> {
  await m.update(InvoiceEntity, { id: inv.id }, { absentCount: 0, firstAbsentAt: null });
  Object.assign(inv, { absentCount: 0, firstAbsentAt: null });
}
