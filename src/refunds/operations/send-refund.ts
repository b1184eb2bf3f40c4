/**
 * Phases 2 and 3 of a refund create: the gateway call with nothing held, its answer through the
 * state machine; a repeat's answer, and the take-over of a copy whose caller went away.
 */
import { transactionFor, type By } from '../../common/actor';
import { clock } from '../../common/clock';
import { EntityManager } from 'typeorm';
import type { AuditCause } from '../../audit/audit-event.entity';
import { GatewayFailure, NotFound, RequestInProgress } from '../../common/errors';
import { runGatewayOperation, type CallAnswer } from '../../jobs/gateway-operation';
import { callLeaseSeconds, waitForAnswer } from '../../jobs/in-flight';
import { INSTANCE_ID } from '../../jobs/instance';
import {
  GatewayError,
  GatewayTransportError,
  isOutcomeUnknown,
  type RefundRecord,
  toGatewayId,
} from '../../gateway';
import { toRefundView } from '../dto/refund.view';
import { RefundEntity } from '../refund.entity';
import { replayProblem, storeProblem } from '../refund.errors';
import { lockRefundById, transitionRefund } from '../refund-transitions';
import { CreateAnswer, outcomeOfCreate, refundStatusFromGateway } from '../refund.state';
import { raiseAttention } from '../../common/attention';
import {
  log,
  NO_CALL,
  type RefundDeps,
  type Reserved,
  type CreateResult,
  type StoredResponse,
} from './refund-deps';
import { settlementOf, asRefundRecord } from '../refund-records';
import { STORE_RESPONSE_SQL } from '../refund-sql';
import { replayedAnswer, storedAnswer } from '../../common/stored-answer';

/**
 * A repeat (or a race lost at the insert): the stored answer; while the first copy waits for
 * the gateway, a bounded wait then 409 "request in progress"; a copy that never reached the
 * gateway is sent by this one; one whose call was lost (lease over) is settled by reconciliation.
 */
export async function answerRepeat(
  d: RefundDeps,
  id: string,
  cause: AuditCause,
  by: By,
): Promise<CreateResult> {
  let shopRefundId = id;
  const next = await waitForAnswer(async () => {
    const r = await d.dataSource.getRepository(RefundEntity).findOneBy({ id });
    if (!r) throw new NotFound('Refund', id);
    shopRefundId = r.shopRefundId;
    if (r.responseCode !== null) return replay(r);
    if (r.callLeaseUntil !== null && r.callLeaseUntil.getTime() > clock.now()) return undefined;
    return takeOver(d, id, cause, by);
  }, d.config.createWaitMs);
  if (next === undefined) throw new RequestInProgress('shopRefundId', shopRefundId, 1);
  if (next === 'wait') return answerRepeat(d, id, cause, by);
  if ('claimed' in next)
    return next.claimed ? sendRefund(d, next, cause, by) : answerRepeat(d, id, cause, by);
  return replayedAnswer(next);
}

/** Under the locks, with no call in flight: send it (never sent), or answer what we know. */
function takeOver(
  d: RefundDeps,
  id: string,
  cause: AuditCause,
  by: By,
): Promise<CreateResult | Reserved | 'wait'> {
  return transactionFor(d.dataSource, by, async (m): Promise<CreateResult | Reserved | 'wait'> => {
    const refund = await lockRefundById(m, id);
    if (!refund) throw new NotFound('Refund', id);
    if (refund.responseCode !== null) return replay(refund);
    if (refund.callLeaseUntil !== null && refund.callLeaseUntil.getTime() > clock.now())
      return 'wait';
    if (refund.submitState === 'pending' && refund.callStartedAt === null) {
      // Absences counted while nothing was sent say nothing about the call made now.
      await m.update(RefundEntity, { id }, { ...claimOf(d), absentCount: 0, firstAbsentAt: null });
      return {
        id,
        claimed: true,
        gatewayInvoiceId: refund.gatewayInvoiceId,
        amount: refund.amount,
        shopRefundId: refund.shopRefundId,
      };
    }
    if (refund.submitState === 'pending') {
      // The call went out and its answer was lost with its process: ask, never re-send.
      await transitionRefund(
        m,
        refund,
        refund.status,
        cause,
        { reason: 'the create call was lost (its lease ran out)' },
        { submitState: 'unknown', nextCheckAt: clock.date() },
      );
      await m.update(RefundEntity, { id }, NO_CALL);
    }
    return storeCreated(m, refund);
  });
}

function claimOf(
  d: RefundDeps,
): Pick<RefundEntity, 'callOwner' | 'callStartedAt' | 'callLeaseUntil'> {
  return {
    callOwner: INSTANCE_ID,
    callStartedAt: clock.date(),
    callLeaseUntil: new Date(clock.now() + callLeaseSeconds(d.config.gateway.timeoutMs) * 1000),
  };
}

/**
 * Phases 2 and 3 for a refund this request has claimed: the gateway call with nothing held,
 * then, under the invoice and refund locks, the answer through the state machine.
 */
export async function sendRefund(
  d: RefundDeps,
  claim: Reserved & { claimed: true },
  cause: AuditCause,
  by: By,
): Promise<CreateResult> {
  return runGatewayOperation(d.dataSource, {
    name: 'refund.create',
    by,
    call: () =>
      d.gateway.createRefund({
        invoice_id: toGatewayId(claim.gatewayInvoiceId),
        amount: claim.amount.toString(),
        shop_refund_id: claim.shopRefundId,
        callback_url: `${d.config.publicBaseUrl}/webhooks/gateway`,
      }),
    lock: (m) => lockRefundById(m, claim.id),
    missing: () => new NotFound('Refund', claim.id),
    record: (m, refund, reply) => createAnswered(d, m, refund, reply, cause),
  });
}

/**
 * Phase 3 of a refund create (the invoice and refund locked): what the answer means
 * (accepted, refused, not known, never sent), through the state machine; a refusal is
 * returned so that the FAILED row commits before the shop hears of it.
 */
async function createAnswered(
  d: RefundDeps,
  m: EntityManager,
  refund: RefundEntity,
  reply: CallAnswer<RefundRecord>,
  cause: AuditCause,
): Promise<CreateResult | GatewayFailure> {
  let answer: CreateAnswer;
  let record: RefundRecord | null = null;
  let failure: GatewayError | null = null;
  let notSent: GatewayTransportError | null = null;
  if (reply.ok) {
    record = reply.value;
    answer = { kind: 'accepted', status: refundStatusFromGateway(record.status) };
  } else {
    const err = reply.err;
    if (err instanceof GatewayError && err.fatal === true) {
      failure = err;
      record = asRefundRecord(err.data);
      answer = {
        kind: 'fatal',
        recordStatus: record ? (refundStatusFromGateway(record.status) ?? 'FAILED') : null,
      };
    } else if (isOutcomeUnknown(err)) {
      answer = { kind: 'unknown' };
      failure = err instanceof GatewayError ? err : null;
      log.warn(
        { shopRefundId: refund.shopRefundId, err: (err as Error).message },
        'refund creation outcome unknown: left to reconciliation',
      );
    } else if (err instanceof GatewayTransportError) {
      answer = { kind: 'unknown' };
      notSent = err;
    } else {
      throw err;
    }
  }
  if (notSent) {
    // Never reached the gateway: stay pending with no claim, so a repeat sends it.
    await m.update(RefundEntity, { id: refund.id }, { ...NO_CALL, callStartedAt: null });
    return new GatewayFailure(`gateway not reachable: ${notSent.kind}`, null, null, null, 503);
  }
  await m.update(RefundEntity, { id: refund.id }, NO_CALL);
  const outcome = outcomeOfCreate(answer);
  const details = { call: 'invoice/create-refund', errorCode: failure?.errorCode ?? null };
  const extra = {
    // An accepted answer is proof the gateway has it, whatever a repeat or the reconciler
    // made of the call meanwhile; otherwise a notification may have settled it first.
    submitState:
      answer.kind === 'accepted' || refund.submitState === 'pending'
        ? outcome.submitState
        : refund.submitState,
    errorCode: failure?.errorCode ?? (record ? record.error_code : null),
    gatewayMessage: failure?.gatewayMessage ?? null,
    ...settlementOf(record),
  };
  if (outcome.rejected && failure && refund.responseCode === null) {
    const problem = new GatewayFailure(
      `the gateway refused refund ${refund.shopRefundId}: ${failure.gatewayMessage}`,
      failure.errorCode,
      failure.gatewayMessage,
      failure.fatal,
      422,
    );
    await transitionRefund(m, refund, outcome.status, cause, details, {
      ...extra,
      responseCode: problem.status,
    });
    await storeResponse(m, refund.id, problem.status, {
      problem: storeProblem(problem),
    });
    // Returned, not thrown: the FAILED/rejected row must commit before the shop hears of it.
    return problem;
  }
  // The gateway has it, yet the refund was already settled FAILED (e.g. absent over the
  // window while this call hung): the money may move; an operator must look.
  if (answer.kind === 'accepted' && refund.status === 'FAILED' && outcome.status !== 'FAILED')
    await raiseAttention(
      m,
      { object: 'refund', id: refund.id, shopId: refund.shopRefundId, status: refund.status },
      'contradiction',
      `the gateway accepted the refund (${outcome.status}), the refund is FAILED`,
      cause,
    );
  await transitionRefund(m, refund, outcome.status, cause, details, extra);
  if (refund.responseCode !== null) return replay(refund);
  return storeCreated(m, refund);
}

export async function storeCreated(m: EntityManager, refund: RefundEntity): Promise<CreateResult> {
  const fresh = await m.findOneOrFail(RefundEntity, { where: { id: refund.id } });
  const body = toRefundView(fresh);
  await storeResponse(m, refund.id, 201, { refund: body });
  return { code: 201, body };
}

/** The answer replayed to a repeated request (storedAnswer: same status code, same body). */
async function storeResponse(
  m: EntityManager,
  id: string,
  code: number,
  body: StoredResponse,
): Promise<void> {
  const { columns } = storedAnswer(code, body);
  await m.query(STORE_RESPONSE_SQL, [
    id,
    columns.responseCode,
    JSON.stringify(columns.responseBody),
  ]);
}

/**
 * A repeat's answer: the refund as it is now, with the first answer's status code (a refund
 * that was WAITING then may be SUCCESS now); a stored problem is given again as it was.
 */
export function replay(refund: RefundEntity): CreateResult {
  const body = refund.responseBody as StoredResponse;
  if (body.problem) {
    const problem = replayProblem(body.problem);
    problem.replayed = true;
    throw problem;
  }
  return replayedAnswer({ code: refund.responseCode ?? 201, body: toRefundView(refund) });
}
