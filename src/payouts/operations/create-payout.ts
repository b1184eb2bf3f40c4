import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { runGatewayOperation } from '../../jobs/gateway-operation';
import { NotFound, RequestInProgress } from '../../common/errors';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { AuditCause } from '../../audit/audit-event.entity';
import { transactionFor, type By } from '../../common/actor';
import { approvalsNeeded } from '../payout-approval';
import { callLeaseSeconds, waitForAnswer } from '../../jobs/in-flight';
import { INSTANCE_ID } from '../../jobs/instance';
import { Amount } from '../../common/money';
import type { OutputPayway, WithdrawTryResult } from '../../gateway/gateway.types';
import { boundsCheckFor, checkConvertedBounds } from '../../payway-config/currency-conversion';
import { maskAccount } from '../account-mask';
import {
  differingFields,
  differs,
  recordConflict,
  refuseIfLocked,
  secretFieldsSent,
} from '../../common/idempotency';
import { replayedAnswer, storedAnswer, storedAnswerOf } from '../../common/stored-answer';
import { PAYOUT_SECRET_FIELDS } from '../account-seal';
import { metadataOf } from '../../common/metadata';
import type { CreatePayoutDto } from '../dto/payout-requests.dto';
import { toPayoutView, type PayoutView } from '../dto/payout.view';
import { PayoutEntity } from '../payout.entity';
import { NO_CALL } from '../payout-call';
import { accountProblems, amountProblems } from '../payout-validation';
import { nextPollAt, write } from '../payout-transitions';
import { firstPollGraceS, SEND_STAMP_SQL } from '../payout.rules';
import { gatewayFailure } from '../payout.errors';
import type { QuotePayoutDto } from '../dto/payout-requests.dto';
import {
  findPayout,
  lockPayout,
  rejectProblems,
  sealRecipient,
  withdraw,
  type PayoutDeps,
  type SealedRecipient,
  type StoredResponse,
} from './payout-deps';
import { applyCreate } from './send-payout';
import { clock } from '../../common/clock';

/**
 * Creating a payout (`POST /payouts`, and every batch row through the same path): validated,
 * priced, admitted against the caps and the balance (PayoutControls, payout.rules.ts), stored
 * idempotently, then sent (sendClaimed) or left awaiting approval; a repeat is replayed or is a
 * conflict.
 */

/** Amount checks without bounds: in another currency the bounds apply after conversion. */
export const UNBOUNDED = {} as OutputPayway;

export function convertedProblems(r: WithdrawTryResult, payway: OutputPayway) {
  return checkConvertedBounds({ amount: r.payee_receive, currency: r.ps_currency }, payway);
}

/**
 * The idempotent create, in atomic phases: (1) one INSERT commits the row `pending` with its
 * first create attempt claimed (owner, time, lease), so a crash after it leaves a row the
 * poller settles by a status call; (2) `withdraw/create` with nothing held; (3) a short lock
 * writes the answer and the stored response. A repeat finds the row first (configuration only
 * judges new rows) and replays it, waits (bounded) while the first copy is in phase 2, or gets
 * 409 "request in progress"; another body is 409 conflict.
 */
export async function create(d: PayoutDeps, dto: CreatePayoutDto, by: By): Promise<StoredResponse> {
  const shopId = d.shopId;
  const fingerprint = d.fingerprints.of(dto);
  let priced: Awaited<ReturnType<typeof priceInPaywayCurrency>> | null;
  try {
    const payway = await d.payways.getPayway('payout', dto.payway);
    const local = boundsCheckFor(dto.shopCurrency, payway.currency) === 'local';
    rejectProblems([
      ...amountProblems(dto.amount, local ? payway : UNBOUNDED, dto.amountType),
      ...accountProblems(dto.account, dto.accountDetails, payway),
    ]);
    priced = local ? null : await priceInPaywayCurrency(d, dto, payway);
  } catch (err) {
    // A repeat is answered whatever the configuration says now (limits lowered, payway gone).
    const existing = await findPayout(d, dto.shopPaymentId);
    if (existing) return answerRepeat(d, existing, dto, by);
    throw err;
  }
  const { pollMaxS } = d.config.payouts;
  const leaseS = callLeaseSeconds(d.config.gateway.timeoutMs);
  // A pending row is left alone by the poller for this long: the create request is in flight.
  const graceS = firstPollGraceS(d.config.gateway.timeoutMs, d.config.payouts.pollIntervalS);
  const facts = {
    shopPaymentId: dto.shopPaymentId,
    amount: Amount.parse(dto.amount),
    amountType: dto.amountType,
    shopCurrency: dto.shopCurrency,
    payway: dto.payway,
    description: dto.description ?? null,
  };
  // One figure, the write-off (quoted when the amount type does not fix it), for the approval
  // thresholds, the caps and the balance: the gateway reads now; the sums with the insert, under a lock.
  const { admission, writeOff, quoted } = await d.controls.prepare(
    shopId,
    { ...facts, account: dto.account },
    priced,
  );
  // The id is chosen here: the sealed account is bound to its row.
  const id = randomUUID();
  const stored = {
    ...facts,
    id,
    shopId,
    requestFingerprint: fingerprint.fingerprint,
    requestFingerprintKey: fingerprint.keyId,
    // Kept apart from `facts`, which the gateway request is built from: never sent.
    metadata: metadataOf(dto.metadata),
    ...(priced ?? {}),
    // The write-off withdraw/try quoted for the controls, when it was asked.
    ...(quoted ?? {}),
    accountMasked: maskAccount(dto.account),
    // The creating key (a batch's rows: the submitting key) never approves it.
    createdByKeyId: by?.keyId ?? null,
    // The recipient's blind index, for the per-recipient daily cap; never the account in clear.
    accountIndex: admission.recipientIndexes[0],
    accountSealed: sealRecipient(d, id, {
      account: dto.account,
      accountDetails: dto.accountDetails,
    }),
  };
  // A write-off at or above PAYOUT_APPROVAL_THRESHOLD waits for admin keys; nothing is sent.
  const needed = approvalsNeeded(d.config.payoutApproval, writeOff, dto.shopCurrency);
  // An awaiting payout holds no share of the caps and nothing of the balance: the approval
  // that sends it admits it against the caps of that day and the balance then.
  if (needed !== 0) return createAwaiting(d, stored, needed, dto, by);
  // prettier-ignore
  const inserted = await d.controls.admit(admission, dto.shopPaymentId, by, (m) => (m ?? d.dataSource)
    .createQueryBuilder()
    .insert()
    .into(PayoutEntity)
    .values({
      ...stored,
      status: 'pending',
      createAttempts: 1,
      lastCreateAt: () => SEND_STAMP_SQL,
      // Sent now: the day it counts on and the start of its watch (payout.rules.ts).
      sentAt: () => SEND_STAMP_SQL,
      callOwner: INSTANCE_ID,
      callStartedAt: () => SEND_STAMP_SQL,
      callLeaseUntil: () => `clock_now() + make_interval(secs => ${leaseS})`,
      nextPollAt: () => `clock_now() + make_interval(secs => ${graceS})`,
      pollDeadline: () => `clock_now() + make_interval(secs => ${pollMaxS})`,
    })
    .orIgnore()
    .returning(['id'])
    .execute());
  const rows = inserted.raw as Array<{ id: string }>;
  if (rows.length === 1) {
    return sendClaimed(
      d,
      { id: rows[0].id, ...facts },
      { account: dto.account, accountDetails: dto.accountDetails },
      'api',
      1,
      by,
      (m, p) => storeResponse(m, p),
    );
  }
  const existing = await findPayout(d, dto.shopPaymentId);
  if (existing === null)
    throw new Error(`payout ${dto.shopPaymentId} vanished after a conflicting insert`);
  return answerRepeat(d, existing, dto, by);
}

/**
 * A payout in another shop currency than its payway's: `withdraw/try` converts it, and the
 * payway's bounds are held against `payee_receive` in `ps_currency`. Skipped for a repeat whose
 * row exists (its stored answer or a conflict follows without another gateway call).
 */
export async function priceInPaywayCurrency(
  d: PayoutDeps,
  dto: CreatePayoutDto,
  payway: OutputPayway,
): Promise<{ psCurrency: number; payeeReceive: Amount; shopWriteOff: Amount } | null> {
  const exists = await d.dataSource
    .getRepository(PayoutEntity)
    .existsBy({ shopId: d.shopId, shopPaymentId: dto.shopPaymentId });
  if (exists) return null;
  const r = await tryWithdraw(d, dto);
  rejectProblems(convertedProblems(r, payway));
  return {
    psCurrency: Number(r.ps_currency),
    payeeReceive: Amount.fromText(String(r.payee_receive)),
    shopWriteOff: Amount.fromText(String(r.shop_write_off)),
  };
}

/** `withdraw/try` for a quote or a conversion: a gateway failure is the route's problem. */
export async function tryWithdraw(d: PayoutDeps, dto: QuotePayoutDto): Promise<WithdrawTryResult> {
  try {
    return await d.gateway.tryWithdraw({
      amount: dto.amount,
      amount_type: dto.amountType,
      payway: dto.payway,
      shop_currency: dto.shopCurrency,
    });
  } catch (err) {
    throw gatewayFailure('withdraw/try', err);
  }
}

/**
 * Phases 2 and 3 of a create whose row is claimed (call owner, lease, attempt): the new
 * payout's and an approved one's alike. `withdraw/create` with nothing held, then a short lock
 * writes the answer (applyCreate) and `finish` builds the caller's answer.
 */
export async function sendClaimed<T>(
  d: PayoutDeps,
  row: Pick<
    PayoutEntity,
    'id' | 'shopPaymentId' | 'amount' | 'amountType' | 'shopCurrency' | 'payway' | 'description'
  >,
  recipient: SealedRecipient,
  cause: AuditCause,
  attempt: number,
  by: By,
  finish: (m: EntityManager, p: PayoutEntity) => Promise<T>,
): Promise<T> {
  return runGatewayOperation(d.dataSource, {
    name: 'payout.create',
    by,
    call: () => withdraw(d, row, recipient),
    lock: (m) => lockPayout(m, { id: row.id }),
    missing: () => new NotFound('Payout', row.shopPaymentId),
    record: async (m, p, answer) => {
      await applyCreate(d, m, p, answer, cause, attempt);
      return finish(m, p);
    },
  });
}

/**
 * A payout at or above the approval threshold: one transaction writes the row
 * `awaiting_approval` (no call claimed, no poll due), its audit entry and event, and the stored
 * 202, so a repeat replays that answer and sends nothing. A repeat of an existing row goes to
 * answerRepeat, whatever status it has.
 */
export async function createAwaiting(
  d: PayoutDeps,
  values: Omit<Partial<PayoutEntity>, 'status'>,
  needed: 1 | 2,
  dto: CreatePayoutDto,
  by: By,
): Promise<StoredResponse> {
  const { pollMaxS } = d.config.payouts;
  const write = async (m: EntityManager): Promise<StoredResponse | null> => {
    const inserted = await m
      .createQueryBuilder()
      .insert()
      .into(PayoutEntity)
      .values({
        ...(values as QueryDeepPartialEntity<PayoutEntity>),
        status: 'awaiting_approval',
        approvalsRequired: needed,
        createAttempts: 0,
        nextPollAt: null,
        // Set again when it is approved: the poll window starts with the send.
        pollDeadline: () => `clock_now() + make_interval(secs => ${pollMaxS})`,
      })
      .orIgnore()
      .returning(['id'])
      .execute();
    const rows = inserted.raw as Array<{ id: string }>;
    if (rows.length !== 1) return null;
    const p = await lockPayout(m, { id: rows[0].id });
    if (p === null) throw new NotFound('Payout', dto.shopPaymentId);
    await d.audit.record(m, {
      entityType: 'payout',
      entityId: p.shopPaymentId,
      rowId: p.id,
      fromStatus: null,
      toStatus: p.status,
      cause: 'api',
      details: { approvalsRequired: needed },
    });
    return storeResponse(m, p);
  };
  const stored = await transactionFor(d.dataSource, by, write);
  if (stored !== null) return stored;
  const existing = await findPayout(d, dto.shopPaymentId);
  if (existing === null)
    throw new Error(`payout ${dto.shopPaymentId} vanished after a conflicting insert`);
  return answerRepeat(d, existing, dto, by);
}

/** The stored answer, else the payout as it is now (stored as the answer). */
export async function storeResponse(m: EntityManager, p: PayoutEntity): Promise<StoredResponse> {
  const first = storedAnswerOf<PayoutView>(p);
  if (first !== null) return first;
  const stored = storedAnswer(202, toPayoutView(p));
  await m.update(PayoutEntity, { id: p.id }, stored.columns);
  return stored.answer;
}

/**
 * A repeat: the stored answer; a bounded wait while the first copy is calling the gateway;
 * a copy whose call was lost (lease over) becomes `unknown` for the poller's status call.
 */
export async function answerRepeat(
  d: PayoutDeps,
  existing: PayoutEntity,
  dto: CreatePayoutDto,
  by: By,
): Promise<StoredResponse> {
  await sameRequestOrConflict(d, existing, dto, by);
  let first: PayoutEntity | null = existing;
  const answer = await waitForAnswer(async () => {
    const p = first ?? (await findPayout(d, existing.shopPaymentId));
    first = null;
    if (p === null) throw new NotFound('Payout', existing.shopPaymentId);
    const stored = storedAnswerOf<PayoutView>(p);
    if (stored !== null) return stored;
    if (p.callLeaseUntil !== null && p.callLeaseUntil.getTime() > clock.now()) return undefined;
    return transactionFor(d.dataSource, by, async (m) => {
      const row = await lockPayout(m, { id: p.id });
      if (row === null) throw new NotFound('Payout', existing.shopPaymentId);
      if (row.callLeaseUntil !== null && row.callLeaseUntil.getTime() > clock.now())
        return undefined;
      if (row.status === 'pending') {
        await write(m, row, 'unknown', 'api', {
          reason: 'the create call was lost (its lease ran out)',
        });
        const next = nextPollAt(d, row);
        await m.update(PayoutEntity, { id: row.id }, { ...NO_CALL, nextPollAt: next });
        row.nextPollAt = next;
      }
      return storeResponse(m, row);
    });
  }, d.config.createWaitMs);
  if (answer === undefined) throw new RequestInProgress('shopPaymentId', existing.shopPaymentId, 1);
  return replayedAnswer(answer);
}

/**
 * A repeat is the same request when its keyed fingerprint matches (every field, the account
 * and its details included) and the metadata is the same. Otherwise a conflict naming the
 * non-secret fields that differ (read from the row's own columns, amounts by value) and, in
 * every conflict, one entry for the secret fields whether they differ or not: the answer to a
 * guessed account is the same as to a wrong one, and the conflicts are capped.
 */
export async function sameRequestOrConflict(
  d: PayoutDeps,
  existing: PayoutEntity,
  dto: CreatePayoutDto,
  by: By,
): Promise<void> {
  const target = {
    object: 'payout' as const,
    id: existing.id,
    key: 'shopPaymentId',
    shopId: existing.shopPaymentId,
    status: existing.status,
    conflicts: existing.idempotencyConflicts,
  };
  const limit = d.config.idempotencyConflictLimit;
  refuseIfLocked(target, limit);
  const fields = differingFields(
    {
      amount: existing.amount.canonicalText(),
      amountType: existing.amountType,
      shopCurrency: existing.shopCurrency,
      payway: existing.payway,
      description: existing.description,
      metadata: existing.metadata ?? {},
    },
    {
      amount: Amount.isValid(dto.amount) ? Amount.parse(dto.amount).canonicalText() : dto.amount,
      amountType: dto.amountType,
      shopCurrency: dto.shopCurrency,
      payway: dto.payway,
      description: dto.description,
      metadata: metadataOf(dto.metadata),
    },
  );
  if (fields.length === 0 && d.fingerprints.matches(existing.requestFingerprint, dto)) return;
  await recordConflict(
    d.dataSource,
    by,
    target,
    limit,
    [...differs(fields), ...secretFieldsSent([dto], PAYOUT_SECRET_FIELDS)],
    'api',
  );
}
