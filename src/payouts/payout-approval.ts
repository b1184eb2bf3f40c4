import { Amount } from '../common/money';

import type { ApprovalThresholds } from '../config/config';

export type { ApprovalThresholds };

/**
 * How many distinct admin approvals a payout of `amount` in `currency` needs (pure). The dual
 * threshold decides first: at or above it, two, whatever the single threshold says (start-up
 * refuses a dual threshold below the single one of the same currency, so the two never
 * disagree in a running service).
 */
export function approvalsNeeded(
  thresholds: ApprovalThresholds,
  amount: Amount,
  currency: number,
): 0 | 1 | 2 {
  const dual = thresholds.dual.get(currency);
  if (dual !== undefined && amount.gte(dual)) return 2;
  const single = thresholds.single.get(currency);
  if (single !== undefined && amount.gte(single)) return 1;
  return 0;
}

/**
 * The amount a payout is held against its threshold, in its shop currency: the write-off when
 * `withdraw/try` priced it (a `ps_amount` in another currency than the shop's), else the amount
 * itself (a `shop_amount` is the write-off; a `ps_amount` in the shop's own currency is what the
 * recipient receives, the write-off being that plus the fee).
 */
export function amountForApproval(p: { amount: Amount; shopWriteOff?: Amount | null }): Amount {
  return p.shopWriteOff ?? p.amount;
}
