import type { EntityManager } from 'typeorm';
import type { AuditCause } from '../audit/audit-event.entity';
import { raiseAttention } from '../common/attention';
import type { InvoiceEntity } from './invoice.entity';

/**
 * Flags an invoice for an operator: the gateway's record disagrees with ours. Goes through the
 * one attention raise (flag + reason, error log, metric, audit entry in the caller's
 * transaction); nothing else is changed: the operator decides. A flag already up is left as it
 * is, so a recurring check does not repeat it.
 */
export async function flagInvoiceForOperator(
  m: EntityManager,
  inv: InvoiceEntity,
  reason: string,
  cause: AuditCause,
  details: Record<string, unknown> = {},
): Promise<void> {
  if (inv.needsAttention) return;
  const detail = `${reason} ${JSON.stringify(details)}`;
  await raiseAttention(
    m,
    { object: 'invoice', id: inv.id, shopId: inv.shopOrderId, status: inv.status },
    'mismatch',
    detail,
    cause,
    { check: reason, ...details },
  );
  inv.needsAttention = true;
  inv.attentionReason = `mismatch: ${detail}`;
}
