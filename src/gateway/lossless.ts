import { isLosslessNumber, LosslessNumber, parse, stringify } from 'lossless-json';

/**
 * Gateway responses carry amounts as JSON numbers. `JSON.parse` would turn `100.10` into the
 * float 100.1 (and tiny values into `1e-7`), so bodies are parsed here, keeping every number's
 * own digits.
 */

/** Field names whose numbers are money (or rates) and are therefore kept as exact text. */
export const MONEY_FIELDS: ReadonlySet<string> = new Set([
  'shop_amount',
  'client_price',
  'shop_refund',
  'payer_price',
  'min_amount',
  'max_amount',
  'percent',
  'fix',
  'percent_part',
  'fix_part',
  'payee_receive',
  'shop_write_off',
  'balance',
  'available',
  'hold',
  'frozen',
  'amount',
  'settlement_amount',
  'settlement_rate',
]);

const SAFE_INTEGER = /^-?\d+$/;

/** JSON number text to a value: money and non-integers stay text, safe integers become numbers. */
function numberValue(key: string | undefined, text: string): string | number {
  if (key !== undefined && MONEY_FIELDS.has(key)) return text;
  if (!SAFE_INTEGER.test(text)) return text;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

function convert(value: unknown, key: string | undefined): unknown {
  if (isLosslessNumber(value)) return numberValue(key, value.value);
  // Elements of an array take the array's field name: `amounts: [1.5]` is still money.
  if (Array.isArray(value)) return value.map((v: unknown) => convert(v, key));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = convert(v, k);
    return out;
  }
  return value;
}

/**
 * Parses a gateway response body. Money fields and any non-integer number become the exact
 * JSON text (`100.10` -> "100.10"); other integers become numbers, unless beyond
 * Number.MAX_SAFE_INTEGER, where they stay text. Throws SyntaxError on invalid JSON.
 *
 * One pass (ExactParser): each number is made its value where it is read, and a string without
 * escapes is one slice of the text. lossless-json built every string a character at a time and
 * every number as an object, which a second walk (convert) then copied: the two were a tenth of
 * the gateway call's CPU per create. What this parser does not decide alike it hands over to
 * that reference (parseExactJsonByReference): a repeated key (which the reference refuses unless
 * both values are equal as parsed) and a `__proto__` key. The spec holds the two equal, errors
 * included, on generated and mangled texts.
 */
export function parseExactJson(text: string): unknown {
  return onePass(text, numberValue, parseExactJsonByReference);
}

/** The one-pass parser, numbers made by `numberOf`; what it leaves to `reference`, read there. */
function onePass(
  text: string,
  numberOf: (key: string | undefined, text: string) => unknown,
  reference: (text: string) => unknown,
): unknown {
  try {
    return new ExactParser(text, numberOf).document();
  } catch (e) {
    if (e instanceof ByReference) return reference(text);
    throw e;
  }
}

/** parseExactJson as lossless-json and a walk over its result make it (the reference). */
export function parseExactJsonByReference(text: string): unknown {
  return convert(parse(text), undefined);
}

/** A text whose reading parseExactJson leaves to the reference. */
class ByReference extends Error {}

/** The character codes the grammar reads. */
const Code = {
  Tab: 0x09,
  Newline: 0x0a,
  Return: 0x0d,
  Space: 0x20,
  Quote: 0x22,
  Plus: 0x2b,
  Comma: 0x2c,
  Minus: 0x2d,
  Dot: 0x2e,
  Zero: 0x30,
  One: 0x31,
  Nine: 0x39,
  Colon: 0x3a,
  UpperE: 0x45,
  OpenBracket: 0x5b,
  Backslash: 0x5c,
  CloseBracket: 0x5d,
  LowerE: 0x65,
  OpenBrace: 0x7b,
  CloseBrace: 0x7d,
} as const;

const ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

const isDigit = (c: number): boolean => c >= Code.Zero && c <= Code.Nine;
const isHex = (c: number): boolean =>
  isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/**
 * The JSON grammar as lossless-json reads it, each number made a value by `numberOf` (from its
 * field's name and its text).
 */
class ExactParser {
  private i = 0;

  constructor(
    private readonly text: string,
    private readonly numberOf: (key: string | undefined, text: string) => unknown,
  ) {}

  document(): unknown {
    const value = this.value(undefined);
    if (this.i < this.text.length) this.fail('Expected end of input');
    return value;
  }

  private fail(what: string): never {
    throw new SyntaxError(`${what} at position ${this.i}`);
  }

  private skipWhitespace(): void {
    const t = this.text;
    let c = t.charCodeAt(this.i);
    while (c === Code.Space || c === Code.Newline || c === Code.Tab || c === Code.Return)
      c = t.charCodeAt(++this.i);
  }

  /** A value; `key` is the field it is the value of (an array's elements take the array's). */
  private value(key: string | undefined): unknown {
    this.skipWhitespace();
    const t = this.text;
    const c = t.charCodeAt(this.i);
    let value: unknown;
    if (c === Code.Quote) value = this.string();
    else if (c === Code.Minus || isDigit(c)) value = this.numberOf(key, this.number());
    else if (c === Code.OpenBrace) value = this.object();
    else if (c === Code.OpenBracket) value = this.array(key);
    else if (t.startsWith('true', this.i)) value = this.keyword(4, true);
    else if (t.startsWith('false', this.i)) value = this.keyword(5, false);
    else if (t.startsWith('null', this.i)) value = this.keyword(4, null);
    else this.fail('JSON value expected');
    this.skipWhitespace();
    return value;
  }

  private keyword<T>(length: number, value: T): T {
    this.i += length;
    return value;
  }

  private object(): Record<string, unknown> {
    const t = this.text;
    this.i++;
    this.skipWhitespace();
    const object: Record<string, unknown> = {};
    let initial = true;
    while (this.i < t.length && t.charCodeAt(this.i) !== Code.CloseBrace) {
      if (!initial) {
        this.expect(Code.Comma, "Comma ',' expected after value");
        this.skipWhitespace();
      } else initial = false;
      if (t.charCodeAt(this.i) !== Code.Quote) this.fail('Quoted object key expected');
      const key = this.string();
      if (key === '__proto__') throw new ByReference();
      this.skipWhitespace();
      this.expect(Code.Colon, "Colon ':' expected after property name");
      const value = this.value(key);
      if (Object.prototype.hasOwnProperty.call(object, key)) throw new ByReference();
      object[key] = value;
    }
    this.expect(Code.CloseBrace, "Quoted object key or end of object '}' expected");
    return object;
  }

  private array(key: string | undefined): unknown[] {
    const t = this.text;
    this.i++;
    this.skipWhitespace();
    const array: unknown[] = [];
    let initial = true;
    while (this.i < t.length && t.charCodeAt(this.i) !== Code.CloseBracket) {
      if (!initial) this.expect(Code.Comma, "Comma ',' expected after value");
      else initial = false;
      array.push(this.value(key));
    }
    this.expect(Code.CloseBracket, "Array item or end of array ']' expected");
    return array;
  }

  private expect(code: number, what: string): void {
    if (this.text.charCodeAt(this.i) !== code) this.fail(what);
    this.i++;
  }

  /** At an opening quote: the string, a slice of the text when it has no escapes. */
  private string(): string {
    const t = this.text;
    let i = this.i + 1;
    let from = i;
    let out = '';
    for (;;) {
      if (i >= t.length) {
        this.i = i;
        this.fail(`End of string '"' expected`);
      }
      const c = t.charCodeAt(i);
      if (c === Code.Quote) break;
      if (c === Code.Backslash) {
        out += t.slice(from, i);
        const e = t[i + 1];
        const plain = e === undefined ? undefined : ESCAPES[e];
        if (plain !== undefined) {
          out += plain;
          i += 2;
        } else if (
          e === 'u' &&
          isHex(t.charCodeAt(i + 2)) &&
          isHex(t.charCodeAt(i + 3)) &&
          isHex(t.charCodeAt(i + 4)) &&
          isHex(t.charCodeAt(i + 5))
        ) {
          out += String.fromCharCode(Number.parseInt(t.slice(i + 2, i + 6), 16));
          i += 6;
        } else {
          this.i = i;
          this.fail('Invalid escape character');
        }
        from = i;
        continue;
      }
      if (c < Code.Space) {
        this.i = i;
        this.fail('Invalid character');
      }
      i++;
    }
    this.i = i + 1;
    return out + t.slice(from, i);
  }

  /** A number's text, as the JSON grammar has it (lossless-json's parseNumeric). */
  private number(): string {
    const t = this.text;
    const start = this.i;
    if (t.charCodeAt(this.i) === Code.Minus) {
      this.i++;
      this.digit();
    }
    if (t.charCodeAt(this.i) === Code.Zero) this.i++;
    else if (t.charCodeAt(this.i) >= Code.One && t.charCodeAt(this.i) <= Code.Nine) {
      this.i++;
      while (isDigit(t.charCodeAt(this.i))) this.i++;
    } else this.fail('JSON value expected');
    if (t.charCodeAt(this.i) === Code.Dot) {
      this.i++;
      this.digit();
      while (isDigit(t.charCodeAt(this.i))) this.i++;
    }
    const e = t.charCodeAt(this.i);
    if (e === Code.LowerE || e === Code.UpperE) {
      this.i++;
      const sign = t.charCodeAt(this.i);
      if (sign === Code.Minus || sign === Code.Plus) this.i++;
      this.digit();
      while (isDigit(t.charCodeAt(this.i))) this.i++;
    }
    return t.slice(start, this.i);
  }

  private digit(): void {
    if (!isDigit(this.text.charCodeAt(this.i))) this.fail('Invalid number, expecting a digit');
  }
}

/**
 * Parses JSON keeping every number as a LosslessNumber (its digits exactly as transmitted): a
 * notification's values as the gateway signed them. The one-pass parser with LosslessNumbers
 * for numbers, the rest left to lossless-json as parseExactJson leaves it (a repeated key, a
 * `__proto__` key); lossless-json's own parse built every string a character at a time, a
 * fifth of a notification's verification (by profile). The spec holds the two equal, errors
 * included, on generated and mangled texts.
 */
export function parseLossless(text: string): unknown {
  return onePass(text, losslessNumber, parseLosslessByReference);
}

/** parseLossless as lossless-json makes it (the reference). */
export function parseLosslessByReference(text: string): unknown {
  return parse(text);
}

const losslessNumber = (_key: string | undefined, text: string): LosslessNumber =>
  new LosslessNumber(text);

/** Compact JSON text in which LosslessNumbers print their own digits. */
export function stringifyLossless(value: unknown): string {
  return stringify(value) ?? '';
}

export { isLosslessNumber };
