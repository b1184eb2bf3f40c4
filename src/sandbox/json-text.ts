import { isLosslessNumber, LosslessNumber, parse, stringify } from 'lossless-json';
import { Decimal, MONEY_SCALE } from './decimal';

/**
 * JSON as the gateway writes and reads it: numbers keep the digits they were written with
 * (`100.10` stays `100.10`, both when a request is read and when an answer is written).
 */

/** A value that can be written as JSON text; numbers that must keep their digits are LosslessNumber. */
export type JsonOut =
  | string
  | number
  | boolean
  | null
  | LosslessNumber
  | JsonOut[]
  | { [key: string]: JsonOut | undefined };

/** A parsed JSON value; every number is a LosslessNumber holding its text as transmitted. */
export type JsonIn =
  string | boolean | null | LosslessNumber | JsonIn[] | { [key: string]: JsonIn };

export type JsonObject = { [key: string]: JsonIn };

export function parseJson(text: string): JsonIn {
  return parse(text) as JsonIn;
}

export function toJsonText(value: JsonOut): string {
  return stringify(value) ?? 'null';
}

export function isJsonObject(value: JsonIn | undefined): value is JsonObject {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !isLosslessNumber(value)
  );
}

/** Money as a JSON number with two decimals written out: `100.10`. */
export function moneyJson(amount: Decimal): LosslessNumber {
  return new LosslessNumber(amount.toFixed(MONEY_SCALE));
}

/** A decimal exactly as given (catalogue values such as `2.5`). */
export function decimalJson(value: Decimal): LosslessNumber {
  return new LosslessNumber(value.toString());
}

/** A value as transmitted, as text: what signatures and form encoding use. */
export function textOf(value: JsonIn | JsonOut | undefined): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (isLosslessNumber(value)) return value.value;
  return toJsonText(value as JsonOut);
}
