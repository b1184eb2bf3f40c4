import DecimalJs from 'decimal.js';
import { ValueTransformer } from 'typeorm';
import { minorUnits } from './currency';

/**
 * decimal.js rounds to 20 significant digits by default; 18 integer digits plus 8 fractional
 * ones need more, and sums must never round. 64 digits leave room for any sum we make.
 */
const Decimal = DecimalJs.clone({
  precision: 64,
  rounding: DecimalJs.ROUND_HALF_UP,
  toExpNeg: -64,
  toExpPos: 64,
});
type Decimal = InstanceType<typeof Decimal>;

/**
 * An exact decimal amount that remembers its scale: `Amount.parse("100.10").toString()` is
 * "100.10", and sums keep the larger scale ("100.10" + "0.5" = "100.60"). Arithmetic runs on
 * decimal.js; no binary float ever touches a value.
 */
export class Amount {
  /**
   * The value's decimal.js form, made when arithmetic first needs it: an amount read from the
   * database or a request and written out again (a view, an event, a CSV) never needs it. A
   * private field, so equality of two amounts (and a test's) is that of their text and scale.
   */
  #decimal: Decimal | undefined;

  private constructor(
    /** The value written with exactly `scale` fractional digits: decimal.js's toFixed(scale). */
    private readonly text: string,
    readonly scale: number,
    decimal?: Decimal,
  ) {
    this.#decimal = decimal;
  }

  private static of(value: Decimal, scale: number): Amount {
    return new Amount(value.toFixed(scale), scale, value);
  }

  private get value(): Decimal {
    return (this.#decimal ??= new Decimal(this.text));
  }

  /** Largest number of fractional digits accepted from a shop or the gateway. */
  static readonly MAX_SCALE = 8;
  /** Largest number of integer digits accepted. */
  static readonly MAX_INTEGER_DIGITS = 18;

  private static readonly PATTERN = /^(0|[1-9]\d*)(\.\d+)?$/;

  /**
   * Text that is already what toFixed writes for its own scale: an optional minus, no leading
   * zero, and not a negative zero (toFixed writes "0.00" for "-0.00").
   */
  private static readonly AS_WRITTEN = /^(-(?=[\d.]*[1-9]))?(0|[1-9]\d*)(\.\d+)?$/;

  private static readonly ZERO = /^0(\.0+)?$/;

  /** True for a plain non-negative decimal string within the size limits ("100", "0.5", "100.10"). */
  static isValid(text: unknown): text is string {
    if (typeof text !== 'string' || !Amount.PATTERN.test(text)) return false;
    const [int, frac = ''] = text.split('.');
    return int.length <= Amount.MAX_INTEGER_DIGITS && frac.length <= Amount.MAX_SCALE;
  }

  /** Parses a decimal string; throws `InvalidAmountError` for anything else (numbers included). */
  static parse(text: unknown): Amount {
    if (!Amount.isValid(text)) throw new InvalidAmountError(text);
    return new Amount(text, fractionDigits(text));
  }

  /**
   * Reads an amount as the gateway or the database writes it: any finite decimal text, also
   * negative or with an exponent ("1e-7"); the scale is that of the value's exact digits.
   */
  static fromText(text: string): Amount {
    // What PostgreSQL writes for a numeric (and most of what the gateway sends) is the text
    // itself: no decimal.js at all until arithmetic asks for it.
    if (Amount.AS_WRITTEN.test(text)) return new Amount(text, fractionDigits(text));
    let d: Decimal;
    try {
      d = new Decimal(text);
    } catch {
      throw new InvalidAmountError(text);
    }
    if (!d.isFinite()) throw new InvalidAmountError(text);
    const plain = /^-?\d+(\.\d+)?$/.test(text.trim()) ? text.trim() : d.toFixed();
    return Amount.of(d, fractionDigits(plain));
  }

  static zero(scale = 0): Amount {
    return new Amount(scale === 0 ? '0' : `0.${'0'.repeat(scale)}`, scale);
  }

  plus(other: Amount): Amount {
    return Amount.of(this.value.plus(other.value), Math.max(this.scale, other.scale));
  }

  minus(other: Amount): Amount {
    return Amount.of(this.value.minus(other.value), Math.max(this.scale, other.scale));
  }

  cmp(other: Amount): -1 | 0 | 1 {
    return this.value.cmp(other.value) as -1 | 0 | 1;
  }
  eq(other: Amount): boolean {
    return this.value.eq(other.value);
  }
  gt(other: Amount): boolean {
    return this.value.gt(other.value);
  }
  gte(other: Amount): boolean {
    return this.value.gte(other.value);
  }
  lt(other: Amount): boolean {
    return this.value.lt(other.value);
  }
  lte(other: Amount): boolean {
    return this.value.lte(other.value);
  }
  // The sign tests read the text, which toFixed wrote: zero is "0" or "0.00…", never "-0".
  isZero(): boolean {
    return Amount.ZERO.test(this.text);
  }
  isPositive(): boolean {
    return !this.isNegative() && !this.isZero();
  }
  isNegative(): boolean {
    return this.text.startsWith('-');
  }

  /** The same value written with at least `scale` fractional digits (never fewer than its own). */
  withScale(scale: number): Amount {
    if (scale <= this.scale) return this;
    const pad = '0'.repeat(scale - this.scale);
    return new Amount(
      this.scale === 0 ? `${this.text}.${pad}` : `${this.text}${pad}`,
      scale,
      this.#decimal,
    );
  }

  /** Exact decimal text with this amount's scale, never with an exponent. */
  toString(): string {
    return this.text;
  }

  toJSON(): string {
    return this.toString();
  }

  /** The value's one text, whatever its scale: "100.10", "100.1" and "100.100" are all "100.1". */
  canonicalText(): string {
    return this.value.toFixed();
  }

  static sum(amounts: Amount[]): Amount {
    return amounts.reduce((acc, a) => acc.plus(a), Amount.zero());
  }
}

/** The number of digits after the point of plain decimal text. */
function fractionDigits(text: string): number {
  const point = text.indexOf('.');
  return point < 0 ? 0 : text.length - point - 1;
}

export class InvalidAmountError extends Error {
  constructor(readonly input: unknown) {
    super('amount must be a decimal string such as "100.10"');
    this.name = 'InvalidAmountError';
  }
}

/**
 * TypeORM transformer for `numeric` columns. PostgreSQL's unconstrained `numeric` keeps the scale
 * it was given, and the driver returns it as text, so "100.10" round-trips unchanged.
 */
export const amountTransformer: ValueTransformer = {
  to: (value: Amount | null | undefined) =>
    value === null || value === undefined ? value : value.toString(),
  from: (value: string | null) => (value === null ? null : Amount.fromText(value)),
};

/**
 * An amount as the service writes it (answers, events, CSV, the console, the ledger): exactly its
 * currency's ISO 4217 minor-unit digits ("150000" in RUB → "150000.00", "0" → "0.00", JPY
 * "500"), however it was sent or stored. A value finer than its currency (a gateway's converted
 * figure) keeps its own digits, never rounded; a currency the list does not know keeps the
 * value's own digits. Text that is not a finite decimal is returned as it is.
 */
export function moneyText(
  amount: Amount | string,
  currency: number | string | null | undefined,
): string {
  const code = typeof currency === 'string' ? parseInt(currency, 10) : currency;
  const digits = code === null || code === undefined ? null : minorUnits(code);
  const text = typeof amount === 'string' ? amount : amount.toString();
  // Plain decimal text (what the database and Amount write) is written by string steps alone;
  // anything else (an exponent, spaces, a sign on zero written oddly) goes through decimal.js.
  if (digits !== null) {
    const plain = plainMoneyText(text, digits);
    if (plain !== null) return plain;
  }
  return decimalMoneyText(text, digits);
}

const PLAIN_DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * moneyText of plain decimal text by string steps, with decimal.js's results: leading zeros of
 * the integer part and trailing zeros of the fraction dropped, no sign on zero, then the fraction
 * padded to `digits`, or left with its own digits when it has more. Null for any other text.
 */
export function plainMoneyText(text: string, digits: number): string | null {
  const m = PLAIN_DECIMAL.exec(text);
  if (m === null) return null;
  let sign = m[1];
  let int = m[2];
  let frac = m[3] ?? '';
  let i = 0;
  while (i < int.length - 1 && int.charCodeAt(i) === 48) i++;
  if (i > 0) int = int.slice(i);
  let end = frac.length;
  while (end > 0 && frac.charCodeAt(end - 1) === 48) end--;
  if (end < frac.length) frac = frac.slice(0, end);
  if (int === '0' && frac === '') sign = '';
  if (frac.length > digits) return `${sign}${int}.${frac}`;
  return digits === 0 ? `${sign}${int}` : `${sign}${int}.${frac.padEnd(digits, '0')}`;
}

/** moneyText through decimal.js: every finite decimal text, exponents included. */
function decimalMoneyText(amount: string, digits: number | null): string {
  let d: Decimal;
  try {
    d = new Decimal(amount);
  } catch {
    return amount;
  }
  if (!d.isFinite()) return amount;
  if (d.isZero()) d = d.abs();
  if (digits === null) return amount;
  return d.decimalPlaces() > digits ? d.toFixed() : d.toFixed(digits);
}

/** The same, or null when there is no amount. */
export function moneyTextOrNull(
  amount: Amount | string | null | undefined,
  currency: number | string | null | undefined,
): string | null {
  return amount === null || amount === undefined ? null : moneyText(amount, currency);
}
