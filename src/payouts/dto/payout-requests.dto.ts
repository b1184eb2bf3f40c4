import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import type { AmountType } from '../payout.entity';
import { IsDecimalAmount, IsPayway } from '../../common/validators';

const AMOUNT_TYPES: AmountType[] = ['ps_amount', 'shop_amount'];

class PayoutTermsDto {
  @ApiProperty({ example: '1000.00', description: 'Decimal string, never a JSON number' })
  @IsDecimalAmount()
  amount: string;

  @ApiProperty({
    enum: AMOUNT_TYPES,
    description:
      'ps_amount: the payee gets exactly amount; shop_amount: exactly amount is written off',
  })
  @IsIn(AMOUNT_TYPES)
  amountType: AmountType;

  @ApiProperty({ example: 643, description: 'Gateway integer currency code debited from the shop' })
  @IsInt()
  shopCurrency: number;

  @ApiProperty({ example: 'card_rub', maxLength: 150 })
  @IsPayway()
  payway: string;
}

export class QuotePayoutDto extends PayoutTermsDto {}

export class CheckAccountDto {
  @ApiProperty({ example: 'card_rub', maxLength: 150 })
  @IsPayway()
  payway: string;

  @ApiProperty({ example: '1000.00' })
  @IsDecimalAmount()
  amount: string;

  @ApiProperty({
    description: 'Recipient account (card number, phone, login); never stored in clear or logged',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  account: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @IsOptional()
  @IsObject()
  accountDetails?: Record<string, string>;
}

export class CreatePayoutDto extends PayoutTermsDto {
  @ApiProperty({ maxLength: 255, description: "The shop's payout id: the idempotency key" })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  shopPaymentId: string;

  @ApiProperty({
    description:
      'Recipient account, checked against account_info_config; stored only encrypted, shown masked',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  account: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: "The other details named in the payway's account_info_config",
  })
  @IsOptional()
  @IsObject()
  accountDetails?: Record<string, string>;

  @ApiPropertyOptional({ maxLength: 255 })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  description?: string;
}
