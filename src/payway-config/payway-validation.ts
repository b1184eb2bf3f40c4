/**
 * Pure checks of an invoice request against the payway configuration (shop_input_config/shop):
 * the payway exists and is active, the currency is the payway's, the amount lies within its
 * bounds (compared exactly), and the add-on extras are exactly the payway's fields, each
 * matching its pattern. Everything is checked before a row is written or the gateway is called.
 */
import { Amount } from '../common/money';
import type { FieldError } from '../common/errors';
import type { AddOnField, InputPayway } from '../gateway/gateway.types';

/** `card_rub[mock_server,success]` → `card_rub`: scenario tags are not part of the alias. */
export function baseAlias(payway: string): string {
  const open = payway.indexOf('[');
  return open < 0 ? payway : payway.slice(0, open);
}

/** `is_active` is a textual boolean ("true"); a real boolean is accepted too. */
export function isActive(payway: { is_active?: unknown }): boolean {
  const v = payway.is_active;
  if (typeof v === 'boolean') return v;
  return typeof v === 'string' && v.trim().toLowerCase() === 'true';
}

/** Amount bounds of a payway, compared exactly; a missing bound does not limit. */
export function checkAmountBounds(
  amount: Amount,
  payway: { min_amount?: unknown; max_amount?: unknown },
): string | null {
  const min = boundOf(payway.min_amount);
  const max = boundOf(payway.max_amount);
  if (min !== null && amount.lt(min)) return `must be at least ${min.toString()}`;
  if (max !== null && amount.gt(max)) return `must be at most ${max.toString()}`;
  return null;
}

function boundOf(v: unknown): Amount | null {
  if (typeof v === 'string' && v.trim() !== '') return Amount.fromText(v);
  // The gateway client parses money exactly into strings; a bigint/number only from hand-made config.
  if (typeof v === 'bigint') return Amount.fromText(v.toString());
  return null;
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

/** Extras checked against `add_ons_config`: unknown names refused, required ones present, patterns matched. */
export function checkExtras(
  extras: Record<string, unknown> | undefined,
  addOns: Record<string, AddOnField>,
  alias: string,
): FieldError[] {
  const errors: FieldError[] = [];
  const given = extras ?? {};
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
}

/** Every reason the request does not fit the payway, as field errors (empty: it fits). */
export function checkPaymentAgainstPayway(
  input: PaymentCheckInput,
  payway: InputPayway | undefined,
): FieldError[] {
  const alias = baseAlias(input.payway);
  if (payway === undefined)
    return [{ field: 'payway', message: `${alias} is not a known payment way` }];
  if (!isActive(payway)) return [{ field: 'payway', message: `${alias} is not active` }];
  const errors: FieldError[] = [];
  if (payway.currency !== undefined && Number(payway.currency) !== input.currency) {
    errors.push({
      field: 'currency',
      message: `must be ${String(payway.currency)} for payway ${alias}`,
    });
  }
  const bounds = checkAmountBounds(input.amount, payway);
  if (bounds) errors.push({ field: 'amount', message: bounds });
  if (input.checkExtras)
    errors.push(...checkExtras(input.extras, payway.add_ons_config ?? {}, alias));
  return errors;
}
