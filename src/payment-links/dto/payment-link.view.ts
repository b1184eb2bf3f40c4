import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { sameShape } from '../../common/openapi';
import { PAYMENT_LINK_STATUSES, type PaymentLinkStatus } from '../payment-link.state';

/** A payment link as its GET returns it (shared/API.md, Payment links). */
export interface PaymentLinkView {
  id: string;
  url: string;
  status: PaymentLinkStatus;
  amount: string;
  currency: number;
  currencyCode: string | null;
  description: string;
  payways: string[];
  reusable: boolean;
  expiresAt: string | null;
  metadata: Record<string, string>;
  invoices: string[];
  createdAt: string;
}

@ApiSchema({ name: 'PaymentLink' })
export class PaymentLinkSchema {
  @ApiProperty({ pattern: '^plink_[0-9a-f]{32}$', example: 'plink_0b6f6a523c1e4a8f9a7e2d5c1f0e9b11' })
  id: string;
  @ApiProperty({
    description: 'The payer page (no key needed): send it to the payer',
    example: 'https://pay.shop.example/pay/l/plink_0b6f6a523c1e4a8f9a7e2d5c1f0e9b11',
  })
  url: string;
  @ApiProperty({
    enum: PAYMENT_LINK_STATUSES,
    example: 'active',
    description:
      '`paid`: a single-use link whose invoice succeeded; `expired`: its expiresAt has passed; `deactivated` by the shop',
  })
  status: PaymentLinkStatus;
  @ApiProperty({ example: '100.10' }) amount: string;
  @ApiProperty({ example: 643 }) currency: number;
  @ApiProperty({ type: String, nullable: true, example: 'RUB' }) currencyCode: string | null;
  @ApiProperty({ example: 'Consultation, 1 hour' }) description: string;
  @ApiProperty({
    type: [String],
    example: ['card_core_payin_rub[mock_server,success_with_callback]'],
  })
  payways: string[];
  @ApiProperty({ example: false }) reusable: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  expiresAt: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { campaign: 'spring' },
  })
  metadata: Record<string, string>;
  @ApiProperty({
    type: [String],
    description: 'shopOrderId of every invoice made from the link (`<id>-<n>`), oldest first',
    example: ['plink_0b6f6a523c1e4a8f9a7e2d5c1f0e9b11-1'],
  })
  invoices: string[];
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:02:00.000Z' }) createdAt: string;
}
sameShape<PaymentLinkView, PaymentLinkSchema>(true);
