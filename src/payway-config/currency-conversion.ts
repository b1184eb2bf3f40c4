/**
 * Orders in another currency than their payway's. The gateway accepts them and prices them in
 * the payway's currency (the test server priced `invoice/try` in USD on a RUB payway as
 * `payer_price` 27051.71, `ps_currency` 643); a payway's limits are in its own currency. So the
 * bounds are checked locally and exactly when the currencies are equal, and otherwise against the
 * gateway's pre-calculation (`invoice/try` → `payer_price`, `withdraw/try` → `payee_receive`).
 */
import type { FieldError } from '../common/errors';
import { Amount } from '../common/money';
import { currencyCodeOf, currencyName } from '../common/currency';
import { checkAmountBounds } from './amount-bounds';

/** `local`: the amount is in the payway's currency; `gateway`: ask the pre-calculation first. */
export type BoundsCheck = 'local' | 'gateway';

/** How a request in `currency` is held against a payway whose currency is `paywayCurrency`. */
export function boundsCheckFor(currency: number, paywayCurrency: unknown): BoundsCheck {
  // A payway without a currency cannot be compared: its bounds (if any) are taken as given.
  if (paywayCurrency === undefined || paywayCurrency === null || paywayCurrency === '')
    return 'local';
  return currencyCodeOf(paywayCurrency) === currency ? 'local' : 'gateway';
}

/** What the gateway's pre-calculation says the order is in the payway's currency. */
export interface PricedAmount {
  /** `payer_price` or `payee_receive`, exact text as received. */
  amount: unknown;
  /** `ps_currency`. */
  currency: unknown;
}

/**
 * The payway's bounds against the converted amount. A price missing, not a decimal, or in a
 * currency other than the payway's cannot be held against its limits: refused on `currency`.
 */
export function checkConvertedBounds(
  priced: PricedAmount,
  payway: { currency?: unknown; min_amount?: unknown; max_amount?: unknown },
): FieldError[] {
  const paywayCurrency = currencyCodeOf(payway.currency);
  const amount = typeof priced.amount === 'string' ? tryAmount(priced.amount) : null;
  if (
    amount === null ||
    paywayCurrency === null ||
    currencyCodeOf(priced.currency) !== paywayCurrency
  ) {
    return [
      {
        field: 'currency',
        message: `cannot be priced in the payway's currency ${shownCurrency(payway.currency)}`,
      },
    ];
  }
  const bound = checkAmountBounds(amount, payway);
  if (bound === null) return [];
  return [
    {
      field: 'amount',
      message: `${bound} in ${currencyName(paywayCurrency)} (it converts to ${amount.toString()})`,
    },
  ];
}

/** A payway's currency as configured, named both ways when it is a code (`RUB (643)`). */
function shownCurrency(value: unknown): string {
  const code = currencyCodeOf(value);
  return code === null ? String(value) : currencyName(code);
}

function tryAmount(text: string): Amount | null {
  try {
    return Amount.fromText(text);
  } catch {
    return null;
  }
}
