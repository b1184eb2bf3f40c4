/**
 * Settling a WAITING refund through invoice/get-refunds (the reconciler's work): atomic phases,
 * the listing through the refund rule, the watch's next check.
 */
import { EntityManager } from 'typeorm';
import { clock } from '../../common/clock';
import { GatewayFailure } from '../../common/errors';
import { runGatewayOperation, type CallAnswer } from '../../jobs/gateway-operation';
import { GatewayError, GatewayTransportError, type RefundRecord, toGatewayId } from '../../gateway';
import { RefundEntity } from '../refund.entity';
import { lockRefundById, transitionRefund } from '../refund-transitions';
import { nextRefundCheck, isFinalRefund, refundStatusFromGateway } from '../refund.state';
import type { WatchStep } from '../../common/watch';
import { raiseAttention, watchMayFlag, WATCH_ENDED_DETAIL } from '../../common/attention';
import { log, NO_CALL, type RefundDeps, type ReconcileOutcome } from './refund-deps';
import { settlementOf, processedAtOf } from '../refund-records';
import { applyRefundEvidence } from './apply-refund-evidence';

/**
 * Settles one claimed refund through invoice/get-refunds in atomic phases: read it, ask with
 * nothing held, then apply the listing under the invoice and refund locks. A submit still in
 * flight is left to finish; one whose lease ran out is settled by this listing, never re-sent.
 */
export async function reconcileRefund(d: RefundDeps, id: string): Promise<ReconcileOutcome> {
  const pre = await d.dataSource.getRepository(RefundEntity).findOneBy({ id });
  if (!pre) return 'done';
  if (isFinalRefund(pre.status)) {
    await d.dataSource.manager.update(
      RefundEntity,
      { id },
      { nextCheckAt: null, leaseUntil: null },
    );
    return 'done';
  }
  if (pre.callLeaseUntil !== null && pre.callLeaseUntil.getTime() > clock.now()) {
    await d.dataSource.manager.update(
      RefundEntity,
      { id },
      { nextCheckAt: pre.callLeaseUntil, leaseUntil: null },
    );
    return 'waiting';
  }
  const askedAt = clock.date();
  return runGatewayOperation(d.dataSource, {
    name: 'refund.reconcile',
    // The reconciler's job: its writes record no key.
    by: undefined,
    call: () => d.gateway.getRefunds(toGatewayId(pre.gatewayInvoiceId)),
    lock: (m) => lockRefundById(m, id),
    missing: (): ReconcileOutcome => 'done',
    record: (m, refund, answer) => listed(d, m, refund, answer, askedAt),
  });
}

/** Phase 3 of a reconciliation (the refund locked): the listing through the refund rule. */
async function listed(
  d: RefundDeps,
  m: EntityManager,
  refund: RefundEntity,
  answer: CallAnswer<RefundRecord[]>,
  askedAt: Date,
): Promise<ReconcileOutcome> {
  const id = refund.id;
  if (isFinalRefund(refund.status)) {
    await m.update(RefundEntity, { id }, { nextCheckAt: null, leaseUntil: null });
    return 'done';
  }
  if (refund.callLeaseUntil !== null && refund.callLeaseUntil.getTime() > clock.now())
    return (await reschedule(d, m, refund)) ? 'needs_attention' : 'waiting';
  if (refund.callLeaseUntil !== null) {
    // The submit's owner died: the row is free; this listing settles what happened.
    await m.update(RefundEntity, { id }, NO_CALL);
    if (refund.submitState === 'pending')
      await transitionRefund(
        m,
        refund,
        refund.status,
        'reconciliation',
        { reason: 'the create call was lost (its lease ran out)' },
        { submitState: 'unknown' },
      );
  }
  if (!answer.ok) {
    log.warn(
      { shopRefundId: refund.shopRefundId, err: (answer.err as Error).message },
      'invoice/get-refunds failed; will retry',
    );
    return (await reschedule(d, m, refund)) ? 'needs_attention' : 'gateway_error';
  }
  const outcome = await applyRefundListing(d, m, refund, answer.value, askedAt);
  if (isFinalRefund(refund.status)) return outcome;
  // Flagged or not, a WAITING refund stays watched: the flag is beside the status.
  const flagged = await reschedule(d, m, refund);
  return flagged || refund.needsAttention ? 'needs_attention' : outcome;
}

/** Applies what the gateway lists for one refund (locked by the caller), cause reconciliation. */
export async function applyRefundListing(
  d: RefundDeps,
  m: EntityManager,
  refund: RefundEntity,
  records: RefundRecord[],
  /** When the listing was asked for: a list asked before (or just after) the send proves nothing. */
  askedAt: Date,
): Promise<ReconcileOutcome> {
  const record = records.find((r) => r.shop_refund_id === refund.shopRefundId);
  if (!record) {
    const sentAt = (refund.callStartedAt ?? refund.createdAt).getTime();
    const graceOver = sentAt + d.config.refunds.reconcileGraceS * 1000 <= askedAt.getTime();
    if (!graceOver) return 'waiting';
    const v = await applyRefundEvidence(d, m, refund, { kind: 'absent' }, 'reconciliation', {
      call: 'invoice/get-refunds',
    });
    return v.kind === 'never_created' ? 'not_created' : 'waiting';
  }
  const v = await applyRefundEvidence(
    d,
    m,
    refund,
    {
      kind: 'record',
      status: refundStatusFromGateway(record.status),
      statusText: String(record.status),
      reported: { amount: record.amount, invoiceId: String(record.invoice_id) },
    },
    'reconciliation',
    { call: 'invoice/get-refunds' },
    {
      errorCode: record.error_code ?? null,
      ...settlementOf(record),
      // The gateway's processed_at (offset-less times in its +03:00), not our clock's.
      ...processedAtOf(record, d.config.gateway.nowOffset),
    },
  );
  if (v.kind === 'attention') return 'needs_attention';
  return isFinalRefund(refund.status) ? 'settled' : 'waiting';
}

/**
 * Next check with backoff; past the deadline flagged and checked every WATCH_INTERVAL_S; past
 * the watch end flagged `watch_ended` and no longer checked. Returns true when the watch
 * flagged it.
 */
async function reschedule(d: RefundDeps, m: EntityManager, refund: RefundEntity): Promise<boolean> {
  const attempts = refund.checkAttempts + 1;
  const next = nextCheck(d, refund, attempts);
  await m.update(
    RefundEntity,
    { id: refund.id },
    { checkAttempts: attempts, nextCheckAt: next.nextAt, leaseUntil: null },
  );
  refund.nextCheckAt = next.nextAt;
  if (next.flag === null || !watchMayFlag(refund, next.flag)) return false;
  await raiseAttention(
    m,
    { object: 'refund', id: refund.id, shopId: refund.shopRefundId, status: refund.status },
    next.flag,
    next.flag === 'deadline'
      ? 'still WAITING past its check deadline; still checked until the watch ends'
      : WATCH_ENDED_DETAIL,
    'reconciliation',
  );
  return true;
}

function nextCheck(d: RefundDeps, refund: RefundEntity, attempts: number): WatchStep {
  return nextRefundCheck({
    now: clock.date(),
    attempts,
    graceS: d.config.refunds.reconcileGraceS,
    deadline: refund.checkDeadline,
    createdAt: refund.createdAt,
    watch: d.config.watch,
  });
}

/** A WAITING refund within its watch always has a next check (a recheck never drops it). */
export async function keepWatched(
  d: RefundDeps,
  m: EntityManager,
  refund: RefundEntity,
): Promise<void> {
  if (isFinalRefund(refund.status) || refund.nextCheckAt !== null) return;
  const next = nextCheck(d, refund, refund.checkAttempts);
  if (next.nextAt === null) return;
  await m.update(RefundEntity, { id: refund.id }, { nextCheckAt: next.nextAt });
  refund.nextCheckAt = next.nextAt;
}

export async function getRefundsOrFail(d: RefundDeps, invoiceId: number): Promise<RefundRecord[]> {
  try {
    return await d.gateway.getRefunds(invoiceId);
  } catch (err) {
    if (err instanceof GatewayError)
      throw new GatewayFailure(
        'invoice/get-refunds failed',
        err.errorCode,
        err.gatewayMessage,
        err.fatal,
      );
    if (err instanceof GatewayTransportError)
      throw new GatewayFailure(`invoice/get-refunds failed: ${err.kind}`, null, null, null);
    throw err;
  }
}
