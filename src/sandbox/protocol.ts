import { isLosslessNumber } from 'lossless-json';
import { Decimal, MONEY_SCALE } from './decimal';
import { isJsonObject, JsonIn, JsonObject, JsonOut, textOf, toJsonText } from './json-text';

/**
 * The gateway's wire protocol as the sandbox speaks it: the common envelope, the error codes it
 * answers with, and a reader that validates request fields the way the gateway does.
 */

/** Error codes the sandbox answers with (gateway-facts.md, plus 100 for a temporary failure). */
export const ERROR = {
  /** Duplicate protection: shop_order_id / shop_payment_id / shop_refund_id reused. */
  NOT_UNIQUE: 6,
  /** A status call for an object the gateway does not know. */
  ABSENT: 7,
  /** Incorrect values for parameters: signature, validation, limits, state. Fatal. */
  INCORRECT_VALUES: 10,
  /** Unknown shop_id. Fatal. */
  SHOP_NOT_FOUND: 11,
  /** Temporary error: the outcome is not known yet. Non-fatal. */
  TEMPORARY: 100,
} as const;

export const INCORRECT_VALUES_MESSAGE = 'Incorrect values for parameters';

/** A call that ends with `result: false`; `httpStatus` is 400 for malformed requests, else 200. */
export class GatewayError extends Error {
  constructor(
    readonly errorCode: number,
    message: string,
    readonly httpStatus: 200 | 400 = 200,
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

/** A malformed or badly signed request (HTTP 400, code 10). */
export function invalid(detail?: string): GatewayError {
  const message =
    detail === undefined ? INCORRECT_VALUES_MESSAGE : `${INCORRECT_VALUES_MESSAGE}: ${detail}`;
  return new GatewayError(ERROR.INCORRECT_VALUES, message, 400);
}

/** A well-formed request the gateway refuses (HTTP 200, code 10): wrong state, funds, limits of sums. */
export function refused(detail: string): GatewayError {
  return new GatewayError(ERROR.INCORRECT_VALUES, `${INCORRECT_VALUES_MESSAGE}: ${detail}`);
}

export function notUnique(field: string, value: string): GatewayError {
  return new GatewayError(ERROR.NOT_UNIQUE, `${field} "${value}" is not unique`);
}

export function absent(what: string): GatewayError {
  return new GatewayError(ERROR.ABSENT, `${what} is absent`);
}

export function shopNotFound(): GatewayError {
  return new GatewayError(ERROR.SHOP_NOT_FOUND, 'Shop not found', 400);
}

export function temporary(): GatewayError {
  return new GatewayError(ERROR.TEMPORARY, 'Temporary error, try later');
}

/** One answer of a gateway call: HTTP status plus envelope. */
export interface Envelope {
  httpStatus: number;
  result: boolean;
  errorCode: number;
  text: string;
}

export function okEnvelope(data: JsonOut): Envelope {
  return {
    httpStatus: 200,
    result: true,
    errorCode: 0,
    text: toJsonText({ result: true, message: 'Ok', error_code: 0, data }),
  };
}

export function errorEnvelope(error: GatewayError): Envelope {
  return {
    httpStatus: error.httpStatus,
    result: false,
    errorCode: error.errorCode,
    text: toJsonText({
      result: false,
      message: error.message,
      error_code: error.errorCode,
      data: null,
    }),
  };
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const PAYWAY_CHARSET = /^[A-Za-z_,[\]]+$/;

interface TextRule {
  max?: number;
  pattern?: RegExp;
}

/** Reads the fields of a parsed request body; every problem is `invalid(...)` naming the field. */
export class RequestFields {
  constructor(readonly body: JsonObject) {}

  has(name: string): boolean {
    const v = this.body[name];
    return v !== undefined && v !== null && v !== '';
  }

  optionalText(name: string, rule: TextRule = {}): string | undefined {
    const v = this.body[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw invalid(`${name} must be a string`);
    if (rule.max !== undefined && [...v].length > rule.max) {
      throw invalid(`${name} is longer than ${rule.max} characters`);
    }
    if (rule.pattern !== undefined && !rule.pattern.test(v))
      throw invalid(`${name} has a wrong format`);
    return v;
  }

  text(name: string, rule: TextRule = {}): string {
    const v = this.optionalText(name, rule);
    if (v === undefined || v === '') throw invalid(`${name} is required`);
    return v;
  }

  /** A positive whole number, sent as a JSON number or as digits in a string. */
  int(name: string): number {
    const v = this.body[name];
    if (v === undefined || v === null) throw invalid(`${name} is required`);
    const raw = isLosslessNumber(v) || typeof v === 'string' ? textOf(v) : '';
    if (!/^\d{1,15}$/.test(raw)) throw invalid(`${name} must be a whole number`);
    return Number(raw);
  }

  /** An amount: a decimal string with at most two decimals, greater than zero. */
  amount(name: string): Decimal {
    const v = this.body[name];
    if (v === undefined || v === null) throw invalid(`${name} is required`);
    if (typeof v !== 'string' || !/^\d{1,15}(\.\d{1,2})?$/.test(v)) {
      throw invalid(`${name} must be a decimal string with at most ${MONEY_SCALE} decimals`);
    }
    const amount = Decimal.parse(v);
    if (amount.isZero()) throw invalid(`${name} must be greater than zero`);
    return amount;
  }

  optionalBool(name: string): boolean | undefined {
    const v = this.body[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === 'false') return v === 'true';
    throw invalid(`${name} must be true or false`);
  }

  optionalObject(name: string): JsonObject | undefined {
    const v = this.body[name];
    if (v === undefined || v === null) return undefined;
    if (!isJsonObject(v)) throw invalid(`${name} must be an object`);
    return v;
  }

  /** `now`: an ISO 8601 date-time. */
  now(): string {
    return this.text('now', { max: 64, pattern: ISO_DATE_TIME });
  }

  /** A payway: at most 150 characters, letters, underscore, comma, square brackets only. */
  payway(): string {
    return this.text('payway', { max: 150, pattern: PAYWAY_CHARSET });
  }

  optionalUrl(name: string): string | undefined {
    const v = this.optionalText(name, { max: 2048 });
    if (v === undefined || v === '') return undefined;
    let parsed: URL;
    try {
      parsed = new URL(v);
    } catch {
      throw invalid(`${name} must be an absolute URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw invalid(`${name} must be an http(s) URL`);
    return v;
  }

  get(name: string): JsonIn | undefined {
    return this.body[name];
  }
}

/** Date-times as the gateway writes them: ISO 8601 to the second with the offset +03:00. */
export function gatewayTime(date: Date): string {
  return new Date(date.getTime() + 3 * 3_600_000).toISOString().slice(0, 19) + '+03:00';
}

/** A card number or account with its middle hidden: `411111******1111`, `+7*******67`. */
export function maskAccount(account: string): string {
  if (account.length >= 13)
    return `${account.slice(0, 6)}${'*'.repeat(account.length - 10)}${account.slice(-4)}`;
  if (account.length > 4)
    return `${account.slice(0, 2)}${'*'.repeat(account.length - 4)}${account.slice(-2)}`;
  return '*'.repeat(account.length);
}
