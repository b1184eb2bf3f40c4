import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
// Type-only and erased, yet it keeps catalogue.json in the program, so the build copies it next
// to this module; it is read at run time (a JSON import would need an import attribute under ESM).
import type {} from './catalogue.json';
import { Decimal, MONEY_SCALE } from './decimal';
import { parsePayway, PaywayChoice } from './faults';
import { decimalJson, JsonOut } from './json-text';
import { invalid, RequestFields } from './protocol';

/**
 * The payways the sandbox offers (catalogue.json, or a file given by `cataloguePath`), the fee
 * maths on them, and the answers of `shop_input_config/shop` and `shop_output_config/shop`.
 * Amounts and fee settings are decimal text in the file and stay exact.
 */

export interface AddOnField {
  regex: string;
  label?: Record<string, string>;
  comment?: Record<string, string>;
  example?: string;
  prefix?: string;
}

export interface PaymentPayway {
  id: number;
  alias: string;
  currency: number;
  min_amount: string;
  max_amount: string;
  fee_config: { percent: string; fix: string };
  /** Shares (0..1) of the percent fee and of the fixed fee that the payer pays on top. */
  fee_part_config: { percent_part: string; fix_part: string };
  is_active: string;
  add_ons_config: Record<string, AddOnField>;
  paymethod_id: number;
  paymethod_name: string;
  /** `card`: POST redirect to the payer page, card data and 3-D Secure; `wallet`: GET redirect. */
  kind: 'card' | 'wallet';
  two_step: boolean;
  tokens: boolean;
  card_data: boolean;
  info: Record<string, string>;
  manual: Record<string, string>;
  warning: Record<string, string>;
}

export interface AccountInfoField {
  regex: string;
  title: string;
}

export interface PayoutPayway {
  alias: string;
  currency: number;
  min_amount: string;
  max_amount: string;
  fee_config: { percent: string; fix: string };
  account_info_config: Record<string, AccountInfoField>;
  paysystem_data: Record<string, string>;
}

export interface PaywayGroup<P> {
  id: number;
  name: string;
  rating: number;
  payways: P[];
}

export interface Catalogue {
  payment_groups: PaywayGroup<PaymentPayway>[];
  payout_groups: PaywayGroup<PayoutPayway>[];
  /** Seed balances: currency code and available amount. */
  balances: { currency: number; available: string }[];
}

export class CatalogueError extends Error {
  constructor(where: string, problem: string) {
    super(`Sandbox catalogue: ${where} ${problem}`);
    this.name = 'CatalogueError';
  }
}

type Checker = (value: unknown, where: string) => void;

function expect(ok: boolean, where: string, what: string): void {
  if (!ok) throw new CatalogueError(where, `must be ${what}`);
}

const isText: Checker = (v, w) => expect(typeof v === 'string', w, 'a string');
const isInt: Checker = (v, w) => expect(Number.isSafeInteger(v), w, 'a whole number');
const isBool: Checker = (v, w) => expect(typeof v === 'boolean', w, 'true or false');
const isDecimal: Checker = (v, w) =>
  expect(typeof v === 'string' && Decimal.isDecimalText(v), w, 'decimal text such as "10.50"');
const isRegex: Checker = (v, w) => {
  isText(v, w);
  try {
    new RegExp(v as string);
  } catch {
    expect(false, w, 'a valid regular expression');
  }
};

function isObject(value: unknown, where: string): Record<string, unknown> {
  expect(typeof value === 'object' && value !== null && !Array.isArray(value), where, 'an object');
  return value as Record<string, unknown>;
}

function isArray(value: unknown, where: string): unknown[] {
  expect(Array.isArray(value), where, 'a list');
  return value as unknown[];
}

function fields(value: unknown, where: string, checks: Record<string, Checker>): void {
  const obj = isObject(value, where);
  for (const [key, check] of Object.entries(checks)) check(obj[key], `${where}.${key}`);
}

function mapOf(check: Checker): Checker {
  return (v, w) => {
    for (const [key, item] of Object.entries(isObject(v, w))) check(item, `${w}.${key}`);
  };
}

const isFee: Checker = (v, w) => fields(v, w, { percent: isDecimal, fix: isDecimal });
const isTextMap = mapOf(isText);
const isAddOn: Checker = (v, w) => {
  fields(v, w, { regex: isRegex });
  const o = v as Record<string, unknown>;
  for (const key of ['label', 'comment'])
    if (o[key] !== undefined) isTextMap(o[key], `${w}.${key}`);
};

const PAYMENT_PAYWAY: Record<string, Checker> = {
  id: isInt,
  alias: isText,
  currency: isInt,
  min_amount: isDecimal,
  max_amount: isDecimal,
  fee_config: isFee,
  fee_part_config: (v, w) => fields(v, w, { percent_part: isDecimal, fix_part: isDecimal }),
  is_active: (v, w) => expect(v === 'true' || v === 'false', w, '"true" or "false"'),
  add_ons_config: mapOf(isAddOn),
  paymethod_id: isInt,
  paymethod_name: isText,
  kind: (v, w) => expect(v === 'card' || v === 'wallet', w, '"card" or "wallet"'),
  two_step: isBool,
  tokens: isBool,
  card_data: isBool,
  info: isTextMap,
  manual: isTextMap,
  warning: isTextMap,
};

const PAYOUT_PAYWAY: Record<string, Checker> = {
  alias: isText,
  currency: isInt,
  min_amount: isDecimal,
  max_amount: isDecimal,
  fee_config: isFee,
  account_info_config: mapOf((v, w) => fields(v, w, { regex: isRegex, title: isText })),
  paysystem_data: isTextMap,
};

function groups(value: unknown, where: string, payway: Record<string, Checker>): void {
  isArray(value, where).forEach((group, i) => {
    const w = `${where}[${i}]`;
    fields(group, w, { id: isInt, name: isText, rating: isInt });
    isArray((group as Record<string, unknown>).payways, `${w}.payways`).forEach((p, j) =>
      fields(p, `${w}.payways[${j}]`, payway),
    );
  });
}

/** Checks the shape of a parsed catalogue file; throws CatalogueError naming the first problem. */
export function parseCatalogue(value: unknown): Catalogue {
  const obj = isObject(value, 'catalogue');
  groups(obj.payment_groups, 'payment_groups', PAYMENT_PAYWAY);
  groups(obj.payout_groups, 'payout_groups', PAYOUT_PAYWAY);
  isArray(obj.balances, 'balances').forEach((b, i) =>
    fields(b, `balances[${i}]`, { currency: isInt, available: isDecimal }),
  );
  return value as Catalogue;
}

/** catalogue.json beside this module: CommonJS (the build, ts-node) knows its directory; the ES-module test runner runs from the repository root. */
function defaultCataloguePath(): string {
  return join(
    typeof __dirname === 'string' ? __dirname : resolve('src', 'sandbox'),
    'catalogue.json',
  );
}

/** The default catalogue, or the one at `path`; its shape is checked. */
export function loadCatalogue(path: string = defaultCataloguePath()): Catalogue {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new CatalogueError(path, `cannot be read as JSON (${(e as Error).message})`);
  }
  return parseCatalogue(parsed);
}

export function findPaymentPayway(catalogue: Catalogue, alias: string): PaymentPayway | undefined {
  return catalogue.payment_groups.flatMap((g) => g.payways).find((p) => p.alias === alias);
}

export function findPayoutPayway(catalogue: Catalogue, alias: string): PayoutPayway | undefined {
  return catalogue.payout_groups.flatMap((g) => g.payways).find((p) => p.alias === alias);
}

export interface Requested<P> {
  choice: PaywayChoice;
  config: P;
}

/** The payment payway a request names (scenario suffix aside); unknown or inactive: code 10. */
export function requestedPaymentPayway(
  catalogue: Catalogue,
  fields: RequestFields,
): Requested<PaymentPayway> {
  const choice = parsePayway(fields.payway());
  const config = findPaymentPayway(catalogue, choice.base);
  if (config === undefined || config.is_active !== 'true')
    throw invalid(`payway ${choice.base} is not available`);
  return { choice, config };
}

/** The payout payway a request names (scenario suffix aside); unknown: code 10. */
export function requestedPayoutPayway(
  catalogue: Catalogue,
  fields: RequestFields,
): Requested<PayoutPayway> {
  const choice = parsePayway(fields.payway());
  const config = findPayoutPayway(catalogue, choice.base);
  if (config === undefined) throw invalid(`payway ${choice.base} is not available for payouts`);
  return { choice, config };
}

/** The request's `amount`, within the payway's min_amount and max_amount (else code 10). */
export function boundedAmount(
  fields: RequestFields,
  payway: { min_amount: string; max_amount: string },
): Decimal {
  const amount = fields.amount('amount');
  const within =
    amount.compare(Decimal.parse(payway.min_amount)) >= 0 &&
    amount.compare(Decimal.parse(payway.max_amount)) <= 0;
  if (!within)
    throw invalid(`amount must be between ${payway.min_amount} and ${payway.max_amount}`);
  return amount;
}

/**
 * What the payer pays: amount + percent% × amount × percent_part + fix × fix_part, rounded
 * half-up to cents at the end.
 */
export function payerPrice(payway: PaymentPayway, amount: Decimal): Decimal {
  const percentFee = Decimal.parse(payway.fee_config.percent)
    .percentOf(amount)
    .times(Decimal.parse(payway.fee_part_config.percent_part));
  const fixFee = Decimal.parse(payway.fee_config.fix).times(
    Decimal.parse(payway.fee_part_config.fix_part),
  );
  return amount.plus(percentFee).plus(fixFee).round(MONEY_SCALE);
}

export type AmountType = 'ps_amount' | 'shop_amount';

export interface PayoutAmounts {
  payeeReceive: Decimal;
  shopWriteOff: Decimal;
}

/**
 * Payout amounts. The fee is percent% × amount + fix, rounded half-up to cents. With
 * `ps_amount` the payee receives the amount and the shop pays amount + fee; with `shop_amount`
 * the shop pays the amount and the payee receives amount − fee.
 */
export function payoutAmounts(
  payway: PayoutPayway,
  amount: Decimal,
  type: AmountType,
): PayoutAmounts {
  const fee = Decimal.parse(payway.fee_config.percent)
    .percentOf(amount)
    .plus(Decimal.parse(payway.fee_config.fix))
    .round(MONEY_SCALE);
  return type === 'ps_amount'
    ? { payeeReceive: amount, shopWriteOff: amount.plus(fee) }
    : { payeeReceive: amount.minus(fee), shopWriteOff: amount };
}

function feeJson(fee: { percent: string; fix: string }): JsonOut {
  return {
    percent: decimalJson(Decimal.parse(fee.percent)),
    fix: decimalJson(Decimal.parse(fee.fix)),
  };
}

export function addOnsJson(addOns: Record<string, AddOnField>): JsonOut {
  return Object.fromEntries(Object.entries(addOns).map(([k, v]) => [k, { ...v }]));
}

/** `data` of `shop_input_config/shop`. */
export function inputConfigJson(catalogue: Catalogue): JsonOut {
  return catalogue.payment_groups.map((g) => ({
    id: g.id,
    name: g.name,
    rating: g.rating,
    payways: g.payways.map((p) => ({
      id: p.id,
      alias: p.alias,
      currency: p.currency,
      min_amount: decimalJson(Decimal.parse(p.min_amount)),
      max_amount: decimalJson(Decimal.parse(p.max_amount)),
      fee_config: feeJson(p.fee_config),
      fee_part_config: {
        percent_part: decimalJson(Decimal.parse(p.fee_part_config.percent_part)),
        fix_part: decimalJson(Decimal.parse(p.fee_part_config.fix_part)),
      },
      is_active: p.is_active,
      add_ons_config: addOnsJson(p.add_ons_config),
    })),
  }));
}

/** `data` of `shop_output_config/shop`. */
export function outputConfigJson(catalogue: Catalogue): JsonOut {
  return catalogue.payout_groups.map((g) => ({
    id: g.id,
    name: g.name,
    rating: g.rating,
    payways: g.payways.map((p) => ({
      alias: p.alias,
      currency: p.currency,
      min_amount: decimalJson(Decimal.parse(p.min_amount)),
      max_amount: decimalJson(Decimal.parse(p.max_amount)),
      fee_config: feeJson(p.fee_config),
      account_info_config: accountInfoJson(p),
      paysystem_data: { ...p.paysystem_data },
    })),
  }));
}

export function accountInfoJson(payway: PayoutPayway): JsonOut {
  return Object.fromEntries(
    Object.entries(payway.account_info_config).map(([k, v]) => [
      k,
      { regex: v.regex, title: v.title },
    ]),
  );
}

const ALPHA_CODES: Record<number, string> = { 643: 'RUB', 840: 'USD', 978: 'EUR' };

/** Alphabetic code of a numeric currency code (refund records use these). */
export function currencyAlpha(code: number): string {
  return ALPHA_CODES[code] ?? String(code);
}
