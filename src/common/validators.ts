import { applyDecorators } from '@nestjs/common';
import {
  IsString,
  Matches,
  MaxLength,
  registerDecorator,
  ValidationOptions,
} from 'class-validator';
import { Transform } from 'class-transformer';
import { currencyProblem, minorUnitsProblem, parseCurrencyInput } from './currency';
import { Amount } from './money';
import { dateTimeMessage, parseDateTime, type DateTimeKind } from './date-time';

/** What a refused amount is told (`amountProblem`). */
export const AMOUNT_MESSAGE = 'must be a positive decimal string such as "100.10"';

/**
 * What a refused amount is told. A JSON number is most often an amount in minor units (a habit
 * from other payment APIs): the answer says amounts are major units, with what the obvious fix
 * would mean (`"10000"` is ten thousand, not one hundred). Only a short whole number is echoed.
 */
export function amountProblem(value: unknown): string {
  if (typeof value !== 'number') return AMOUNT_MESSAGE;
  const base = 'must be a decimal string in major units, never a JSON number';
  if (!Number.isSafeInteger(value) || value <= 0 || value >= 1e11)
    return `${base}: "100.00" is one hundred`;
  return `${base}: "${value}" would be ${value}.00; "100.00" is one hundred`;
}

/** A positive decimal string ("100.10"); JSON numbers are refused so no float touches money. */
export function IsDecimalAmount(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isDecimalAmount',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: (args) => amountProblem(args.value), ...options },
      validator: {
        validate: (value: unknown) => Amount.isValid(value) && Amount.parse(value).isPositive(),
      },
    });
  };
}

/** The gateway's payway charset: letters, underscore, comma, square brackets (scenario suffixes). */
const PAYWAY_PATTERN = /^[A-Za-z_,[\]]+$/;

/**
 * What a payway outside the charset is told; one written with spaces (`[mock_server, rejected]`)
 * is shown without them, as the payway list writes it.
 */
export function paywayCharsetProblem(value: unknown): string {
  const base = 'may hold only letters, underscore, comma and square brackets';
  if (typeof value !== 'string' || value.length > 150) return base;
  const joined = value.replace(/\s+/g, '');
  return joined !== value && PAYWAY_PATTERN.test(joined)
    ? `${base} (no spaces: ${joined})`
    : base;
}

/** A payway as the gateway accepts it: at most 150 characters of its charset. */
export function IsPayway(opts: Pick<ValidationOptions, 'each'> = {}): PropertyDecorator {
  return applyDecorators(
    IsString(opts),
    MaxLength(150, opts),
    Matches(PAYWAY_PATTERN, {
      ...opts,
      message: (args) => paywayCharsetProblem(args.value),
    }),
  );
}

/**
 * `amount` has no more fraction digits than the ISO 4217 minor unit of the currency in the
 * sibling property `currencyProperty` (checked only when both are well-formed; `when` narrows it).
 */
export function FitsMinorUnits(
  currencyProperty: string,
  when: (dto: Record<string, unknown>) => boolean = () => true,
): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'fitsMinorUnits',
      target: target.constructor,
      propertyName: String(propertyName),
      options: {
        message: (args) => {
          const dto = args.object as Record<string, unknown>;
          return minorUnitsProblem(String(args.value), dto[currencyProperty] as number) ?? 'does not fit its currency';
        },
      },
      validator: {
        validate: (value: unknown, args) => {
          const dto = args?.object as Record<string, unknown>;
          const currency = dto[currencyProperty];
          // A currency that is itself refused is named there, never blamed on the amount.
          if (typeof value !== 'string' || typeof currency !== 'number' || !when(dto)) return true;
          if (parseCurrencyInput(currency) !== currency) return true;
          return minorUnitsProblem(value, currency) === null;
        },
      },
    });
  };
}

/**
 * A currency: ISO 4217 numeric (`643`, `"643"`) or alphabetic in any case (`"RUB"`),
 * turned into the numeric code before validation, so services always see the gateway's number.
 * Anything else is one message naming ISO 4217 with an example.
 */
export function IsCurrency(): PropertyDecorator {
  const transform = Transform(({ value }: { value: unknown }) => parseCurrencyInput(value) ?? value);
  return (target: object, propertyName: string | symbol) => {
    transform(target, propertyName);
    registerDecorator({
      name: 'isCurrency',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: (args) => currencyProblem(args.value) },
      validator: {
        validate: (value: unknown) => typeof value === 'number' && parseCurrencyInput(value) === value,
      },
    });
  };
}

/**
 * A date or time field read by the one parser (src/common/date-time.ts): `time` an ISO 8601
 * date-time with an offset, `day` a calendar day, `timeOrDay` either. Anything else is a 400
 * naming the field. The handler turns the text into its Date with `instantOf`.
 */
export function IsDateTime(kind: DateTimeKind): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isDateTime',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: dateTimeMessage(kind) },
      validator: { validate: (value: unknown) => parseDateTime(value, kind) !== null },
    });
  };
}
