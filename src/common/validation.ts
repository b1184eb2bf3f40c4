import { ValidationError, ValidationPipe } from '@nestjs/common';
import { FieldError, ValidationFailed } from './errors';

/** Flattens class-validator errors to `{field, message}` with dotted paths (`card.number`). */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((e) => {
    const field = parent ? `${parent}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((message) => ({
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
    // Never echo rejected values back: they may be card data.
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationFailed(flattenValidationErrors(errors)),
  });
}
