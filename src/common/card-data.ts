import { registerDecorator } from 'class-validator';
import type { FieldError } from './errors';
import { luhnValid } from './redact';

/**
 * Card data the service never needs outside `card` and so never takes (shared/API.md, Input that
 * is never stored; PCI DSS 3.3–3.4): a primary account number in free text, a card
 * verification value under a metadata key. Refused before anything is stored or sent.
 */

/** Metadata keys that name a card verification value, compared without case. */
const CVV_KEYS: ReadonlySet<string> = new Set(['cvv', 'cvc', 'cvv2', 'cav2', 'cid']);

/** Digits in groups, one space or dash between two groups (`4111 1111-1111 1111`). */
const DIGIT_GROUPS = /\d+(?:[ -]\d+)*/g;

export const CARD_NUMBER_MESSAGE =
  'must not hold a card number: the service never stores one (card data goes in `card` only)';
export const CVV_KEY_MESSAGE =
  'names a card verification value, which the service never stores';

/**
 * Whether `text` holds a run of 13 to 19 digits (spaces or dashes allowed between them) that
 * passes the Luhn check: any whole groups of a digit run whose digits number 13 to 19
 * (`4111111111111111 2026` holds one; a 25-digit order number, with no group boundary inside, does not).
 */
export function holdsCardNumber(text: string): boolean {
  for (const run of withoutUuids(text).matchAll(DIGIT_GROUPS)) {
    const groups = run[0].split(/[ -]/);
    for (let first = 0; first < groups.length; first++) {
      let digits = '';
      for (let last = first; last < groups.length; last++) {
        digits += groups[last];
        if (digits.length > 19) break;
        if (digits.length >= 13 && luhnValid(digits)) return true;
      }
    }
  }
  return false;
}

/**
 * A UUID in its canonical form (8-4-4-4-12 hex digits, not glued to a letter or digit on either
 * side): an identifier, never a card number. Its dashes join its digit groups into one run, and
 * about one random UUID in 330 held a run of 13 to 19 digits that passed the Luhn check, so a
 * shop's UUID order reference in metadata was refused as a card number. It is read as a space:
 * a card number beside it is still found, and one glued to it leaves it unstripped. (Digits
 * written in a UUID's own groups, 8-4-4-4-12, are taken for an id: card numbers are written
 * whole or in groups of four, or 4-6-5.)
 */
const UUID =
  /(?<![0-9A-Za-z])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9A-Za-z])/gi;

function withoutUuids(text: string): string {
  return text.includes('-') ? text.replace(UUID, ' ') : text;
}

export function namesCvv(key: string): boolean {
  return CVV_KEYS.has(key.toLowerCase());
}

/**
 * The card data in a field: one error for a string, one per key of an object of strings
 * (`extras.note`), an overlong key cut as metadata errors cut it. Other values are the field's
 * other rules' business.
 */
export function cardDataProblems(value: unknown, field: string): FieldError[] {
  if (typeof value === 'string')
    return holdsCardNumber(value) ? [{ field, message: CARD_NUMBER_MESSAGE }] : [];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const errors: FieldError[] = [];
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v === 'string' && holdsCardNumber(v))
      errors.push({ field: `${field}.${key.slice(0, 40)}`, message: CARD_NUMBER_MESSAGE });
  }
  return errors;
}

/** The constraint name flattenValidationErrors expands into cardDataProblems. */
export const NO_CARD_DATA_CONSTRAINT = 'noCardData';

/** A free-text field (or an object of strings) that must hold no card number. */
export function NoCardData(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: NO_CARD_DATA_CONSTRAINT,
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: CARD_NUMBER_MESSAGE },
      validator: { validate: (value: unknown) => cardDataProblems(value, '').length === 0 },
    });
  };
}
