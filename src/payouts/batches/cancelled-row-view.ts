import { alphabeticCurrency, parseCurrencyInput } from '../../common/currency';
import { moneyText } from '../../common/money';
import { maskAccount } from '../account-mask';
import type { PayoutView } from '../dto/payout.view';
import type { AmountType } from '../payout.entity';

/**
 * The payout view of a batch row cancelled before it was sent (its `payout.cancelled` event's
 * data, as every payout event carries a PayoutView): the row as it was asked for, `cancelled`,
 * never sent (no withdraw id, no gateway status, nothing quoted, nothing polled: its poll
 * deadline is the moment it was cancelled), the account masked as everywhere.
 */
export function cancelledRowView(row: {
  request: Record<string, unknown>;
  /** The row's recipient, opened: only its account is shown, masked. */
  account: string;
  createdAt: Date;
  cancelledAt: Date;
}): PayoutView {
  const r = row.request;
  const shopCurrency = parseCurrencyInput(r.shopCurrency) ?? 0;
  const metadata = r.metadata;
  return {
    shopPaymentId: String(r.shopPaymentId),
    withdrawId: null,
    status: 'cancelled',
    gatewayStatus: null,
    // A ps_amount is in the payway's currency: not quoted, so written as the shop's (toPayoutView does the same).
    amount: moneyText(String(r.amount), shopCurrency),
    amountType: r.amountType as AmountType,
    shopCurrency,
    shopCurrencyCode: alphabeticCurrency(shopCurrency),
    psCurrency: null,
    payeeReceive: null,
    shopWriteOff: null,
    payway: String(r.payway),
    account: maskAccount(row.account),
    errorCode: null,
    nextPollAt: null,
    pollDeadline: row.cancelledAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.cancelledAt.toISOString(),
    needsAttention: false,
    attentionReason: null,
    metadata:
      metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata)
        ? (metadata as Record<string, string>)
        : {},
  };
}
