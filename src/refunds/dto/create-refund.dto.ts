import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Length } from 'class-validator';
import { FitsMinorUnits, IsDecimalAmount } from '../../common/validators';

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
    description: "Optional check: must equal the invoice's currency code",
    example: 643,
  })
  @IsOptional()
  @IsInt()
  currency?: number;
}
