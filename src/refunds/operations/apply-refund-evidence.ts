/** The refund rule (judgeRefund) on evidence about a locked refund, and what it says done. */
import { EntityManager } from 'typeorm';
import { clock } from '../../common/clock';
import type { AuditCause } from '../../audit/audit-event.entity';
import { RefundEntity } from '../refund.entity';
import { transitionRefund, type RefundExtra } from '../refund-transitions';
import {
  isFinalRefund,
  judgeRefund,
  type RefundEvidence,
  type RefundVerdict,
} from '../refund.state';
import { clearFlagOnFinal, raiseAttention } from '../../common/attention';
import { type RefundDeps } from './refund-deps';

/**
 * Runs the refund rule on evidence about a locked refund and does what it says in the caller's
 * transaction: status through the state machine, attention, or evidence of absence.
 */
export async function applyRefundEvidence(
  d: RefundDeps,
  m: EntityManager,
  refund: RefundEntity,
  ev: RefundEvidence,
  cause: AuditCause,
  details: Record<string, unknown>,
  extra: RefundExtra = {},
): Promise<RefundVerdict & { changed?: boolean }> {
  const verdict = judgeRefund(refund, ev, {
    checks: d.config.absentChecks,
    windowS: d.config.absentWindowS,
    now: clock.date(),
  });
  switch (verdict.kind) {
    case 'apply': {
      const changed = await transitionRefund(m, refund, verdict.to, cause, details, {
        submitState: acceptedState(refund),
        ...extra,
      });
      if (refund.absentCount > 0) {
        await m.update(RefundEntity, { id: refund.id }, { absentCount: 0, firstAbsentAt: null });
        Object.assign(refund, { absentCount: 0, firstAbsentAt: null });
      }
      await settleFlag(m, refund, details);
      return { ...verdict, changed };
    }
    case 'attention':
      await raiseAttention(
        m,
        { object: 'refund', id: refund.id, shopId: refund.shopRefundId, status: refund.status },
        verdict.reason,
        verdict.detail,
        cause,
      );
      refund.needsAttention = true;
      refund.attentionReason = `${verdict.reason}: ${verdict.detail}`;
      return verdict;
    case 'absent':
      await m.update(
        RefundEntity,
        { id: refund.id },
        { absentCount: verdict.count, firstAbsentAt: verdict.firstAt },
      );
      Object.assign(refund, { absentCount: verdict.count, firstAbsentAt: verdict.firstAt });
      return verdict;
    case 'never_created':
      await transitionRefund(
        m,
        refund,
        'FAILED',
        cause,
        { ...details, reason: 'not listed by invoice/get-refunds', absentChecks: verdict.count },
        { submitState: 'rejected' },
      );
      await settleFlag(m, refund, details);
      return verdict;
    default:
      return verdict;
  }
}

/** A final status applied by the rule clears a "not final yet" flag (cause gateway). */
async function settleFlag(
  m: EntityManager,
  refund: RefundEntity,
  details: Record<string, unknown>,
): Promise<void> {
  if (!isFinalRefund(refund.status)) return;
  await clearFlagOnFinal(
    m,
    { object: 'refund', id: refund.id, shopId: refund.shopRefundId, status: refund.status },
    refund,
    typeof details.call === 'string' ? { call: details.call } : {},
  );
}

/** Once the gateway reports a refund, it exists there: pending/unknown become accepted. */
export function acceptedState(refund: RefundEntity): RefundEntity['submitState'] {
  return refund.submitState === 'rejected' ? 'rejected' : 'accepted';
}
