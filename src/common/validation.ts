import { ValidationError, ValidationPipe } from '@nestjs/common';
import { FieldError, ValidationFailed } from './errors';
import { METADATA_CONSTRAINT, METADATA_FILTER_CONSTRAINT, metadataProblems } from './metadata';

/**
 * Flattens class-validator errors to `{field, message}` with dotted paths (`card.number`). A
 * field that is absent (or null) gets one message, "is required", instead of one per rule it
 * would have to pass.
 */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((e) => {
    const field = parent ? `${parent}.${e.property}` : e.property;
    const constraints = e.constraints ?? {};
    const missing =
      (e.value === undefined || e.value === null) &&
      Object.keys(constraints).length > 0 &&
      !('whitelistValidation' in constraints);
    // Metadata names the key at fault (`metadata.orderRef`), one error per key.
    const metadata = METADATA_CONSTRAINT in constraints || METADATA_FILTER_CONSTRAINT in constraints;
    const own = missing
      ? [{ field, message: 'is required' }]
      : metadata
        ? metadataProblems(e.value, field, METADATA_FILTER_CONSTRAINT in constraints)
        : Object.values(constraints).map((message) => ({
          field,
          message: withoutSubject(message, e.property),
        }));
    return own.concat(flattenValidationErrors(e.children ?? [], field));
  });
}

/**
 * class-validator starts messages with the property ("amount must be…", "property x should not
 * exist"); the field is reported apart, so the subject is cut by plain string comparison (a
 * property name is caller text: never a pattern).
 */
function withoutSubject(message: string, property: string): string {
  for (const prefix of [`property ${property} `, `${property} `]) {
    if (message.startsWith(prefix)) return message.slice(prefix.length);
  }
  return message;
}

export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    // The value is read only to tell a missing field from a wrong one (flattenValidationErrors);
    // it is never echoed back: it may be card data.
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => new ValidationFailed(flattenValidationErrors(errors)),
  });
}
