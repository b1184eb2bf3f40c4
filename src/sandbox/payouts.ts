import { createHash, randomInt } from 'node:crypto';
import { clock } from '../common/clock';
import {
  accountInfoJson,
  AmountType,
  boundedAmount,
  convert,
  PayoutAmounts,
  payoutAmounts,
  PayoutPayway,
  requestedPayoutPayway,
  withinBounds,
} from './payway-catalogue';
import { Decimal } from './decimal';
import { parsePayway, PaywayChoice } from './faults';
import { JsonOut, moneyJson, textOf } from './json-text';
import { absent, invalid, maskAccount, notUnique, refused, RequestFields } from './protocol';
import type { CallContext, CallHandler, SandboxRuntime } from './runtime';
import { DELAYS_MS } from './runtime';
import { InsufficientFunds, PAYOUT_STATUS, Payout, payoutIsFinal } from './sandbox.state';

/**
 * Payouts and the balance: shop_balance, withdraw/try, check_account, withdraw/create,
 * withdraw/status and withdraw/shop_payment_status. A create freezes the write-off and answers
 * with the payout already sent (3), or rejected (6: `reject`), or still new (1: `pending`); a
 * sent one ends later by itself in its scenario's final status (startPayout): 5 debits the frozen
 * write-off, 6 and 8 return it; `never_final` and `pending` never end.
 */

interface PayoutTerms extends PayoutAmounts {
  choice: PaywayChoice;
  config: PayoutPayway;
  amount: Decimal;
  shopCurrency: number;
}

/**
 * Payway, amount type, currencies and amounts of withdraw/try and withdraw/create. A shop
 * currency other than the payway's is converted at the catalogue's fixed rates: the payway's
 * bounds and fee apply in its own currency (`payee_receive`, `ps_currency`), the write-off is in
 * the shop's (`shop_write_off`, `shop_currency`).
 */
function payoutTerms(ctx: CallContext): PayoutTerms {
  const { fields, rt } = ctx;
  const { choice, config } = requestedPayoutPayway(rt.catalogue, fields);
  const amountType = fields.text('amount_type');
  if (amountType !== 'ps_amount' && amountType !== 'shop_amount') {
    throw invalid('amount_type must be ps_amount or shop_amount');
  }
  const shopCurrency = fields.int('shop_currency');
  const amount = fields.amount('amount');
  // ps_amount is in the payway's currency already; shop_amount is in the shop's.
  const inPayway =
    amountType === 'ps_amount'
      ? amount
      : convert(rt.catalogue, amount, shopCurrency, config.currency);
  withinBounds(inPayway, config);
  const inPs = payoutAmounts(config, inPayway, amountType as AmountType);
  if (inPs.payeeReceive.compare(Decimal.ZERO) <= 0) throw invalid('amount does not cover the fee');
  const shopWriteOff =
    amountType === 'shop_amount'
      ? amount
      : convert(rt.catalogue, inPs.shopWriteOff, config.currency, shopCurrency);
  return { choice, config, amount, shopCurrency, payeeReceive: inPs.payeeReceive, shopWriteOff };
}

/** Every detail named in account_info_config must match its pattern (`account` is top-level). */
function accountProblems(
  config: PayoutPayway,
  account: string,
  details: Record<string, string>,
): string[] {
  return Object.entries(config.account_info_config)
    .filter(
      ([name, rule]) =>
        !new RegExp(rule.regex).test(name === 'account' ? account : (details[name] ?? '')),
    )
    .map(([name]) => name);
}

function accountDetails(fields: RequestFields): Record<string, string> {
  const obj = fields.optionalObject('account_details') ?? {};
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, textOf(v)]));
}

export const withdrawTry: CallHandler = (ctx) => {
  const terms = payoutTerms(ctx);
  return {
    payee_receive: moneyJson(terms.payeeReceive),
    shop_write_off: moneyJson(terms.shopWriteOff),
    ps_currency: terms.config.currency,
    shop_currency: terms.shopCurrency,
    account_info_config: accountInfoJson(terms.config),
  };
};

/** How a refused payee is remembered (sandbox.state.ts `refusedPayees`): a digest, never the account. */
export function payeeKey(account: string): string {
  return createHash('sha256').update(account.replace(/[\s-]/g, '')).digest('hex');
}

/**
 * Accounts ending in 0000 pass the pattern but do not exist, and a payee refused by
 * `POST /sandbox/payees/refuse` cannot be credited: `result: false` (withdraw/create still
 * takes either, as a gateway whose check and create disagree would).
 */
export const checkAccount: CallHandler = (ctx) => {
  const { fields } = ctx;
  const account = fields.text('account', { max: 255 });
  const { config } = requestedPayoutPayway(ctx.rt.catalogue, fields);
  boundedAmount(fields, config);
  const exists =
    accountProblems(config, account, accountDetails(fields)).length === 0 &&
    !account.endsWith('0000') &&
    !ctx.rt.state.refusedPayees.has(payeeKey(account)) &&
    !parsePayway(config.alias).scenarios.has('wallet_does_not_exist');
  if (!exists) return { result: false };
  return { result: true, account_info: { account: maskAccount(account), holder: 'SANDBOX PAYEE' } };
};

export const withdrawCreate: CallHandler = (ctx) => {
  const { fields, rt } = ctx;
  const terms = payoutTerms(ctx);
  const account = fields.text('account', { max: 255 });
  const wrong = accountProblems(terms.config, account, accountDetails(fields));
  if (wrong.length > 0) throw invalid(`${wrong.join(', ')} does not match account_info_config`);
  const shopPaymentId = fields.text('shop_payment_id', { max: 255 });
  fields.optionalText('description', { max: 255 });
  if (rt.state.findPayoutByShopPaymentId(ctx.shopId, shopPaymentId) !== undefined) {
    throw notUnique('shop_payment_id', shopPaymentId);
  }
  const s = terms.choice.scenarios;
  if (s.has('wallet_does_not_exist')) throw refused('the wallet does not exist');
  if (s.has('payment_forbidden')) throw refused('the payment is forbidden');
  try {
    rt.state.freeze(ctx.shopId, terms.shopCurrency, terms.shopWriteOff);
  } catch (e) {
    if (e instanceof InsufficientFunds) throw refused(e.message);
    throw e;
  }
  const now = clock.date();
  const payout: Payout = {
    id: rt.state.newId(),
    shopId: ctx.shopId,
    shopPaymentId,
    payway: terms.choice,
    paywayConfig: terms.config,
    accountMask: maskAccount(account),
    amountType: fields.text('amount_type') as AmountType,
    amount: terms.amount,
    payeeReceive: terms.payeeReceive,
    shopWriteOff: terms.shopWriteOff,
    psCurrency: terms.config.currency,
    shopCurrency: terms.shopCurrency,
    status: PAYOUT_STATUS.NEW,
    errorCode: 0,
    rrn: '',
    bankTransactionId: '',
    created: now,
    updated: now,
  };
  rt.state.payouts.set(payout.id, payout);
  startPayout(rt, payout);
  return {
    id: payout.id,
    balance: moneyJson(rt.state.balance(payout.shopId, payout.shopCurrency).available),
    payee_receive: moneyJson(payout.payeeReceive),
    ps_currency: payout.psCurrency,
    shop_currency: payout.shopCurrency,
    shop_payment_id: payout.shopPaymentId,
    shop_write_off: moneyJson(payout.shopWriteOff),
    status: payout.status,
  };
};

/** When a `slow_final` payout ends, in sandbox time after its creation: 2 hours to 2 days. */
export const SLOW_FINAL_MS = { min: 2 * 3600_000, max: 48 * 3600_000 } as const;

/**
 * Scenarios: `reject` ends in the create answer (6); `pending` stays new (1); the others are sent
 * (3) in the create answer, as on the test server, then `never_final` stays there, `slow_final`
 * ends 2 hours to 2 days later (success, or cancelled for one in four), `fail` ends
 * rejected (6), `decline` cancelled (8), and the rest succeed (5).
 */
function startPayout(rt: SandboxRuntime, payout: Payout): void {
  const s = payout.payway.scenarios;
  if (s.has('reject')) {
    finishPayout(rt, payout, PAYOUT_STATUS.REJECTED);
    return;
  }
  if (s.has('pending')) return;
  moveTo(payout, PAYOUT_STATUS.SENT);
  if (s.has('never_final')) return;
  if (s.has('slow_final')) {
    const final = randomInt(4) === 0 ? PAYOUT_STATUS.CANCELLED : PAYOUT_STATUS.SUCCESS;
    planFinal(rt, payout, final, randomInt(SLOW_FINAL_MS.min, SLOW_FINAL_MS.max + 1));
    return;
  }
  const final = s.has('fail')
    ? PAYOUT_STATUS.REJECTED
    : s.has('decline')
      ? PAYOUT_STATUS.CANCELLED
      : PAYOUT_STATUS.SUCCESS;
  planFinal(rt, payout, final, DELAYS_MS.payoutStep);
}

/** Records the final status and when it is due (so a restart keeps it), then schedules it. */
function planFinal(rt: SandboxRuntime, payout: Payout, status: number, delayMs: number): void {
  payout.finalStatus = status;
  payout.finalAt = new Date(clock.now() + delayMs * rt.state.settings.timeScale);
  scheduleFinal(rt, payout);
}

/** Schedules a payout's planned final status; one overdue after a restart ends at once. */
export function scheduleFinal(rt: SandboxRuntime, payout: Payout): void {
  const { finalStatus, finalAt } = payout;
  if (finalStatus === undefined || finalAt === undefined) return;
  rt.scheduler.afterReal(finalAt.getTime() - clock.now(), () =>
    finishPayout(rt, payout, finalStatus),
  );
}

function moveTo(payout: Payout, status: number): void {
  payout.status = status;
  payout.updated = clock.date();
}

/** The final status: the frozen write-off is debited on success, returned otherwise. */
function finishPayout(rt: SandboxRuntime, payout: Payout, status: number): void {
  if (payoutIsFinal(payout.status)) return;
  const success = status === PAYOUT_STATUS.SUCCESS;
  moveTo(payout, status);
  rt.state.unfreeze(payout.shopId, payout.shopCurrency, payout.shopWriteOff, success);
  if (success) {
    payout.rrn = String(randomInt(100_000_000, 999_999_999)) + String(randomInt(100, 999));
    payout.bankTransactionId = `sbx-${payout.id}`;
  }
}

function payoutRecord(payout: Payout): JsonOut {
  return {
    id: payout.id,
    status: payout.status,
    ps_currency: payout.psCurrency,
    shop_currency: payout.shopCurrency,
    payee_receive: moneyJson(payout.payeeReceive),
    shop_write_off: moneyJson(payout.shopWriteOff),
    shop_payment_id: payout.shopPaymentId,
    error_code: payout.errorCode,
    rrn: payout.rrn,
    bank_transaction_id: payout.bankTransactionId,
  };
}

function ownPayout(ctx: CallContext, payout: Payout | undefined): JsonOut {
  if (payout === undefined || payout.shopId !== ctx.shopId) throw absent('Payout');
  return payoutRecord(payout);
}

export const withdrawStatus: CallHandler = (ctx) => {
  ctx.fields.now();
  return ownPayout(ctx, ctx.rt.state.payouts.get(ctx.fields.int('withdraw_id')));
};

export const shopPaymentStatus: CallHandler = (ctx) => {
  ctx.fields.now();
  const shopPaymentId = ctx.fields.text('shop_payment_id', { max: 255 });
  return ownPayout(ctx, ctx.rt.state.findPayoutByShopPaymentId(ctx.shopId, shopPaymentId));
};

export const shopBalance: CallHandler = (ctx) => {
  ctx.fields.now();
  const balances = [...ctx.rt.state.balancesOf(ctx.shopId).entries()]
    .sort(([a], [b]) => a - b)
    .map(([currency, b]) => ({
      currency,
      available: moneyJson(b.available),
      hold: moneyJson(b.hold),
      frozen: moneyJson(b.frozen),
    }));
  return { shop_id: ctx.shopId, balances };
};
