import type { SealContext } from '../common/key-ring';

/** A payout's sealed recipient opens only as `account_sealed` of its own row. */
export function accountContext(payoutId: string): SealContext {
  return { table: 'payouts', column: 'account_sealed', rowId: payoutId };
}

/**
 * A payout request's secret fields (the recipient, sealed on the row): a conflict answer never
 * compares them one by one and names only those the repeat sent (secretFieldsSent).
 */
export const PAYOUT_SECRET_FIELDS = ['account', 'accountDetails'] as const;
