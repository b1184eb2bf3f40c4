/**
 * Exact decimal arithmetic for the sandbox: a BigInt count of units at a decimal scale
 * (`100.10` is 10010 units at scale 2). Money never passes through a float here.
 */

const DECIMAL_TEXT = /^(-)?(\d+)(?:\.(\d+))?$/;

export class Decimal {
  private constructor(
    /** The value times 10^scale. */
    readonly units: bigint,
    readonly scale: number,
  ) {}

  static readonly ZERO = new Decimal(0n, 0);

  /** True for plain decimal text such as `100`, `100.10`, `-0.5` (no exponent, no sign `+`). */
  static isDecimalText(text: string): boolean {
    return DECIMAL_TEXT.test(text);
  }

  static parse(text: string): Decimal {
    const m = DECIMAL_TEXT.exec(text);
    if (m === null) throw new Error(`not a decimal number: "${text}"`);
    const fraction = m[3] ?? '';
    const units = BigInt(m[2] + fraction);
    return new Decimal(m[1] === '-' ? -units : units, fraction.length);
  }

  private at(scale: number): bigint {
    return this.units * 10n ** BigInt(scale - this.scale);
  }

  plus(other: Decimal): Decimal {
    const scale = Math.max(this.scale, other.scale);
    return new Decimal(this.at(scale) + other.at(scale), scale);
  }

  minus(other: Decimal): Decimal {
    const scale = Math.max(this.scale, other.scale);
    return new Decimal(this.at(scale) - other.at(scale), scale);
  }

  times(other: Decimal): Decimal {
    return new Decimal(this.units * other.units, this.scale + other.scale);
  }

  /** This many percent of `base`: base × this / 100, exact. */
  percentOf(base: Decimal): Decimal {
    return new Decimal(this.units * base.units, this.scale + base.scale + 2);
  }

  /** Rounded to `scale` decimals, halves away from zero (half-up on magnitudes). */
  round(scale: number): Decimal {
    if (scale >= this.scale) return new Decimal(this.at(scale), scale);
    const divisor = 10n ** BigInt(this.scale - scale);
    const magnitude = this.units < 0n ? -this.units : this.units;
    let q = magnitude / divisor;
    if ((magnitude % divisor) * 2n >= divisor) q += 1n;
    return new Decimal(this.units < 0n ? -q : q, scale);
  }

  compare(other: Decimal): -1 | 0 | 1 {
    const scale = Math.max(this.scale, other.scale);
    const a = this.at(scale);
    const b = other.at(scale);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  isNegative(): boolean {
    return this.units < 0n;
  }

  isZero(): boolean {
    return this.units === 0n;
  }

  /** Text with exactly `scale` decimals, rounded half-up: `100.1` → `100.10`. */
  toFixed(scale: number): string {
    const r = this.round(scale);
    const negative = r.units < 0n;
    const digits = (negative ? -r.units : r.units).toString().padStart(scale + 1, '0');
    const whole = digits.slice(0, digits.length - scale);
    const text = scale === 0 ? whole : `${whole}.${digits.slice(digits.length - scale)}`;
    return negative ? `-${text}` : text;
  }

  /** Text as parsed or computed, keeping its scale (`2.50` stays `2.50`). */
  toString(): string {
    return this.toFixed(this.scale);
  }
}

/** Money in the sandbox always has two decimals. */
export const MONEY_SCALE = 2;

export function money(text: string): Decimal {
  return Decimal.parse(text).round(MONEY_SCALE);
}
