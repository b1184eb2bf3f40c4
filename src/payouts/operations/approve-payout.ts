import { DataSource, EntityManager } from 'typeorm';
import { NotFound, SealedValueUnreadable } from '../../common/errors';
import { transactionFor, type By } from '../../common/actor';
import { callLeaseSeconds } from '../../jobs/in-flight';
import { INSTANCE_ID } from '../../jobs/instance';
import { type Admission } from '../payout-controls';
import { toPayoutView, type PayoutView } from '../dto/payout.view';
import {
  ApproverUnknown,
  NotAwaitingApproval,
  SameApproverTwice,
  SelfApproval,
} from '../payout.errors';
import { approvalsNeeded } from '../payout-approval';
import {
  approvalsToSend,
  countingApprovals,
  firstPollGraceS,
  mayApprove,
  SEND_STAMP_SQL,
} from '../payout.rules';
import { PayoutEntity } from '../payout.entity';
import { write } from '../payout-transitions';
import { keepSight, sightForApproval } from '../payee-check';
import { sendClaimed } from './create-payout';
import {
  findPayout,
  lockPayout,
  unsealRecipient,
  type PayoutDeps,
  type SealedRecipient,
} from './payout-deps';

/**
 * Approving a payout awaiting approval (admin routes and the console): four eyes and the approvals
 * that count (payout.rules.ts), then the last approval admits and sends it.
 */

/** The approvals given so far of each payout in `$1` (uuid[]), oldest first. */
const APPROVALS_SQL = `SELECT payout_id, key_id FROM payout_approvals
  WHERE payout_id = ANY($1::uuid[]) AND decision = 'approve' ORDER BY created_at`;

/** The last approval was reached without the send's admission read beforehand: read it, then again. */
class LastApprovalUnprepared extends Error {
  constructor(readonly payout: PayoutEntity) {
    super('the last approval needs its admission read first');
  }
}

/**
 * An admin key approves a payout awaiting approval. Under the row's lock: the creating key
 * never approves (403 `self-approval`); the decision is recorded once per key (the table's
 * primary key: the same key again is 409 `same-approver`); the approvals that count
 * (countingApprovals: keys still configured, never the creator's) are counted; while fewer
 * than the payout needs, it stays awaiting; the last one admits the send against the caps of
 * today and the balance (holdSend: 422 and nothing recorded, it stays awaiting), writes
 * `payout.approved`, moves it to `pending` and claims its create (owner, lease, attempt 1,
 * `sent_at`) conditionally on the status it just read, so concurrent approvals send it once.
 * Then the create's own phases 2 and 3 send it.
 */
export async function approve(
  d: PayoutDeps,
  shopPaymentId: string,
  by: By,
  note?: string,
): Promise<PayoutView> {
  const keyId = approverKeyId(by);
  const pre = await findPayout(d, shopPaymentId);
  // The gateway reads the send's admission needs (write-off, balance) are made with nothing
  // held, before the transaction, when this approval looks like the last one.
  let admission =
    pre !== null && pre.status === 'awaiting_approval' && (await wouldSend(d, pre, keyId))
      ? await admissionOf(d, pre)
      : null;
  // What the approver is judged on (payee-check.ts): a refused account without a note stops here.
  const sight = await sightForApproval(d, pre, keyId, note);
  const run = (a: Admission | null) =>
    transactionFor(d.dataSource, by, async (m) =>
      keepSight(m, await approveLocked(d, m, shopPaymentId, keyId, note, a), keyId, sight),
    );
  let claimed: Awaited<ReturnType<typeof approveLocked>>;
  try {
    claimed = admission === null ? await run(null) : await d.controls.retryStale(admission, run);
  } catch (err) {
    // The last approval after all (another key approved meanwhile): admitted now, once.
    if (!(err instanceof LastApprovalUnprepared)) throw err;
    admission = await admissionOf(d, err.payout);
    claimed = await d.controls.retryStale(admission, run);
  }
  if (!claimed.send) return toPayoutView(claimed.p);
  return sendClaimed(d, claimed.p, claimed.recipient, 'admin', claimed.attempt, by, (_m, p) =>
    Promise.resolve(toPayoutView(p)),
  );
}

export async function approveLocked(
  d: PayoutDeps,
  m: EntityManager,
  shopPaymentId: string,
  keyId: string,
  note: string | undefined,
  admission: Admission | null,
): Promise<
  | { p: PayoutEntity; send: false }
  | { p: PayoutEntity; send: true; recipient: SealedRecipient; attempt: number }
> {
  const { pollMaxS } = d.config.payouts;
  const leaseS = callLeaseSeconds(d.config.gateway.timeoutMs);
  const graceS = firstPollGraceS(d.config.gateway.timeoutMs, d.config.payouts.pollIntervalS);
  const p = await lockAwaiting(d, m, shopPaymentId, 'approve');
  if (!mayApprove(keyId, p.createdByKeyId)) throw new SelfApproval(shopPaymentId);
  const added = (await m.query(
    `INSERT INTO payout_approvals (payout_id, key_id, decision, note) VALUES ($1, $2, 'approve', $3)
     ON CONFLICT (payout_id, key_id) DO NOTHING RETURNING key_id`,
    [p.id, keyId, note ?? null],
  )) as unknown[];
  if (added.length === 0) throw new SameApproverTwice(shopPaymentId);
  const n = countingOf(d, p, await approverKeyIds(m, p.id)).length;
  // The thresholds weigh the write-off: one known now (quoted for the send's admission) may need
  // more approvals than the payout was stored with (held before its write-off was quoted); never fewer.
  const judged =
    admission === null
      ? 0
      : approvalsNeeded(d.config.payoutApproval, admission.share, p.shopCurrency);
  if (judged > p.approvalsRequired) {
    await m.update(PayoutEntity, { id: p.id }, { approvalsRequired: judged });
    p.approvalsRequired = judged;
  }
  const required = approvalsToSend(p);
  const details = { call: 'approve', approval: n, of: required, note: note ?? null };
  if (n < required) {
    await d.audit.record(m, {
      entityType: 'payout',
      entityId: p.shopPaymentId,
      rowId: p.id,
      fromStatus: p.status,
      toStatus: p.status,
      cause: 'admin',
      details,
    });
    return { p, send: false };
  }
  if (admission === null) throw new LastApprovalUnprepared(p);
  // Opened before anything is written: an account that cannot be read leaves it awaiting.
  const recipient = recipientOf(d, p);
  // The caps of the day it is sent and the balance, under the send's lock: 422 rolls back.
  await d.controls.holdSend(m, admission, p.id);
  await d.audit.record(m, {
    entityType: 'payout',
    entityId: p.shopPaymentId,
    rowId: p.id,
    fromStatus: p.status,
    toStatus: p.status,
    cause: 'admin',
    notice: 'approved',
    details,
  });
  await write(m, p, 'pending', 'admin', details);
  const claim = (await m.query(
    `UPDATE payouts SET create_attempts = create_attempts + 1, last_create_at = ${SEND_STAMP_SQL}, sent_at = ${SEND_STAMP_SQL},
       call_owner = $2, call_started_at = ${SEND_STAMP_SQL},
       call_lease_until = clock_now() + make_interval(secs => $3::float8),
       next_poll_at = clock_now() + make_interval(secs => $4::float8),
       poll_deadline = clock_now() + make_interval(secs => $5::float8), updated_at = clock_now()
     WHERE id = $1 AND status = 'pending' AND create_attempts = 0 AND call_owner IS NULL
     RETURNING create_attempts, sent_at`,
    [p.id, INSTANCE_ID, leaseS, graceS, pollMaxS],
  )) as [Array<{ create_attempts: number; sent_at: Date }>, number];
  if (claim[0].length !== 1) throw new NotAwaitingApproval(shopPaymentId, p.status, 'approve');
  p.sentAt = claim[0][0].sent_at;
  return { p, send: true, recipient, attempt: claim[0][0].create_attempts };
}

/** Whether `keyId`'s approval would be the last one `p` needs (read with nothing held). */
export async function wouldSend(d: PayoutDeps, p: PayoutEntity, keyId: string): Promise<boolean> {
  const keys = [...(await approverKeyIds(d.dataSource, p.id)), keyId];
  return countingOf(d, p, keys).length >= approvalsToSend(p);
}

/** What the send of `p` is admitted with (its recipient opened to find its blind indexes). */
export function admissionOf(d: PayoutDeps, p: PayoutEntity): Promise<Admission> {
  return d.controls.prepareSend(p, recipientOf(d, p).account);
}

export function recipientOf(d: PayoutDeps, p: PayoutEntity): SealedRecipient {
  try {
    return unsealRecipient(d, p);
  } catch {
    throw new SealedValueUnreadable('account', 'payout account');
  }
}

/** The key ids that approved payout `id` so far, oldest first. */
export async function approverKeyIds(m: EntityManager | DataSource, id: string): Promise<string[]> {
  const rows = (await m.query(APPROVALS_SQL, [[id]])) as Array<{ key_id: string }>;
  return rows.map((r) => r.key_id);
}

/** Rule "which approvals count" for `p`, against the admin keys configured now. */
export function countingOf(
  d: PayoutDeps,
  p: Pick<PayoutEntity, 'createdByKeyId'>,
  keyIds: readonly string[],
): string[] {
  return countingApprovals(keyIds, d.adminKeyIds, p.createdByKeyId);
}

/** Payouts awaiting approval, oldest first, with the key ids that approved each so far. */
export async function awaitingApproval(
  d: PayoutDeps,
  limit = 500,
): Promise<Array<PayoutView & { approvalsRequired: number; approvedBy: string[] }>> {
  const rows = await d.dataSource
    .getRepository(PayoutEntity)
    .createQueryBuilder('p')
    .where('p.shop_id = :shopId', { shopId: d.shopId })
    .andWhere(`p.status = 'awaiting_approval'`)
    .orderBy('p.created_at', 'ASC')
    .addOrderBy('p.id', 'ASC')
    .take(limit)
    .getMany();
  if (rows.length === 0) return [];
  const approvals = (await d.dataSource.query(APPROVALS_SQL, [rows.map((r) => r.id)])) as Array<{
    payout_id: string;
    key_id: string;
  }>;
  return rows.map((p) => ({
    ...toPayoutView(p),
    approvalsRequired: approvalsToSend(p),
    approvedBy: countingOf(
      d,
      p,
      approvals.filter((a) => a.payout_id === p.id).map((a) => a.key_id),
    ),
  }));
}

/** The acting admin key's id: approvals are recorded under it (never the key itself). */
export function approverKeyId(by: By): string {
  if (by === undefined || by.role !== 'admin') throw new ApproverUnknown();
  return by.keyId;
}

export async function lockAwaiting(
  d: PayoutDeps,
  m: EntityManager,
  shopPaymentId: string,
  action: 'approve' | 'reject',
): Promise<PayoutEntity> {
  const p = await lockPayout(m, { shopId: d.shopId, shopPaymentId });
  if (p === null) throw new NotFound('Payout', shopPaymentId);
  if (p.status !== 'awaiting_approval')
    throw new NotAwaitingApproval(shopPaymentId, p.status, action);
  return p;
}
