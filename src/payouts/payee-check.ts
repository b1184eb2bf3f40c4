import type { EntityManager } from 'typeorm';
import { clock } from '../common/clock';
import { DomainError, NotFound } from '../common/errors';
import { Amount, moneyText } from '../common/money';
import { isSensitiveField, scrubText } from '../common/redact';
import { GatewayError, GatewayTransportError } from '../gateway';
import { maskAccount } from './account-mask';
import { toPayoutView } from './dto/payout.view';
import type {
  ApprovalSeen,
  FeeQuoteSeen,
  PayeeCheckSeen,
  PayoutApprovalView,
} from './dto/payout-approval.view';
import type { PayoutEntity } from './payout.entity';
import { approvalsToSend, countingApprovals, mayApprove } from './payout.rules';
import { findPayout, unsealRecipient, type PayoutDeps } from './operations/payout-deps';

/**
 * What an approver is shown before approving a payout: the gateway asked fresh, with nothing
 * held, for `check_account` on the payout's account and payway and for the fee `withdraw/try`
 * quotes, each with the time it was asked. Neither call sends anything. An approval of an
 * account the gateway says cannot be credited needs a note (`payee-check-failed`); each
 * approval keeps the check and the quote it was judged on (payout_approvals).
 */

/** What an approval is judged on: the check and the quote asked for it. */
export interface Sight {
  check: PayeeCheckSeen;
  quote: FeeQuoteSeen;
}

/** The gateway said the account cannot be credited and the approval gave no note. */
export class PayeeCheckFailed extends DomainError {
  constructor(shopPaymentId: string, checkedAt: string) {
    super(
      'payee-check-failed',
      422,
      'The gateway says the account cannot be credited',
      `payout ${shopPaymentId}: check_account (asked ${checkedAt}) says its account cannot be credited; ` +
        'approving it anyway needs a note saying why',
      { errors: [{ field: 'note', message: 'is required: the gateway says the account cannot be credited' }] },
    );
  }
}

/** Whether a check obliges an approval to give a note: only the gateway's own "cannot be credited". */
export function noteRequired(check: PayeeCheckSeen | null): boolean {
  return check?.result === 'refused';
}

const MAX_INFO_KEYS = 10;
const MAX_INFO_TEXT = 200;

/**
 * The gateway's `account_info`, as it may be shown and stored: scalar values only, a sensitive
 * field (the account, a card) masked, card-number-like runs masked in every text.
 */
export function shownAccountInfo(info: unknown): Record<string, string> | null {
  if (info === null || typeof info !== 'object' || Array.isArray(info)) return null;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(info as Record<string, unknown>).slice(0, MAX_INFO_KEYS)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') continue;
    const text = String(v).slice(0, MAX_INFO_TEXT);
    out[scrubText(k).slice(0, 40)] = isSensitiveField(k) ? maskAccount(text) : scrubText(text);
  }
  return out;
}

/** A failed read-only call as shown: the gateway's code and message, or how the transport failed. */
function failure(err: unknown): { gatewayErrorCode: number | null; gatewayMessage: string } {
  if (err instanceof GatewayError)
    return { gatewayErrorCode: err.errorCode, gatewayMessage: scrubText(err.gatewayMessage).slice(0, 500) };
  if (err instanceof GatewayTransportError)
    return { gatewayErrorCode: null, gatewayMessage: `no usable answer (${err.kind})` };
  return { gatewayErrorCode: null, gatewayMessage: 'the call failed' };
}

const askedNow = (): string => clock.date().toISOString();

async function askCheck(d: PayoutDeps, p: PayoutEntity): Promise<PayeeCheckSeen> {
  try {
    const recipient = unsealRecipient(d, p);
    // The account check weighs the amount the payee is paid in the payway's currency.
    const amount = p.amountType === 'ps_amount' ? p.amount : (p.payeeReceive ?? p.amount);
    const r = await d.gateway.checkAccount({
      account: recipient.account,
      amount: amount.toString(),
      payway: p.payway,
      account_details: recipient.accountDetails,
    });
    const ok = r.result === true;
    return {
      result: ok ? 'ok' : 'refused',
      canBeCredited: ok,
      accountInfo: ok ? shownAccountInfo(r.account_info) : null,
      gatewayErrorCode: null,
      gatewayMessage: null,
      checkedAt: askedNow(),
    };
  } catch (err) {
    if (err instanceof DomainError) throw err;
    return { result: 'unavailable', canBeCredited: null, accountInfo: null, ...failure(err), checkedAt: askedNow() };
  }
}

async function askQuote(d: PayoutDeps, p: PayoutEntity): Promise<FeeQuoteSeen> {
  try {
    const recipient = unsealRecipient(d, p);
    const r = await d.gateway.tryWithdraw({
      amount: p.amount.toString(),
      amount_type: p.amountType,
      payway: p.payway,
      shop_currency: p.shopCurrency,
      account: recipient.account,
      account_details: recipient.accountDetails,
    });
    const payeeReceive = moneyText(String(r.payee_receive), r.ps_currency);
    const shopWriteOff = moneyText(String(r.shop_write_off), r.shop_currency);
    return {
      result: 'ok',
      payeeReceive,
      psCurrency: r.ps_currency,
      shopWriteOff,
      shopCurrency: r.shop_currency,
      // The fee is write-off − payee receive, when both are in one currency.
      fee:
        r.ps_currency === r.shop_currency
          ? moneyText(Amount.fromText(shopWriteOff).minus(Amount.fromText(payeeReceive)), r.shop_currency)
          : null,
      gatewayErrorCode: null,
      gatewayMessage: null,
      quotedAt: askedNow(),
    };
  } catch (err) {
    if (err instanceof DomainError) throw err;
    return {
      result: 'unavailable',
      payeeReceive: null,
      psCurrency: null,
      shopWriteOff: null,
      shopCurrency: p.shopCurrency,
      fee: null,
      ...failure(err),
      quotedAt: askedNow(),
    };
  }
}

/** Asks the gateway, both calls at once, with nothing held. */
export async function askSight(d: PayoutDeps, p: PayoutEntity): Promise<Sight> {
  const [check, quote] = await Promise.all([askCheck(d, p), askQuote(d, p)]);
  return { check, quote };
}

/**
 * Before an approval: the check and the quote it is judged on, asked fresh (none when the
 * payout is not there, not awaiting approval, or the key may not approve it: the approval is
 * refused for that without asking the gateway). A refused check without a note is
 * `payee-check-failed`, before anything is written.
 */
export async function sightForApproval(
  d: PayoutDeps,
  p: PayoutEntity | null,
  keyId: string,
  note: string | undefined,
): Promise<Sight | null> {
  if (p === null || p.status !== 'awaiting_approval' || !mayApprove(keyId, p.createdByKeyId)) return null;
  const sight = await askSight(d, p);
  if (noteRequired(sight.check) && (note === undefined || note.trim() === ''))
    throw new PayeeCheckFailed(p.shopPaymentId, sight.check.checkedAt);
  return sight;
}

/**
 * Keeps the sight on the approval just recorded, in the approval's own transaction, and hands
 * back what the approval answered.
 */
export async function keepSight<T extends { p: PayoutEntity }>(
  m: EntityManager,
  approved: T,
  keyId: string,
  sight: Sight | null,
): Promise<T> {
  if (sight !== null)
    await m.query(
      `UPDATE payout_approvals SET payee_check = $3::jsonb, fee_quote = $4::jsonb
       WHERE payout_id = $1 AND key_id = $2 AND decision = 'approve'`,
      [approved.p.id, keyId, JSON.stringify(sight.check), JSON.stringify(sight.quote)],
    );
  return approved;
}

/** Every decision on payout `id` with what its approver was shown, oldest first. */
async function decisionsOf(d: PayoutDeps, id: string): Promise<ApprovalSeen[]> {
  const rows = (await d.dataSource.query(
    `SELECT key_id, decision, note, created_at, payee_check, fee_quote
       FROM payout_approvals WHERE payout_id = $1 ORDER BY created_at, key_id`,
    [id],
  )) as Array<{
    key_id: string;
    decision: 'approve' | 'reject';
    note: string | null;
    created_at: Date;
    payee_check: PayeeCheckSeen | null;
    fee_quote: FeeQuoteSeen | null;
  }>;
  return rows.map((r) => ({
    keyId: r.key_id,
    decision: r.decision,
    note: r.note,
    decidedAt: r.created_at.toISOString(),
    check: r.payee_check,
    quote: r.fee_quote,
  }));
}

/**
 * `GET /admin/payouts/{id}/approval` and the console's approval form: for a payout awaiting
 * approval, the check and the quote asked now; for any payout, what each decision was shown.
 */
export async function approvalView(d: PayoutDeps, shopPaymentId: string): Promise<PayoutApprovalView> {
  const p = await findPayout(d, shopPaymentId);
  if (p === null) throw new NotFound('Payout', shopPaymentId);
  const awaiting = p.status === 'awaiting_approval';
  const sight = awaiting ? await askSight(d, p) : null;
  const decisions = await decisionsOf(d, p.id);
  return {
    payout: toPayoutView(p),
    approvalsRequired: approvalsToSend(p),
    approvedBy: countingApprovals(
      decisions.filter((x) => x.decision === 'approve').map((x) => x.keyId),
      d.adminKeyIds,
      p.createdByKeyId,
    ),
    check: sight?.check ?? null,
    quote: sight?.quote ?? null,
    noteRequired: noteRequired(sight?.check ?? null),
    decisions,
  };
}
