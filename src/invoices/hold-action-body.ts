import type { FieldError } from '../common/errors';

/** What a shop is told when it tries a partial capture (the gateway offers none). */
export const PARTIAL_CAPTURE_MESSAGE =
  'the gateway charges the whole held amount; partial capture is not offered';

/**
 * `POST /invoices/{id}/charge` and `/unhold` take no body fields: the gateway charges or
 * releases the whole hold. Anything sent is refused, naming the field, rather than ignored
 * (a shop asking for a partial capture must not be charged in full). No body, or `{}`, is fine.
 * Field names are compared by plain string comparison (caller text, never a pattern).
 */
export function holdActionBodyErrors(body: unknown): FieldError[] {
  if (body === undefined || body === null) return [];
  if (typeof body !== 'object' || Array.isArray(body))
    return [{ field: 'body', message: 'must be empty or {}: charge and unhold take no fields' }];
  return Object.keys(body).map((field) => ({
    field,
    message:
      field.trim().toLowerCase() === 'amount'
        ? PARTIAL_CAPTURE_MESSAGE
        : 'is not accepted: charge and unhold take no fields',
  }));
}
