/** A verified `type=refund` notification applied to the stored refund through the refund rule. */
import { EntityManager } from 'typeorm';
import { type ApplyOutcome } from '../../notifications/notification-appliers';
import { statusEffectOf } from '../../notifications/notification.rules';
import { RefundEntity } from '../refund.entity';
import { lockRefundById } from '../refund-transitions';
import { refundStatusFromGateway } from '../refund.state';
import { type RefundDeps } from './refund-deps';
import { intOrNull } from '../refund-records';
import { applyRefundEvidence } from './apply-refund-evidence';

/** Applies a verified `type=refund` notification inside the webhook's transaction. */
export async function applyRefundNotification(
  d: RefundDeps,
  manager: EntityManager,
  fields: Record<string, string>,
): Promise<ApplyOutcome> {
  const shopRefundId = fields.shop_refund_id;
  const base = { shopRefundId, shopOrderId: fields.shop_order_id };
  const rejected = (shopOrderId: string | undefined, outcome: string): ApplyOutcome => ({
    shopRefundId,
    shopOrderId,
    status: 'rejected',
    outcome,
    statusEffect: 'not_applied',
  });
  if (!shopRefundId) return rejected(base.shopOrderId, 'no shop_refund_id');
  if (fields.shop_id !== String(d.shopId))
    return rejected(base.shopOrderId, `shop_id ${fields.shop_id} is not ours`);
  const found = await manager.findOne(RefundEntity, {
    where: { shopId: d.shopId, shopRefundId },
  });
  if (!found) return rejected(base.shopOrderId, `unknown refund ${shopRefundId}`);
  const refund = await lockRefundById(manager, found.id);
  if (!refund) return rejected(base.shopOrderId, `unknown refund ${shopRefundId}`);
  const result = { shopRefundId, shopOrderId: refund.shopOrderId };
  if (fields.shop_order_id !== undefined && fields.shop_order_id !== refund.shopOrderId)
    return rejected(
      refund.shopOrderId,
      `does not match the stored refund: shop_order_id ${fields.shop_order_id} is not ${refund.shopOrderId}`,
    );
  const from = refund.status;
  const status = refundStatusFromGateway(fields.status);
  const verdict = await applyRefundEvidence(
    d,
    manager,
    refund,
    {
      kind: 'record',
      status,
      statusText: String(fields.status),
      reported: { shopId: fields.shop_id, amount: fields.amount, invoiceId: fields.invoice_id },
    },
    'notification',
    { errorCode: fields.error_code ?? null },
    { errorCode: intOrNull(fields.error_code) },
  );
  const changed = verdict.kind === 'apply' && (from !== refund.status || verdict.changed === true);
  const statusEffect = statusEffectOf(
    verdict.kind === 'apply' ? { kind: 'apply', changed } : verdict,
    status !== null,
  );
  switch (verdict.kind) {
    case 'attention':
      return verdict.reason === 'mismatch'
        ? rejected(refund.shopOrderId, `does not match the stored refund: ${verdict.detail}`)
        : {
            ...result,
            status: 'stale',
            outcome: `not applied, needs attention: ${verdict.detail}`,
            statusEffect,
          };
    case 'apply':
      return changed
        ? {
            ...result,
            status: 'applied',
            outcome: `refund ${from} -> ${verdict.to}`,
            statusEffect,
          }
        : {
            ...result,
            status: 'stale',
            outcome: `refund already ${from}: ${verdict.to} changes nothing`,
            statusEffect,
          };
    case 'ignore':
      // An unknown word cannot be applied (kept for an operator); a late status is stale.
      return {
        ...result,
        status: status === null ? 'rejected' : 'stale',
        outcome: verdict.reason,
        statusEffect,
      };
    default:
      return { ...result, status: 'stale', outcome: 'nothing to change', statusEffect };
  }
}
