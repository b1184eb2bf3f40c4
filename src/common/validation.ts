import {
  ValidationError,
  ValidationPipe,
  type ArgumentMetadata,
  type ValidationPipeOptions,
} from '@nestjs/common';
import type { ValidatorOptions } from 'class-validator';
import { closestField } from './closest';
import { planOf, passesQuickly, quickCheckApplies } from './compiled-validation';
import { quickInstance } from './compiled-transform';
import { FieldError, ValidationFailed } from './errors';
import { inheritedNameErrors } from './inherited-names';
import { METADATA_CONSTRAINT, METADATA_FILTER_CONSTRAINT, metadataProblems } from './metadata';
import { cardDataProblems, NO_CARD_DATA_CONSTRAINT } from './card-data';

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
        : Object.entries(constraints).flatMap(([name, message]) =>
          // Card data names the key at fault too (`extras.note`).
          name === NO_CARD_DATA_CONSTRAINT
            ? cardDataProblems(e.value, field)
            : [{ field, message: withoutSubject(message, e.property) }],
        );
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

/**
 * Nest's ValidationPipe, whose class-validator call first asks the compiled check
 * (compiled-validation.ts): a body it passes has no errors to report, so class-validator runs
 * only for the rest, and makes their errors exactly as before.
 */
class QuickValidationPipe extends ValidationPipe {
  /**
   * The nested-binary scan's metadata by class, kept across requests (Nest's pipe makes it per
   * call): a class's metadata does not change once its decorators have run.
   */
  private readonly scanMetadata = new Map<unknown, unknown[]>();

  protected override findNestedBinaryValues(
    object: unknown,
    metadataCache: Map<unknown, unknown[]> = this.scanMetadata,
  ): ValidationError[] {
    return super.findNestedBinaryValues(object, metadataCache);
  }

  protected override validate(
    object: object,
    validatorOptions?: ValidatorOptions,
  ): Promise<ValidationError[]> | ValidationError[] {
    // A body that passes is answered at once, as before: the hints cost only a refused body.
    if (quickCheckApplies(validatorOptions) && passesQuickly(object)) return [];
    return this.validateWithHints(object, validatorOptions);
  }

  private async validateWithHints(
    object: object,
    validatorOptions?: ValidatorOptions,
  ): Promise<ValidationError[]> {
    const errors = await super.validate(object, validatorOptions);
    suggestFieldNames(errors, object, { left: MAX_SUGGESTIONS });
    return errors;
  }
}

/** Unknown fields given a "did you mean" per answer: the work stays bounded by what is shown. */
const MAX_SUGGESTIONS = 20;

/**
 * An unknown field ("should not exist") that resembles a declared one of its object's class gets
 * its name: `shop_order_id` → "should not exist; did you mean shopOrderId?". Nested objects
 * (`card`, `clientInfo`) are read with their own class's fields.
 */
function suggestFieldNames(errors: ValidationError[], object: unknown, budget: { left: number }): void {
  if (object === null || typeof object !== 'object') return;
  for (const e of errors) {
    if (budget.left <= 0) return;
    const unknown = e.constraints?.whitelistValidation;
    if (unknown !== undefined) {
      budget.left--;
      const declared = planOf((object as object).constructor)?.allowed;
      const near = declared ? closestField(e.property, declared) : null;
      if (near !== null) e.constraints!.whitelistValidation = `${unknown}; did you mean ${near}?`;
    }
    if (e.children && e.children.length > 0)
      suggestFieldNames(e.children, (object as Record<string, unknown>)[e.property], budget);
  }
}

/**
 * The service's pipe: the quick pipe above, which answers exactly as Nest's, and one refusal more.
 * A key named like an inherited member (`toString`, `constructor`, `__proto__`: see
 * inherited-names.ts) is dropped by the framework before validation, so Nest's pipe accepted it
 * without a word where any other unknown key is a 400. Here it is the same 400 ("should not
 * exist"), beside whatever else is wrong with the value.
 */
class ServiceValidationPipe extends QuickValidationPipe {
  /** The options class-validator is called with satisfy the quick check's (see validate). */
  private readonly quick = quickCheckApplies({
    ...this.validatorOptions,
    validationError: { target: false, ...this.validatorOptions.validationError },
  });

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const metatype = metadata.metatype;
    const validated = metatype !== undefined && this.toValidate(metadata);
    const inherited = validated ? inheritedNameErrors(value, metatype) : [];
    if (inherited.length === 0) {
      // A plain body that passes: the instance plainToInstance would make, checked by the
      // compiled rules, without Nest's walks over it (compiled-transform.ts). Anything else, and
      // every refusal, goes through Nest's pipe as before.
      if (validated && this.quick) {
        const instance = quickInstance(value, metatype);
        if (instance !== undefined && passesQuickly(instance)) return instance;
      }
      return super.transform(value, metadata);
    }
    let rest: FieldError[] = [];
    try {
      await super.transform(value, metadata);
    } catch (e) {
      if (!(e instanceof ValidationFailed)) throw e;
      rest = [...e.uncapped];
    }
    throw new ValidationFailed([...inherited, ...rest]);
  }
}

/** The pipe's options (the differential test builds class-validator's own pipe from them). */
export const VALIDATION_PIPE_OPTIONS: ValidationPipeOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  transform: true,
  // The value is read only to tell a missing field from a wrong one (flattenValidationErrors);
  // it is never echoed back: it may be card data.
  validationError: { target: false, value: true },
  exceptionFactory: (errors) => new ValidationFailed(flattenValidationErrors(errors)),
};

export function createValidationPipe(): ValidationPipe {
  return new ServiceValidationPipe(VALIDATION_PIPE_OPTIONS);
}
