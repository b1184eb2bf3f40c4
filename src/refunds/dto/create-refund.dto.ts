import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Length, Matches } from 'class-validator';

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
  @IsString()
  @Matches(/^(0|[1-9]\d{0,17})(\.\d{1,8})?$/, {
    message: 'must be a decimal string such as "100.10"',
  })
  amount: string;

  @ApiPropertyOptional({
    description: "Optional check: must equal the invoice's currency code",
    example: 643,
  })
  @IsOptional()
  @IsInt()
  currency?: number;
}
