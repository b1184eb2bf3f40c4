import { alphabeticCurrency } from '../common/currency';
import { moneyText } from '../common/money';

/**
 * A timeline entry of an object's page in words: "Refund refund-1001-1 of 500.00 RUB succeeded
 * (gateway notification)", "Invoice order-1 created, awaiting the payer (shop API)". The raw
 * details are folded under the line by the page.
 */

const SUBJECT: Record<string, string> = { invoice: 'Invoice', refund: 'Refund', payout: 'Payout' };

/** The cause of a change as an operator reads it. */
const CAUSE: Record<string, string> = {
  api: 'shop API',
  gateway: 'gateway answer',
  notification: 'gateway notification',
  reconciler: 'reconciliation',
  reconciliation: 'reconciliation',
  poller: 'payout poll',
  operator: 'operator',
  admin: 'operator',
  console: 'operator',
  batch: 'payout batch',
  scheduler: 'scheduled check',
  job: 'scheduled check',
  clock: 'hold lifetime',
};

/** A status as words: the gateway's upper-case names and the service's snake case alike. */
export function statusWords(status: string): string {
  const special: Record<string, string> = {
    SUCCESS: 'succeeded',
    WAITING: 'waiting',
    FAILED: 'failed',
    awaiting_payer: 'awaiting the payer',
    awaiting_approval: 'awaiting approval',
    needs_attention: 'needing attention',
    ps_create_failed: "the payment system's create failed",
    ps_notice_failed: "the payment system's notice failed",
  };
  return special[status] ?? status.toLowerCase().replaceAll('_', ' ');
}

export function causeWords(cause: string): string {
  return CAUSE[cause] ?? cause.replaceAll('_', ' ');
}

export interface TimelineObject {
  type: string;
  id: string;
  amount: string | null;
  currency: number | null;
}

export function eventTitle(
  object: TimelineObject,
  fromStatus: string | null,
  toStatus: string,
  cause: string,
): string {
  const code = alphabeticCurrency(object.currency);
  const money =
    object.amount !== null ? ` of ${moneyText(object.amount, object.currency)}${code ? ` ${code}` : ''}` : '';
  const subject = `${SUBJECT[object.type] ?? object.type} ${object.id}${money}`;
  const what =
    fromStatus === null
      ? `created, ${statusWords(toStatus)}`
      : fromStatus === toStatus
        ? `updated (still ${statusWords(toStatus)})`
        : statusWords(toStatus);
  return `${subject} ${what} (${causeWords(cause)})`;
}
