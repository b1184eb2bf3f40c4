import { transactionFor, type By } from '../../common/actor';
import { DataSource, EntityManager } from 'typeorm';
import type { AuditCause } from '../../audit/audit-event.entity';
import { WATCH_ENDED_DETAIL } from '../../common/attention';
import { GatewayError } from '../../gateway';
import type { PayoutRecord } from '../../gateway/gateway.types';
import { recordAnswer, runGatewayOperation, type CallAnswer } from '../../jobs/gateway-operation';
import { callLeaseSeconds } from '../../jobs/in-flight';
import { INSTANCE_ID } from '../../jobs/instance';
import { PayoutEntity } from '../payout.entity';
import { decideRecreate, isFinal, isPolled, isUnsent } from '../payout.state';
import { applyRecord, flagWatch, keepOrNext, raise, watchStep } from '../payout-transitions';
import {
  askStatus,
  lockPayout,
  log,
  unsealRecipient,
  withdraw,
  type PayoutDeps,
  type SealedRecipient,
  type WithdrawFacts,
} from './payout-deps';
import { applyCreate } from './send-payout';
import { clock } from '../../common/clock';

/**
 * The status rounds of a payout (the poller, an admin's reconcile): ask with nothing held, write
 * the answer under a short lock, repeat a create after "absent" when the rules allow it, and
 * finish the round on the watch of payout.rules.ts (payoutWatchStep).
 */

/**
 * Phase 3 of a status question (row locked). A record governs (unless it is not ours);
 * "absent" may allow one more create, which this claims (attempt, time, lease) and returns
 * 'create' for the caller to send after commit; past the cap the payout goes to an operator.
 */
export async function applyStatus(
  d: PayoutDeps,
  m: EntityManager,
  p: PayoutEntity,
  via: string,
  answer: CallAnswer<PayoutRecord>,
  cause: AuditCause,
  mayCreate: boolean,
): Promise<'create' | 'done'> {
  if (answer.ok) {
    await applyRecord(d, m, p, answer.value, cause, via);
    return 'done';
  }
  const err = answer.err;
  if (!(err instanceof GatewayError && err.isAbsent && via === 'withdraw/shop_payment_status')) {
    log.warn(
      { shopPaymentId: p.shopPaymentId, via, err: (err as Error).message },
      'payout status failed; asking again later',
    );
    await m.update(PayoutEntity, { id: p.id }, { lastError: `${via}: ${(err as Error).message}` });
    return 'done';
  }
  // Locked now: a payout settled, or given a gateway id, since it was read is not created again.
  if (isFinal(p.status) || p.withdrawId !== null) return 'done';
  const decision = decideRecreate({
    now: clock.now(),
    createAttempts: p.createAttempts,
    lastCreateAt: p.lastCreateAt?.getTime() ?? null,
    maxCreates: d.config.payoutMaxCreates,
    gatewayTimeoutMs: d.config.gateway.timeoutMs,
    pollIntervalMs: d.config.payouts.pollIntervalS * 1000,
    pollDeadline: p.pollDeadline.getTime(),
  });
  if (decision === 'cap') {
    await raise(m, p, 'create_cap', `absent after ${p.createAttempts} creates`, cause);
    return 'done';
  }
  if (decision === 'late') {
    await flagWatch(m, p, 'deadline', 'absent at the poll deadline: not sent again', cause);
    return 'done';
  }
  // A flagged payout (e.g. a repeat refused while an earlier attempt is unknown) is never
  // created again by itself: an operator decides.
  if (decision === 'wait' || !mayCreate || p.needsAttention) return 'done';
  log.warn(
    { shopPaymentId: p.shopPaymentId, attempts: p.createAttempts },
    'payout absent on the gateway: repeating the create',
  );
  const claim = {
    createAttempts: p.createAttempts + 1,
    lastCreateAt: clock.date(),
    callOwner: INSTANCE_ID,
    callStartedAt: clock.date(),
    callLeaseUntil: new Date(clock.now() + callLeaseSeconds(d.config.gateway.timeoutMs) * 1000),
  };
  await m.update(PayoutEntity, { id: p.id }, claim);
  Object.assign(p, claim);
  return 'create';
}

/**
 * One status round for a payout, in atomic phases: read the row, ask the gateway with nothing
 * held, write the answer under a short lock (recordStatus). `owner`: the poller's lease (a row
 * taken over by another instance is left alone). Returns false when the row was not ours to poll.
 */
export async function checkOnce(
  d: PayoutDeps,
  dataSource: DataSource,
  id: string,
  cause: AuditCause,
  /** `by`: who acts (an admin's recheck); undefined for the poller. */
  opts: { owner?: string; mayCreate: boolean; force?: boolean; by: By },
  /**
   * Phase 3 of the round: recordStatus, or the facade's own method that hands over to it
   * (PayoutProcessor passes its recordStatus, so every per-row write of a round is that one call).
   */
  record: (
    ...a: Parameters<typeof recordStatus> extends [unknown, ...infer R] ? R : never
  ) => Promise<void> = (...a) => recordStatus(d, ...a),
): Promise<boolean> {
  const p = await dataSource.getRepository(PayoutEntity).findOneBy({ id });
  if (p === null || (opts.owner !== undefined && p.leaseOwner !== opts.owner)) return false;
  // Awaiting approval: never sent, so nothing to ask about and nothing to create.
  const open =
    !isUnsent(p.status) && (isPolled(p.status) || (opts.force === true && !isFinal(p.status)));
  const inFlight = p.callLeaseUntil !== null && p.callLeaseUntil.getTime() > clock.now();
  if (open && !inFlight) {
    // Read before asking: a sealed account that cannot be read fails this poll (recorded), not a create.
    const recipient = p.withdrawId === null && opts.mayCreate ? unsealRecipient(d, p) : null;
    const { via, answer } = await askStatus(d, p);
    await record(dataSource, id, via, answer, cause, {
      owner: opts.owner,
      resend: recipient === null ? null : { payout: p, recipient },
      by: opts.by,
    });
  } else if (opts.owner !== undefined) {
    await transactionFor(dataSource, opts.by, async (m) => {
      const row = await lockPayout(m, { id });
      if (row === null || row.leaseOwner !== opts.owner) return;
      await finishRound(d, m, row, cause, true, inFlight ? row.callLeaseUntil : undefined);
    });
  }
  return true;
}

/**
 * Phase 3 of a status round: the answer written under a short lock through applyStatus and
 * finishRound; when "absent" allows one more create (only with `resend`: the payout and its
 * unsealed recipient), that create is claimed there, sent with nothing held, and its answer
 * written. `owner`: the poller's lease (a row taken over by another instance is left alone).
 */
export async function recordStatus(
  d: PayoutDeps,
  dataSource: DataSource,
  id: string,
  via: string,
  answer: CallAnswer<PayoutRecord>,
  cause: AuditCause,
  opts: {
    owner?: string;
    resend: {
      payout: WithdrawFacts;
      recipient: SealedRecipient;
    } | null;
    by: By;
  },
): Promise<void> {
  let attempt = 0;
  const step = await recordAnswer(
    dataSource,
    {
      name: 'payout.status',
      by: opts.by,
      lock: (m) => lockPayout(m, { id }),
      missing: () => 'done' as const,
      record: async (m, row, reply) => {
        if (opts.owner !== undefined && row.leaseOwner !== opts.owner) return 'done';
        if (row.callLeaseUntil !== null && row.callLeaseUntil.getTime() > clock.now())
          return 'done';
        const r = await applyStatus(d, m, row, via, reply, cause, opts.resend !== null);
        if (r === 'done') await finishRound(d, m, row, cause, opts.owner !== undefined);
        attempt = row.createAttempts;
        return r;
      },
    },
    answer,
  );
  const resend = opts.resend;
  if (step === 'create' && resend !== null) {
    await runGatewayOperation(dataSource, {
      name: 'payout.recreate',
      by: opts.by,
      call: () => withdraw(d, resend.payout, resend.recipient),
      lock: (m) => lockPayout(m, { id }),
      // Gone meanwhile: nothing left to record the answer on.
      missing: () => undefined,
      record: async (m, row, created) => {
        await applyCreate(d, m, row, created, cause, attempt);
        // A create just sent gets its status round before any deadline: flagged now, it
        // would never be polled again while the gateway pays it.
        await finishRound(d, m, row, cause, opts.owner !== undefined, undefined, false);
      },
    });
  }
}

/**
 * The quiet rounds of a poll batch (payout-quiet-round.ts: the gateway said what the row
 * already says), finished by one statement: poll counted, next poll set, lease released —
 * what finishRound writes for such a round — on each row still leased by `owner` and unchanged
 * since the claim (same `xmin`). Returns the ids it did not finish: the caller writes their
 * answers through recordStatus, which reads the row as it is now.
 */
export async function finishQuietRounds(
  d: PayoutDeps,
  dataSource: DataSource,
  owner: string,
  rounds: ReadonlyArray<{ id: string; xmin: string; nextPollAt: Date }>,
): Promise<Set<string>> {
  const left = new Set(rounds.map((r) => r.id));
  if (rounds.length === 0) return left;
  const result = (await dataSource.query(
    `UPDATE payouts p
        SET poll_count = p.poll_count + 1, next_poll_at = q.next_poll_at,
            lease_until = NULL, lease_owner = NULL, updated_at = clock_now()
       FROM unnest($2::uuid[], $3::xid[], $4::timestamptz[]) AS q(id, xmin, next_poll_at)
      WHERE p.id = q.id AND p.xmin = q.xmin AND p.lease_owner = $1
     RETURNING p.id`,
    [owner, rounds.map((r) => r.id), rounds.map((r) => r.xmin), rounds.map((r) => r.nextPollAt)],
  )) as [Array<{ id: string }>, number];
  for (const { id } of result[0]) left.delete(id);
  return left;
}

/**
 * End of a round: past the deadline flagged and polled every WATCH_INTERVAL_S, past the watch
 * end flagged `watch_ended` and no longer polled; poll count, next poll, lease released.
 */
export async function finishRound(
  d: PayoutDeps,
  m: EntityManager,
  p: PayoutEntity,
  cause: AuditCause,
  counted: boolean,
  nextAt?: Date | null,
  deadlineApplies = true,
): Promise<void> {
  let next: Date | null = null;
  if (isPolled(p.status)) {
    const step = watchStep(d, p);
    if (deadlineApplies && step.flag !== null)
      await flagWatch(
        m,
        p,
        step.flag,
        step.flag === 'deadline'
          ? 'no final status by the poll deadline; still polled until the watch ends'
          : WATCH_ENDED_DETAIL,
        cause,
      );
    if (nextAt !== undefined && nextAt !== null) next = nextAt;
    else if (!deadlineApplies) next = keepOrNext(d, p);
    else next = keepOrNext(d, p, step.nextAt);
  }
  await m.update(
    PayoutEntity,
    { id: p.id },
    {
      ...(counted ? { pollCount: p.pollCount + 1 } : {}),
      nextPollAt: next,
      leaseUntil: null,
      leaseOwner: null,
    },
  );
  p.nextPollAt = next;
}

/**
 * A round that threw: recorded in a transaction of its own (the failed one rolled back), with
 * the error on the row; past the deadline it is flagged `poll_failing` and still polled every
 * WATCH_INTERVAL_S until the watch ends.
 */
export async function recordFailure(
  d: PayoutDeps,
  dataSource: DataSource,
  id: string,
  err: unknown,
  owner?: string,
): Promise<void> {
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  await dataSource.transaction(async (m) => {
    const p = await lockPayout(m, { id });
    if (p === null || (owner !== undefined && p.leaseOwner !== owner)) return;
    await m.update(PayoutEntity, { id }, { lastError: message.slice(0, 500) });
    p.lastError = message;
    const step = isPolled(p.status) ? watchStep(d, p) : null;
    if (step !== null && step.flag !== null)
      await flagWatch(
        m,
        p,
        step.flag === 'deadline' ? 'poll_failing' : step.flag,
        step.flag === 'deadline'
          ? `every poll fails: ${message.slice(0, 200)}`
          : WATCH_ENDED_DETAIL,
        'reconciliation',
      );
    const next = step?.nextAt ?? null;
    await m.update(
      PayoutEntity,
      { id },
      { pollCount: p.pollCount + 1, nextPollAt: next, leaseUntil: null, leaseOwner: null },
    );
  });
}
