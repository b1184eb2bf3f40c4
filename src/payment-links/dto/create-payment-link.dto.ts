import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
} from 'class-validator';
import { NoCardData } from '../../common/card-data';
import { IsMetadata } from '../../common/metadata';
import { PageQuery } from '../../common/pagination';
import {
  FitsMinorUnits,
  IsCurrency,
  IsDateTime,
  IsDecimalAmount,
  IsPayway,
} from '../../common/validators';
import { PAYMENT_LINK_STATUSES, type PaymentLinkStatus } from '../payment-link.state';

/** At most this many payways on one link (the payer's page lists them all). */
export const MAX_LINK_PAYWAYS = 50;

/** `POST /payment-links`: the invoice create's own validators, field by field. */
export class CreatePaymentLinkDto {
  @ApiProperty({
    example: '100.10',
    description:
      "Decimal string, never a JSON number; at most the currency's ISO 4217 minor unit of fraction digits; within the bounds of every payway offered",
  })
  @IsDecimalAmount()
  @FitsMinorUnits('currency')
  amount: string;

  @ApiProperty({
    oneOf: [{ type: 'integer', example: 643 }, { type: 'string', example: 'RUB' }],
    example: 643,
    description: 'ISO 4217 currency code, numeric or alphabetic; answers carry both',
  })
  @IsCurrency()
  currency: number;

  @ApiProperty({
    minLength: 1,
    maxLength: 255,
    example: 'Consultation, 1 hour',
    description: 'What the payer pays for, shown on the payer page; a card number in it is a 400',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  @NoCardData()
  description: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_LINK_PAYWAYS,
    example: ['card_core_payin_rub[mock_server,success_with_callback]'],
    description:
      'Payway aliases the payer may choose from, each known, active and taking the amount; default: every active payway of the currency whose bounds take the amount',
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_LINK_PAYWAYS)
  @IsPayway({ each: true })
  payways?: string[];

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-12-31T23:59:59Z',
    description: 'ISO 8601 with an offset, in the future: the link is `expired` from then on',
  })
  @IsOptional()
  @IsDateTime('time')
  expiresAt?: string;

  @ApiPropertyOptional({
    default: false,
    example: false,
    description: 'true: paid any number of times (stays active); false: paid once, then `paid`',
  })
  @IsOptional()
  @IsBoolean()
  reusable?: boolean;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: 500 },
    maxProperties: 20,
    description:
      "The shop's own references (as on invoices: at most 20 keys of 1-40 characters, values of at most 500); each invoice of the link carries them too",
    example: { campaign: 'spring' },
  })
  @IsOptional()
  @IsMetadata()
  metadata?: Record<string, string>;
}

export class ListPaymentLinksQuery extends PageQuery {
  @ApiPropertyOptional({ enum: PAYMENT_LINK_STATUSES, example: 'active' })
  @IsOptional()
  @IsIn(PAYMENT_LINK_STATUSES)
  status?: PaymentLinkStatus;
}
