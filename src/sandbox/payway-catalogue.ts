import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
// Type-only and erased, yet it keeps catalogue.json in the program, so the build copies it next
// to this module; it is read at run time (a JSON import would need an import attribute under ESM).
import type {} from './catalogue.json';
import { Decimal, MONEY_SCALE } from './decimal';
import { parsePayway, PaywayChoice } from './faults';
import { isLosslessNumber, LosslessNumber, parse } from 'lossless-json';
import { JsonOut } from './json-text';
import { invalid, RequestFields } from './protocol';

/**
 * The payways the sandbox offers (catalogue.json, or a file given by `cataloguePath`), the fee
 * maths on them, the fixed conversion rates, and the answers of `shop_input_config/shop` and
 * `shop_output_config/shop`. Like the real test server, every alias is listed with its scenario in
 * square brackets (`card_core_payin_rub[mock_server,success]`) and each such alias is a payway of
 * its own. Amounts and fees may be JSON numbers or decimal text in the file; they are read
 * without loss and listed exactly as written (`100000.0` stays `100000.0`, `"1.0"` stays text).
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
  is_active: boolean;
  add_ons_config: Record<string, AddOnField>;
  paymethod_id: number;
  paymethod_name: string;
  /** `card`: checkout redirect, card data and 3-D Secure; `wallet`: GET redirect to the payer page. */
  kind: 'card' | 'wallet';
  two_step: boolean;
  tokens: boolean;
  card_data: boolean;
  info: Record<string, string>;
  manual: Record<string, string>;
  warning: Record<string, string>;
  /** The entry as the file wrote it, listed by shop_input_config/shop. */
  listed: JsonOut;
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
  /** The entry as the file wrote it, listed by shop_output_config/shop. */
  listed: JsonOut;
}

export interface PaywayGroup<P> {
  id: number;
  name: string;
  rating: number;
  payways: P[];
}

/** A fixed conversion rate: one unit of `from` is `rate` units of `to`. */
export interface Rate {
  from: number;
  to: number;
  rate: string;
}

export interface Catalogue {
  payment_groups: PaywayGroup<PaymentPayway>[];
  payout_groups: PaywayGroup<PayoutPayway>[];
  rates: Rate[];
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

/** A number as written in the file (lossless), or a plain number from a hand-built object. */
function numberText(v: unknown): string | undefined {
  if (isLosslessNumber(v)) return v.value;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

const isText: Checker = (v, w) => expect(typeof v === 'string', w, 'a string');
const isInt: Checker = (v, w) => {
  const t = numberText(v);
  expect(
    t !== undefined && Number.isSafeInteger(Number(t)) && /^-?\d+$/.test(t),
    w,
    'a whole number',
  );
};
const isBool: Checker = (v, w) => expect(typeof v === 'boolean', w, 'true or false');
/** A JSON number (`5.0`) or decimal text (`"1.0"`), as the real server writes either. */
const isDecimal: Checker = (v, w) => {
  const t = typeof v === 'string' ? v : numberText(v);
  expect(
    t !== undefined && Decimal.isDecimalText(t),
    w,
    'a decimal number or decimal text such as "10.50"',
  );
};
const isDecimalText: Checker = (v, w) =>
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
  expect(
    typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      !isLosslessNumber(value),
    where,
    'an object',
  );
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

function nullOr(check: Checker): Checker {
  return (v, w) => {
    if (v !== null) check(v, w);
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
  is_active: (v, w) =>
    expect(typeof v === 'boolean' || v === 'true' || v === 'false', w, 'true or false'),
  add_ons_config: nullOr(mapOf(isAddOn)),
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

/** Fields of a payment payway the real server lists; the rest is the sandbox's own behaviour. */
const LISTED_PAYMENT_FIELDS = [
  'id',
  'alias',
  'currency',
  'min_amount',
  'max_amount',
  'fee_config',
  'fee_part_config',
  'is_active',
  'add_ons_config',
];

function groups(value: unknown, where: string, payway: Record<string, Checker>): void {
  const aliases = new Set<string>();
  isArray(value, where).forEach((group, i) => {
    const w = `${where}[${i}]`;
    fields(group, w, { id: isInt, name: isText, rating: isInt });
    isArray((group as Record<string, unknown>).payways, `${w}.payways`).forEach((p, j) => {
      fields(p, `${w}.payways[${j}]`, payway);
      const alias = (p as { alias: string }).alias;
      expect(!aliases.has(alias), `${w}.payways[${j}].alias`, 'unique in its direction');
      aliases.add(alias);
    });
  });
}

const int = (v: unknown): number => Number(numberText(v));
const decimalText = (v: unknown): string => (typeof v === 'string' ? v : (numberText(v) ?? ''));
const feeOf = (v: unknown): { percent: string; fix: string } => {
  const o = v as Record<string, unknown>;
  return { percent: decimalText(o.percent), fix: decimalText(o.fix) };
};

/** A file value as written: numbers keep their digits when listed again. */
function asListed(v: unknown): JsonOut {
  if (isLosslessNumber(v)) return new LosslessNumber(v.value);
  if (Array.isArray(v)) return v.map(asListed);
  if (typeof v === 'object' && v !== null)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asListed(x)]));
  return v as JsonOut;
}

function paymentPayway(raw: Record<string, unknown>): PaymentPayway {
  const part = raw.fee_part_config as Record<string, unknown>;
  return {
    ...(raw as unknown as PaymentPayway),
    id: int(raw.id),
    currency: int(raw.currency),
    min_amount: decimalText(raw.min_amount),
    max_amount: decimalText(raw.max_amount),
    fee_config: feeOf(raw.fee_config),
    fee_part_config: {
      percent_part: decimalText(part.percent_part),
      fix_part: decimalText(part.fix_part),
    },
    is_active: raw.is_active === true || raw.is_active === 'true',
    add_ons_config: (raw.add_ons_config ?? {}) as Record<string, AddOnField>,
    paymethod_id: int(raw.paymethod_id),
    listed: Object.fromEntries(LISTED_PAYMENT_FIELDS.map((k) => [k, asListed(raw[k])])),
  };
}

function payoutPayway(raw: Record<string, unknown>): PayoutPayway {
  return {
    ...(raw as unknown as PayoutPayway),
    currency: int(raw.currency),
    min_amount: decimalText(raw.min_amount),
    max_amount: decimalText(raw.max_amount),
    fee_config: feeOf(raw.fee_config),
    listed: asListed(raw),
  };
}

function mapGroups<P>(
  value: unknown,
  build: (raw: Record<string, unknown>) => P,
): PaywayGroup<P>[] {
  return (value as Record<string, unknown>[]).map((g) => ({
    id: int(g.id),
    name: g.name as string,
    rating: int(g.rating),
    payways: (g.payways as Record<string, unknown>[]).map(build),
  }));
}

/** Checks the shape of a parsed catalogue file; throws CatalogueError naming the first problem. */
export function parseCatalogue(value: unknown): Catalogue {
  const obj = isObject(value, 'catalogue');
  groups(obj.payment_groups, 'payment_groups', PAYMENT_PAYWAY);
  groups(obj.payout_groups, 'payout_groups', PAYOUT_PAYWAY);
  const rates = obj.rates ?? [];
  isArray(rates, 'rates').forEach((r, i) =>
    fields(r, `rates[${i}]`, { from: isInt, to: isInt, rate: isDecimalText }),
  );
  isArray(obj.balances, 'balances').forEach((b, i) =>
    fields(b, `balances[${i}]`, { currency: isInt, available: isDecimalText }),
  );
  return {
    payment_groups: mapGroups(obj.payment_groups, paymentPayway),
    payout_groups: mapGroups(obj.payout_groups, payoutPayway),
    rates: (rates as Record<string, unknown>[]).map((r) => ({
      from: int(r.from),
      to: int(r.to),
      rate: r.rate as string,
    })),
    balances: (obj.balances as Record<string, unknown>[]).map((b) => ({
      currency: int(b.currency),
      available: b.available as string,
    })),
  };
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
    parsed = parse(readFileSync(path, 'utf8'));
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

/** The payment payway a request names, matched exactly as listed; unknown or inactive: code 10. */
export function requestedPaymentPayway(
  catalogue: Catalogue,
  fields: RequestFields,
): Requested<PaymentPayway> {
  const requested = fields.payway();
  const config = findPaymentPayway(catalogue, requested);
  if (config === undefined || !config.is_active)
    throw invalid(`payway ${requested} is not available`);
  return { choice: parsePayway(requested), config };
}

/** The payout payway a request names, matched exactly as listed; unknown: code 10. */
export function requestedPayoutPayway(
  catalogue: Catalogue,
  fields: RequestFields,
): Requested<PayoutPayway> {
  const requested = fields.payway();
  const config = findPayoutPayway(catalogue, requested);
  if (config === undefined) throw invalid(`payway ${requested} is not available for payouts`);
  return { choice: parsePayway(requested), config };
}

/**
 * `amount` in `from` expressed in `to` at the catalogue's fixed rate, rounded half-up to cents;
 * the same amount when the currencies are equal; code 10 when no rate is listed.
 */
export function convert(catalogue: Catalogue, amount: Decimal, from: number, to: number): Decimal {
  if (from === to) return amount;
  const rate = catalogue.rates.find((r) => r.from === from && r.to === to);
  if (rate === undefined) throw invalid(`currency ${from} cannot be converted to ${to}`);
  return amount.times(Decimal.parse(rate.rate)).round(MONEY_SCALE);
}

/** An amount within the payway's min_amount and max_amount (else code 10). */
export function withinBounds(
  amount: Decimal,
  payway: { min_amount: string; max_amount: string },
): Decimal {
  const within =
    amount.compare(Decimal.parse(payway.min_amount)) >= 0 &&
    amount.compare(Decimal.parse(payway.max_amount)) <= 0;
  if (!within)
    throw invalid(`amount must be between ${payway.min_amount} and ${payway.max_amount}`);
  return amount;
}

/** The request's `amount`, within the payway's min_amount and max_amount (else code 10). */
export function boundedAmount(
  fields: RequestFields,
  payway: { min_amount: string; max_amount: string },
): Decimal {
  return withinBounds(fields.amount('amount'), payway);
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

export function addOnsJson(addOns: Record<string, AddOnField>): JsonOut {
  return Object.fromEntries(Object.entries(addOns).map(([k, v]) => [k, { ...v }]));
}

/** `data` of `shop_input_config/shop`: each payway as the catalogue file writes it. */
export function inputConfigJson(catalogue: Catalogue): JsonOut {
  return catalogue.payment_groups.map((g) => ({
    id: g.id,
    name: g.name,
    rating: g.rating,
    payways: g.payways.map((p) => p.listed),
  }));
}

/** `data` of `shop_output_config/shop`. */
export function outputConfigJson(catalogue: Catalogue): JsonOut {
  return catalogue.payout_groups.map((g) => ({
    id: g.id,
    name: g.name,
    rating: g.rating,
    payways: g.payways.map((p) => p.listed),
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
