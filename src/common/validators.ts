import { applyDecorators } from '@nestjs/common';
import {
  IsString,
  Matches,
  MaxLength,
  registerDecorator,
  ValidationOptions,
} from 'class-validator';
import { Amount } from './money';

/** A positive decimal string ("100.10"); JSON numbers are refused so no float touches money. */
export function IsDecimalAmount(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isDecimalAmount',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: 'must be a positive decimal string such as "100.10"', ...options },
      validator: {
        validate: (value: unknown) => Amount.isValid(value) && Amount.parse(value).isPositive(),
      },
    });
  };
}

/** The gateway's payway charset: letters, underscore, comma, square brackets (scenario suffixes). */
const PAYWAY_PATTERN = /^[A-Za-z_,[\]]+$/;

/** A payway as the gateway accepts it: at most 150 characters of its charset. */
export function IsPayway(): PropertyDecorator {
  return applyDecorators(
    IsString(),
    MaxLength(150),
    Matches(PAYWAY_PATTERN, {
      message: 'may hold only letters, underscore, comma and square brackets',
    }),
  );
}
