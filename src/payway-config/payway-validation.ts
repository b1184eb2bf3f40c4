/**
 * Pure checks of an invoice request against the payway configuration (shop_input_config/shop):
 * the payway exists and is active, the amount lies within its bounds (compared exactly, when the
 * order is in the payway's currency; see currency-conversion.ts otherwise), and the add-on extras are exactly the payway's fields, each
 * matching its pattern. Everything is checked before a row is written or the gateway is called.
 */
import { Amount } from '../common/money';
import type { FieldError } from '../common/errors';
import type { AddOnField, InputPayway } from '../gateway/gateway.types';
import { checkAmountBounds } from './amount-bounds';
import { boundsCheckFor } from './currency-conversion';

export { checkAmountBounds };

/** `is_active` is a textual boolean ("true") in the interface; the test server sends JSON `true`. */
export function isActive(payway: { is_active?: unknown }): boolean {
  const v = payway.is_active;
  if (typeof v === 'boolean') return v;
  return typeof v === 'string' && v.trim().toLowerCase() === 'true';
}

/** An add-on is required unless its configuration says it is optional. */
export function isRequiredAddOn(field: AddOnField): boolean {
  return !(field.required === false || field.optional === true);
}

/** Fields of the invoice request an extra may not override. */
const RESERVED = new Set([
  'shop_id',
  'shop_order_id',
  'amount',
  'currency',
  'payway',
  'description',
  'client_ip',
  'failed_url',
  'success_url',
  'callback_url',
  'callback_rejected_url',
  'card',
  'issue_payment_token',
  'payment_token',
  'client_info',
  'sign',
  'now',
]);

/** Extras beyond the payway's own fields that are still answered name by name (typos, leftovers). */
export const EXTRAS_SLACK = 16;

/**
 * Extras checked against `add_ons_config`: unknown names refused, required ones present, patterns
 * matched. More names than the payway has fields + EXTRAS_SLACK is one error for `extras`, so the
 * work and the answer do not grow with what a caller packs in.
 */
export function checkExtras(
  extras: Record<string, unknown> | undefined,
  addOns: Record<string, AddOnField>,
  alias: string,
): FieldError[] {
  const errors: FieldError[] = [];
  const given = extras ?? {};
  const limit = Object.keys(addOns).length + EXTRAS_SLACK;
  if (Object.keys(given).length > limit) {
    return [
      {
        field: 'extras',
        message: `has more than ${limit} properties (payway ${alias} has ${limit - EXTRAS_SLACK} add-on fields)`,
      },
    ];
  }
  for (const [name, value] of Object.entries(given)) {
    const field = `extras.${name}`;
    if (RESERVED.has(name)) {
      errors.push({ field, message: 'is a field of the invoice request itself, not an extra' });
    } else if (!Object.prototype.hasOwnProperty.call(addOns, name)) {
      errors.push({ field, message: `is not an add-on field of payway ${alias}` });
    } else if (typeof value !== 'string') {
      errors.push({ field, message: 'must be a string' });
    } else if (value.length > 255) {
      errors.push({ field, message: 'must be at most 255 characters' });
    } else {
      const pattern = compile(addOns[name].regex);
      if (pattern && !pattern.test(value)) {
        errors.push({ field, message: `does not match the pattern ${addOns[name].regex ?? ''}` });
      }
    }
  }
  for (const [name, addOn] of Object.entries(addOns)) {
    if (RESERVED.has(name)) continue;
    if (isRequiredAddOn(addOn) && !Object.prototype.hasOwnProperty.call(given, name)) {
      errors.push({ field: `extras.${name}`, message: `is required by payway ${alias}` });
    }
  }
  return errors;
}

/** A pattern the configuration gives; one that does not compile is left to the gateway. */
function compile(regex: unknown): RegExp | null {
  if (typeof regex !== 'string' || regex === '') return null;
  try {
    return new RegExp(regex);
  } catch {
    return null;
  }
}

export interface PaymentCheckInput {
  payway: string;
  amount: Amount;
  currency: number;
  extras?: Record<string, unknown>;
  /** False for a quote: extras are asked for only at creation. */
  checkExtras: boolean;
  /** For an unknown payway: the closest known aliases (PaywayConfigService.closestAliases). */
  suggestions?: readonly string[];
}

/** Every reason the request does not fit the payway, as field errors (empty: it fits). */
export function checkPaymentAgainstPayway(
  input: PaymentCheckInput,
  payway: InputPayway | undefined,
): FieldError[] {
  const alias = input.payway;
  if (payway === undefined)
    return [{ field: 'payway', message: unknownPaywayMessage(alias, 'payment', input.suggestions) }];
  if (!isActive(payway)) return [{ field: 'payway', message: `${alias} is not active` }];
  const errors: FieldError[] = [];
  // In another currency the bounds are the gateway's pre-calculation's to check (the caller's).
  if (boundsCheckFor(input.currency, payway.currency) === 'local') {
    const bounds = checkAmountBounds(input.amount, payway);
    if (bounds) errors.push({ field: 'amount', message: bounds });
  }
  if (input.checkExtras)
    errors.push(...checkExtras(input.extras, payway.add_ons_config ?? {}, alias));
  return errors;
}

/**
 * An unknown payway's message: the closest known aliases, if any are close, and where all of
 * them are listed.
 */
export function unknownPaywayMessage(
  alias: string,
  direction: 'payment' | 'payout',
  suggestions: readonly string[] = [],
): string {
  const near = suggestions.length > 0 ? ` (did you mean ${suggestions.join(', ')}?)` : '';
  return `${alias} is not a known ${direction} way${near}; GET /api/v1/payways?direction=${direction} lists them`;
}
