import { Amount } from '../common/money';

import type { ApprovalThresholds } from '../config/config';

export type { ApprovalThresholds };

/**
 * How many distinct admin approvals a payout writing off `amount` in `currency` needs (pure):
 * `amount` is its write-off (payout.rules.ts `controlWriteOff`), never a `ps_amount`'s amount. The dual
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
