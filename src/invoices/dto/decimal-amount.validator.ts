import { registerDecorator, ValidationOptions } from 'class-validator';
import { Amount } from '../../common/money';

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
