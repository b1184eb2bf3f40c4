import type { SealContext } from '../common/key-ring';

/** A payout's sealed recipient opens only as `account_sealed` of its own row. */
export function accountContext(payoutId: string): SealContext {
  return { table: 'payouts', column: 'account_sealed', rowId: payoutId };
}
