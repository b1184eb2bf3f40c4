import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsIP,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { NoCardData } from '../../common/card-data';
import { FitsMinorUnits, IsCurrency, IsDecimalAmount, IsPayway } from '../../common/validators';
import { IsMetadata } from '../../common/metadata';
import { HOLD_POLICIES, type HoldPolicy } from '../../config/types';

export class QuoteInvoiceDto {
  @ApiProperty({ maxLength: 255, description: "The shop's order id: the idempotency key", example: 'order-1001' })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  shopOrderId: string;

  @ApiProperty({
    example: '100.10',
    description: "Decimal string, never a JSON number; at most the currency's ISO 4217 minor unit of fraction digits",
  })
  @IsDecimalAmount()
  @FitsMinorUnits('currency')
  amount: string;

  @ApiProperty({
    oneOf: [{ type: 'integer', example: 643 }, { type: 'string', example: 'RUB' }],
    example: 643,
    description:
      'ISO 4217 currency code, numeric (643, also as text "643") or alphabetic in any case ("RUB"); answers carry both ' +
      "(currency: 643, currencyCode: \"RUB\"). May differ from the payway's: the gateway then prices the order in the " +
      "payway's currency (invoice/try) and the payway's limits apply to that price.",
  })
  @IsCurrency()
  currency: number;

  @ApiProperty({
    example: 'card_core_payin_rub[mock_server,success_with_callback]',
    description: 'A payway alias exactly as the payway list gives it, bracketed scenario included',
    maxLength: 150,
  })
  @IsPayway()
  payway: string;

  @ApiPropertyOptional({
    maxLength: 255,
    example: 'Order 1001',
    description: 'Free text; a card number in it is a 400 (never stored or sent)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  @NoCardData()
  description?: string;
}

export class CardDto {
  @ApiProperty({
    description: 'Card number, 12-19 digits; passed to the gateway, never stored or logged',
    example: '4111111111111111',
  })
  @IsString()
  @Matches(/^\d{12,19}$/, { message: 'must be 12 to 19 digits' })
  number: string;

  @ApiPropertyOptional({ maxLength: 100, example: 'IVAN PETROV' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  cardholder?: string;

  @ApiProperty({ example: '12' })
  @IsString()
  @Matches(/^\d{2}$/, { message: 'must be two digits' })
  expiryMonth: string;

  @ApiProperty({ example: '29' })
  @IsString()
  @Matches(/^\d{2}$/, { message: 'must be two digits' })
  expiryYear: string;

  @ApiProperty({ description: '3 or 4 digits; never stored or logged', example: '123' })
  @IsString()
  @Matches(/^\d{3,4}$/, { message: 'must be 3 or 4 digits' })
  cvv: string;
}

export class ClientInfoDto {
  @ApiPropertyOptional({ example: 'text/html' }) @IsOptional() @IsString() @MaxLength(1024) browserAcceptHeader?: string;
  @ApiPropertyOptional({ example: false }) @IsOptional() @IsBoolean() browserJavaEnabled?: boolean;
  @ApiPropertyOptional({ example: true }) @IsOptional() @IsBoolean() browserJavascriptEnabled?: boolean;
  @ApiPropertyOptional({ example: 'ru-RU' }) @IsOptional() @IsString() @MaxLength(16) browserLanguage?: string;
  @ApiPropertyOptional({ example: '24' }) @IsOptional() @IsString() @MaxLength(8) browserColorDepth?: string;
  @ApiPropertyOptional({ example: '1080' }) @IsOptional() @IsString() @MaxLength(8) browserScreenHeight?: string;
  @ApiPropertyOptional({ example: '1920' }) @IsOptional() @IsString() @MaxLength(8) browserScreenWidth?: string;
  @ApiPropertyOptional({ example: '-180' }) @IsOptional() @IsString() @MaxLength(8) browserTz?: string;
  @ApiPropertyOptional({ example: 'Mozilla/5.0' }) @IsOptional() @IsString() @MaxLength(1024) browserUserAgent?: string;
  @ApiPropertyOptional({ example: '05' })
  @IsOptional()
  @IsString()
  @Matches(/^\d{2}$/, { message: 'must be a two-digit code' })
  challengeWindowSize?: string;
}

export class CreateInvoiceDto extends QuoteInvoiceDto {
  @ApiPropertyOptional({ description: 'true: invoice/hold (two-step), then charge or unhold', example: false })
  @IsOptional()
  @IsBoolean()
  twoStep?: boolean;

  @ApiPropertyOptional({
    description:
      "The payway's add-on fields (add_ons_config), each checked against its regex; a card number in a value is a 400 (card data goes in `card`)",
    example: { phone: '+79001234567' },
  })
  @IsOptional()
  @IsObject()
  @NoCardData()
  extras?: Record<string, string>;

  @ApiPropertyOptional({ description: 'Payer IP address', example: '203.0.113.7' })
  @IsOptional()
  @IsIP()
  clientIp?: string;

  @ApiPropertyOptional({ type: ClientInfoDto, description: 'Payer browser data for 3-D Secure 2' })
  @IsOptional()
  @ValidateNested()
  @Type(() => ClientInfoDto)
  clientInfo?: ClientInfoDto;

  @ApiPropertyOptional({
    type: CardDto,
    description: 'Card data (PCI shops only): sent to the gateway, never stored',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => CardDto)
  card?: CardDto;

  @ApiPropertyOptional({ description: 'Ask the gateway for a recurrent-payment token', example: false })
  @IsOptional()
  @IsBoolean()
  savePaymentToken?: boolean;

  @ApiPropertyOptional({
    description: 'Token of an earlier payment: a recurrent charge without the payer',
    example: 'tok_7f3a9c',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  paymentToken?: string;

  @ApiPropertyOptional({
    description:
      'shopOrderId of the earlier invoice that issued the recurrent token: charges with that token, so the order ' +
      'system never handles the raw token. Not together with paymentToken.',
    example: 'order-1000',
    maxLength: 255,
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  paymentTokenFrom?: string;

  @ApiPropertyOptional({ example: 'https://shop.example/orders/1001/paid' })
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2048)
  successUrl?: string;

  @ApiPropertyOptional({ example: 'https://shop.example/orders/1001/failed' })
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2048)
  failedUrl?: string;

  @ApiPropertyOptional({
    enum: HOLD_POLICIES,
    description:
      "With twoStep: what the service does with the hold HOLD_POLICY_LEAD_S before its expiry (charge or release it by itself, or only warn: notify); default HOLD_POLICY",
    example: 'charge',
  })
  @IsOptional()
  @IsIn(HOLD_POLICIES)
  holdPolicy?: HoldPolicy;

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
