/**
 * Every rule of a refund, each a named function (the state machine and the gateway-record rule
 * live in refund.state.ts and are re-exported here, so the next path finds them by name):
 *
 * - how much of an invoice may still be refunded: `refundableAmountOf` (one rule, also behind
 *   the invoice body's `refundableAmount`), and whether a new refund fits it: `fitsPaidAmount`;
 * - which status moves are allowed: `decideRefundTransition`;
 * - what a gateway record or an absence means for a refund: `judgeRefund`;
 * - what a create call's answer means: `outcomeOfCreate`;
 * - when a WAITING refund is asked about again: `nextRefundCheck`.
 */
import { Amount } from '../common/money';
import { refundableAmountOf } from '../invoices/invoice-refund-sums';

export { refundableAmountOf };
export {
  decideRefundTransition,
  judgeRefund,
  nextRefundCheck,
  outcomeOfCreate,
} from './refund.state';

/**
 * Would a new refund of `amount` keep the refunds that count (not FAILED: `counted`) within what
 * was paid? The room is refundableAmountOf's for the paid (succeeded) invoice; a refund of
 * nothing never fits.
 */
export function fitsPaidAmount(paid: Amount, counted: Amount[], amount: Amount): boolean {
  return (
    amount.isPositive() &&
    amount.lte(refundableAmountOf({ amount: paid, status: 'succeeded' }, counted))
  );
}
