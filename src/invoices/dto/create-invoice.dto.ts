import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
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
import { IsDecimalAmount, IsPayway } from '../../common/validators';

export class QuoteInvoiceDto {
  @ApiProperty({ maxLength: 255 })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  shopOrderId: string;

  @ApiProperty({ example: '100.10', description: 'Decimal string, never a JSON number' })
  @IsDecimalAmount()
  amount: string;

  @ApiProperty({ example: 643, description: 'Gateway integer currency code' })
  @IsInt()
  currency: number;

  @ApiProperty({ example: 'card_rub', maxLength: 150 })
  @IsPayway()
  payway: string;

  @ApiPropertyOptional({ maxLength: 255 })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  description?: string;
}

export class CardDto {
  @ApiProperty({
    description: 'Card number, 12-19 digits; passed to the gateway, never stored or logged',
  })
  @IsString()
  @Matches(/^\d{12,19}$/, { message: 'must be 12 to 19 digits' })
  number: string;

  @ApiPropertyOptional({ maxLength: 100 })
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

  @ApiProperty({ description: '3 or 4 digits; never stored or logged' })
  @IsString()
  @Matches(/^\d{3,4}$/, { message: 'must be 3 or 4 digits' })
  cvv: string;
}

export class ClientInfoDto {
  @IsOptional() @IsString() @MaxLength(1024) browserAcceptHeader?: string;
  @IsOptional() @IsBoolean() browserJavaEnabled?: boolean;
  @IsOptional() @IsBoolean() browserJavascriptEnabled?: boolean;
  @IsOptional() @IsString() @MaxLength(16) browserLanguage?: string;
  @IsOptional() @IsString() @MaxLength(8) browserColorDepth?: string;
  @IsOptional() @IsString() @MaxLength(8) browserScreenHeight?: string;
  @IsOptional() @IsString() @MaxLength(8) browserScreenWidth?: string;
  @IsOptional() @IsString() @MaxLength(8) browserTz?: string;
  @IsOptional() @IsString() @MaxLength(1024) browserUserAgent?: string;
  @IsOptional()
  @IsString()
  @Matches(/^\d{2}$/, { message: 'must be a two-digit code' })
  challengeWindowSize?: string;
}

export class CreateInvoiceDto extends QuoteInvoiceDto {
  @ApiPropertyOptional({ description: 'true: invoice/hold (two-step), then charge or unhold' })
  @IsOptional()
  @IsBoolean()
  twoStep?: boolean;

  @ApiPropertyOptional({
    description: "The payway's add-on fields (add_ons_config), each checked against its regex",
    example: { phone: '+79001234567' },
  })
  @IsOptional()
  @IsObject()
  extras?: Record<string, string>;

  @ApiPropertyOptional({ description: 'Payer IP address' })
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

  @ApiPropertyOptional({ description: 'Ask the gateway for a recurrent-payment token' })
  @IsOptional()
  @IsBoolean()
  savePaymentToken?: boolean;

  @ApiPropertyOptional({
    description: 'Token of an earlier payment: a recurrent charge without the payer',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  paymentToken?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2048)
  successUrl?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2048)
  failedUrl?: string;
}
