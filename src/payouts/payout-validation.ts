import type { FieldError } from '../common/errors';
import { minorUnitsProblem } from '../common/currency';
import { Amount } from '../common/money';
import type { OutputPayway } from '../gateway/gateway.types';
import { checkAmountBounds } from '../payway-config/payway-validation';

/**
 * Pure checks of a payout request against its output payway, all before a row is written or the
 * gateway is called: the amount is an exact decimal within the payway's bounds, and the
 * recipient matches `account_info_config` (the detail named `account` applies to `account`,
 * every other name to the `accountDetails` key of that name; each missing one is named).
 */
export function amountProblems(
  amount: string,
  payway: OutputPayway,
  amountType: 'ps_amount' | 'shop_amount' = 'ps_amount',
): FieldError[] {
  if (!Amount.isValid(amount))
    return [{ field: 'amount', message: 'must be a decimal string with at most 8 decimals' }];
  const parsed = Amount.parse(amount);
  if (!parsed.isPositive()) return [{ field: 'amount', message: 'must be greater than 0' }];
  // A ps_amount is in the payway's currency (a shop_amount's shopCurrency is checked by the DTO).
  const tooFine = amountType === 'ps_amount' ? minorUnitsProblem(amount, payway.currency) : null;
  if (tooFine) return [{ field: 'amount', message: tooFine }];
  const bound = checkAmountBounds(parsed, payway);
  return bound ? [{ field: 'amount', message: bound }] : [];
}

export function accountProblems(
  account: string,
  accountDetails: Record<string, unknown> | undefined,
  payway: OutputPayway,
): FieldError[] {
  const config = payway.account_info_config ?? {};
  const details = accountDetails ?? {};
  const errors: FieldError[] = [];
  for (const [name, rule] of Object.entries(config)) {
    const field = name === 'account' ? 'account' : `accountDetails.${name}`;
    const value = name === 'account' ? account : details[name];
    if (value === undefined || value === null || value === '') {
      errors.push({ field, message: `is required (${rule.title ?? name})` });
    } else if (typeof value !== 'string') {
      errors.push({ field, message: 'must be a string' });
    } else if (value.length > 255) {
      // Bounded before any pattern runs: the gateway's pattern meets only short caller text.
      errors.push({ field, message: 'must be at most 255 characters' });
    } else if (!matchesPattern(rule.regex, value)) {
      errors.push({ field, message: `does not match the pattern of ${rule.title ?? name}` });
    }
  }
  for (const name of Object.keys(details)) {
    if (name === 'account' || !(name in config)) {
      errors.push({
        field: `accountDetails.${name}`,
        message: `is not a detail of payway ${payway.alias}`,
      });
    }
  }
  return errors;
}

/** A pattern from the payway configuration (never from the caller); one that does not compile is left to the gateway. */
function matchesPattern(regex: unknown, value: string): boolean {
  if (typeof regex !== 'string' || regex === '') return true;
  try {
    return new RegExp(regex).test(value);
  } catch {
    return true;
  }
}
