import { ValidationError, ValidationPipe } from '@nestjs/common';
import { FieldError, ValidationFailed } from './errors';

/** Flattens class-validator errors to `{field, message}` with dotted paths (`card.number`). */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((e) => {
    const field = parent ? `${parent}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((message) => ({
      field,
      message: message.replace(new RegExp(`^${e.property}\\s`), '').replace(/^property \S+ /, ''),
    }));
    return own.concat(flattenValidationErrors(e.children ?? [], field));
  });
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
