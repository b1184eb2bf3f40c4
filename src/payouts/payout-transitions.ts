import type { EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { AuditCause } from '../audit/audit-event.entity';
import { ID_ONLY, updateWithEvent } from '../audit/event-write';
import { rememberForCommit } from '../audit/shop-event-snapshots';
import { registerSnapshotLoader, shopEventTypeOf } from '../audit/shop-events';
import {
  clearFlagOnFinal,
  raiseAttention,
  watchMayFlag,
  type AttentionReason,
} from '../common/attention';
import { clock } from '../common/clock';
import type { PayoutRecord, WithdrawCreateResult } from '../gateway/gateway.types';
import { toPayoutView } from './dto/payout.view';
import { log, type PayoutDeps } from './operations/payout-deps';
import { PayoutEntity, type PayoutStatus } from './payout.entity';
import { amountOf } from './payout-quiet-round';
import { payoutWatchStep, readPayoutRecord } from './payout.rules';
import { decideTransition, isFinal, isPolled } from './payout.state';

/**
 * The payout's one write path (write: the state machine, the audit entry and the shop event in
 * one statement), the record rule applied (applyRecord), the attention a payout raises, and its
 * poll times. Always on a row the caller has locked inside a short transaction (phase 3).
 */

registerSnapshotLoader('payout', async (m, ref) => {
  const p = await m.findOneOrFail(PayoutEntity, {
    where: ref.rowId !== undefined ? { id: ref.rowId } : { shopPaymentId: ref.objectId },
  });
  return { ...toPayoutView(p) };
});

type PayoutChanges = Partial<
  Pick<
    PayoutEntity,
    | 'withdrawId'
    | 'gatewayStatus'
    | 'psCurrency'
    | 'payeeReceive'
    | 'shopWriteOff'
    | 'errorCode'
    | 'gatewayMessage'
  >
>;

/** The gateway's record governs: ids, exact amounts, mapped status — unless it is not ours. */
export async function applyRecord(
  d: PayoutDeps,
  m: EntityManager,
  p: PayoutEntity,
  record: PayoutRecord | WithdrawCreateResult,
  cause: AuditCause,
  call: string,
): Promise<void> {
  const reading = readPayoutRecord(p, record, d.config.payouts.status);
  if (!reading.ours) {
    // After a restore or a reused id the gateway may hold another payout under our id: adopting
    // its status could report money that never moved. Nothing changes; an operator decides.
    await raise(m, p, 'mismatch', `${call} record is not ours: ${reading.reason}`, cause);
    return;
  }
  const mapped = reading.mapped;
  if (!mapped.known) {
    log.warn(
      { shopPaymentId: p.shopPaymentId, gatewayStatus: record.status },
      'unknown payout status number: treated as not final',
    );
  }
  const errorCode =
    'error_code' in record && typeof record.error_code === 'number' && record.error_code > 0
      ? record.error_code
      : null;
  await write(
    m,
    p,
    mapped.status,
    cause,
    { call, gatewayStatus: record.status },
    {
      withdrawId: String(record.id),
      gatewayStatus: record.status,
      psCurrency: record.ps_currency ?? p.psCurrency,
      payeeReceive: amountOf(record.payee_receive) ?? p.payeeReceive,
      shopWriteOff: amountOf(record.shop_write_off) ?? p.shopWriteOff,
      // The record governs: an earlier create error no longer describes the payout.
      errorCode,
      ...(errorCode === null ? { gatewayMessage: null } : {}),
    },
  );
  if (p.lastError !== null) await m.update(PayoutEntity, { id: p.id }, { lastError: null });
  await settleFlag(m, p, call);
}

/**
 * A final gateway status clears a "not final yet" flag (deadline, absent, ...), audited with
 * cause gateway in the same transaction; a disagreement stays for an operator.
 */
export async function settleFlag(m: EntityManager, p: PayoutEntity, call: string): Promise<void> {
  if (!isFinal(p.status)) return;
  await clearFlagOnFinal(
    m,
    { object: 'payout', id: p.id, shopId: p.shopPaymentId, status: p.status },
    p,
    { call },
  );
}

/**
 * The watch's own flag: past the poll deadline the status is `needs_attention` (the
 * contract's word) and the payout is still polled; past the watch end it is no longer polled.
 * Never hides a flag that says more (see watchMayFlag).
 */
export async function flagWatch(
  m: EntityManager,
  p: PayoutEntity,
  flag: 'deadline' | 'watch_ended' | 'poll_failing',
  detail: string,
  cause: AuditCause,
): Promise<void> {
  await write(m, p, 'needs_attention', cause, { reason: detail });
  if (!watchMayFlag(p, flag)) return;
  await raiseAttention(
    m,
    { object: 'payout', id: p.id, shopId: p.shopPaymentId, status: p.status },
    flag,
    detail,
    cause,
  );
  p.needsAttention = true;
  p.attentionReason = `${flag}: ${detail}`;
}

/**
 * Attention for a payout: the flag and reason (audited), and the status `needs_attention`.
 * The payout stays polled: a flag never stops the watch.
 */
export async function raise(
  m: EntityManager,
  p: PayoutEntity,
  reason: AttentionReason,
  detail: string,
  cause: AuditCause,
): Promise<void> {
  await write(m, p, 'needs_attention', cause, { reason: detail });
  await raiseAttention(
    m,
    { object: 'payout', id: p.id, shopId: p.shopPaymentId, status: p.status },
    reason,
    detail,
    cause,
  );
  p.needsAttention = true;
  p.attentionReason = `${reason}: ${detail}`;
}

/**
 * Writes the status (if the state machine allows it) and the data, audits the change, and
 * stops polling at a final status. A final payout is never changed.
 */
export async function write(
  m: EntityManager,
  p: PayoutEntity,
  to: PayoutStatus,
  cause: AuditCause,
  details: Record<string, unknown>,
  changes: PayoutChanges = {},
): Promise<void> {
  const from = p.status;
  const decision = decideTransition(from, to);
  if (!decision.allowed && decision.reason === 'final') {
    if (to !== from && to !== 'needs_attention' && isFinal(to)) {
      // A final answer that contradicts ours: money state kept, an operator told.
      await raiseAttention(
        m,
        { object: 'payout', id: p.id, shopId: p.shopPaymentId, status: from },
        'contradiction',
        `${String(details.call ?? 'gateway')} says ${to}, the payout is ${from}`,
        cause,
      );
    }
    return;
  }
  // needs_attention -> processing is expected (a reconcile still finds it open): not worth a warning.
  if (!decision.allowed && decision.reason === 'not_allowed' && from !== 'needs_attention') {
    log.warn(
      { shopPaymentId: p.shopPaymentId, from, to },
      'payout transition not allowed; status kept',
    );
  }
  const status = decision.allowed ? to : from;
  const gatewayStatusChanged =
    changes.gatewayStatus !== undefined && changes.gatewayStatus !== p.gatewayStatus;
  const all: Partial<PayoutEntity> = {
    ...changes,
    status,
    ...(isFinal(status) ? { finishedAt: clock.date(), nextPollAt: null } : {}),
  };
  if (status === from && !gatewayStatusChanged) {
    // Amount's private fields defeat TypeORM's deep-partial type; the transformer writes it.
    await m.update(PayoutEntity, { id: p.id }, all as QueryDeepPartialEntity<PayoutEntity>);
    Object.assign(p, all);
    return;
  }
  // The row and its audit entry / shop event in one statement, as for invoices
  // and refunds; the event carries the payout as this change leaves it (the row is locked),
  // and ShopEventSnapshots reads it again just before commit.
  Object.assign(p, all);
  const type = shopEventTypeOf({ entityType: 'payout', fromStatus: from, toStatus: status });
  const data = type === null ? null : { ...toPayoutView(p) };
  const { eventId } = await updateWithEvent(m, {
    table: 'payouts',
    target: PayoutEntity,
    rowId: p.id,
    changes: all,
    // Nothing of the written row is read back.
    returning: ID_ONLY,
    event: {
      entityType: 'payout',
      entityId: p.shopPaymentId,
      fromStatus: from,
      toStatus: status,
      cause,
      details,
      type,
      data,
    },
  });
  if (data !== null)
    rememberForCommit(m, {
      eventId,
      objectType: 'payout',
      ref: { rowId: p.id, objectId: p.shopPaymentId },
      data,
    });
}

/**
 * A poll time set sooner by this round's answer (duplicate: ask at once) is kept. The row's
 * own due time is not: it is the time that made this round due, already past, and keeping it
 * would poll the payout again at every tick.
 */
export function keepOrNext(
  d: PayoutDeps,
  p: PayoutEntity,
  due: Date | null = intervalFromNow(d),
): Date | null {
  if (!isPolled(p.status) || due === null) return null;
  const chosen = d.chosenByAnswer.has(p) ? p.nextPollAt : null;
  return chosen !== null && chosen < due ? chosen : due;
}

export function watchStep(d: PayoutDeps, p: PayoutEntity) {
  return payoutWatchStep({
    now: clock.date(),
    sentAt: p.sentAt,
    createdAt: p.createdAt,
    pollDeadline: p.pollDeadline,
    pollIntervalS: d.config.payouts.pollIntervalS,
    watch: d.config.watch,
  });
}

/** Next poll time for a row still owed an answer; null otherwise. */
export function nextPollAt(d: PayoutDeps, p: PayoutEntity): Date | null {
  return isPolled(p.status) ? intervalFromNow(d) : null;
}

export function intervalFromNow(d: PayoutDeps): Date {
  return new Date(clock.now() + d.config.payouts.pollIntervalS * 1000);
}

export async function setNextPoll(
  d: PayoutDeps,
  m: EntityManager,
  p: PayoutEntity,
  at: Date | null,
): Promise<void> {
  const next = isPolled(p.status) ? at : null;
  await m.update(PayoutEntity, { id: p.id }, { nextPollAt: next });
  p.nextPollAt = next;
  d.chosenByAnswer.add(p);
}
