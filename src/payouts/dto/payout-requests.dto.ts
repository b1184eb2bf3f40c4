import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { NoCardData } from '../../common/card-data';
import type { AmountType } from '../payout.entity';
import { FitsMinorUnits, IsCurrency, IsDecimalAmount, IsPayway } from '../../common/validators';
import { IsMetadata } from '../../common/metadata';

const AMOUNT_TYPES: AmountType[] = ['ps_amount', 'shop_amount'];

class PayoutTermsDto {
  @ApiProperty({
    example: '1000.00',
    description: "Decimal string, never a JSON number; with shop_amount, at most shopCurrency's ISO 4217 minor unit of fraction digits",
  })
  @IsDecimalAmount()
  @FitsMinorUnits('shopCurrency', (dto) => dto.amountType === 'shop_amount')
  amount: string;

  @ApiProperty({
    enum: AMOUNT_TYPES,
    description:
      'ps_amount: the payee gets exactly amount; shop_amount: exactly amount is written off',
    example: 'ps_amount',
  })
  @IsIn(AMOUNT_TYPES)
  amountType: AmountType;

  @ApiProperty({
    oneOf: [{ type: 'integer', example: 643 }, { type: 'string', example: 'RUB' }],
    example: 643,
    description:
      'ISO 4217 currency debited from the shop, numeric (643, also as text "643") or alphabetic in any case ("RUB"); ' +
      "answers carry both (shopCurrency, shopCurrencyCode). May differ from the payway's: withdraw/try then " +
      "converts, and the payway's limits apply to payeeReceive in the payway's currency.",
  })
  @IsCurrency()
  shopCurrency: number;

  @ApiProperty({ example: 'qiwi_topup_rub_to_card[mock_server,success]', maxLength: 150 })
  @IsPayway()
  payway: string;
}

export class QuotePayoutDto extends PayoutTermsDto {}

export class CheckAccountDto {
  @ApiProperty({ example: 'qiwi_topup_rub_to_card[mock_server,success]', maxLength: 150 })
  @IsPayway()
  payway: string;

  @ApiProperty({ example: '1000.00' })
  @IsDecimalAmount()
  amount: string;

  @ApiProperty({
    description: 'Recipient account (card number, phone, login); never stored in clear or logged',
    example: '4111111111111111',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  account: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, example: { name: 'Ivan Petrov' } })
  @IsOptional()
  @IsObject()
  accountDetails?: Record<string, string>;
}

export class CreatePayoutDto extends PayoutTermsDto {
  @ApiProperty({ maxLength: 255, description: "The shop's payout id: the idempotency key", example: 'payout-2001' })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  shopPaymentId: string;

  @ApiProperty({
    description:
      'Recipient account, checked against account_info_config; stored only encrypted, shown masked',
    example: '4111111111111111',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  account: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: "The other details named in the payway's account_info_config",
    example: { name: 'Ivan Petrov' },
  })
  @IsOptional()
  @IsObject()
  accountDetails?: Record<string, string>;

  @ApiPropertyOptional({
    maxLength: 255,
    example: 'Seller payout, January',
    description: 'Free text; a card number in it is a 400 (never stored or sent)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  @NoCardData()
  description?: string;

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
