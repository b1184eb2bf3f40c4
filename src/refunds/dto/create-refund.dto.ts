import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length } from 'class-validator';
import { IsMetadata } from '../../common/metadata';
import { FitsMinorUnits, IsCurrency, IsDecimalAmount } from '../../common/validators';

export class CreateRefundDto {
  @ApiProperty({
    description: "The shop's refund id, unique per shop: the idempotency key",
    example: 'refund-1001-1',
    maxLength: 255,
  })
  @IsString()
  @Length(1, 255)
  shopRefundId: string;

  @ApiProperty({
    description: 'Decimal string above zero, in the invoice currency',
    example: '50.00',
  })
  @IsDecimalAmount()
  @FitsMinorUnits('currency')
  amount: string;

  @ApiPropertyOptional({
    oneOf: [{ type: 'integer', example: 643 }, { type: 'string', example: 'RUB' }],
    description:
      "Optional check: must be the invoice's currency; ISO 4217 numeric (643) or alphabetic in any case (\"RUB\")",
    example: 643,
  })
  @IsOptional()
  @IsCurrency()
  currency?: number;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: 500 },
    maxProperties: 20,
    description:
      "The shop's own references: at most 20 string keys (1-40 characters) with string values (at most 500). " +
      'Stored, returned, carried in every event, filterable in lists (?metadata[key]=value); never sent to the gateway.',
    example: { customerId: 'c-42', cartId: 'cart-7' },
  })
  @IsOptional()
  @IsMetadata()
  metadata?: Record<string, string>;
}

