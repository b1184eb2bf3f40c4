import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQuery } from '../../common/pagination';

export const PAYMENT_TOKEN_STATUSES = ['active', 'revoked', 'expired'] as const;
export type PaymentTokenStatus = (typeof PAYMENT_TOKEN_STATUSES)[number];

/** A registry entry as `GET /payment-tokens` shows it: never the token itself. */
@ApiSchema({ name: 'PaymentToken' })
export class PaymentTokenView {
  @ApiProperty({ format: 'uuid', example: '0b6f6a52-3c1e-4a8f-9a7e-2d5c1f0e9b11' }) id: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The masked card or account the gateway reported',
    example: '555555******4444',
  })
  account: string | null;
  @ApiProperty({
    enum: PAYMENT_TOKEN_STATUSES,
    description: '`expired` once the gateway\'s expiry has passed; `revoked` wins over it',
    example: 'active',
  })
  status: PaymentTokenStatus;
  @ApiProperty({ description: 'shopOrderId of the invoice first issued the token', example: 'order-1001' })
  invoiceShopOrderId: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:02:00.000Z' }) createdAt: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When an invoice was last created with the token',
    example: '2026-02-15T10:02:00.000Z',
  })
  lastUsedAt: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: "The gateway's expiry of the token",
    example: '2027-01-15T10:02:00.000Z',
  })
  expiresAt: string | null;
  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, example: null })
  revokedAt?: string | null;
}

export class ListPaymentTokensQuery extends PageQuery {
  @ApiPropertyOptional({ enum: PAYMENT_TOKEN_STATUSES, example: 'active' })
  @IsOptional()
  @IsIn(PAYMENT_TOKEN_STATUSES)
  status?: PaymentTokenStatus;

  @ApiPropertyOptional({ description: 'Tokens issued to this invoice', example: 'order-1001' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  invoiceShopOrderId?: string;
}
