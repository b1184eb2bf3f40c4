import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { sameShape } from '../../common/openapi';
import type { QuoteField, QuoteView } from '../operations/quote-invoice';
import type { InvoiceView } from '../invoice.view';
import { INVOICE_STATUSES, type InvoiceStatus } from '../invoice.state';
import { REFUND_PROGRESS, type RefundProgress } from '../invoice-refund-sums';

/** OpenAPI schemas of the invoice answers; `sameShape` keeps each equal to the type the code returns. */

@ApiSchema({ name: 'Redirect' })
export class RedirectSchema {
  @ApiProperty({ enum: ['GET', 'POST'], example: 'POST' }) method: 'GET' | 'POST';
  @ApiProperty({ example: 'https://pay.example/gateway/pay/98765' }) url: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Parameters to send (a form for POST, the query for GET)',
    example: { lang: 'ru', invoice: '98765' },
  })
  params: Record<string, string>;
}

@ApiSchema({ name: 'PaymentTokenInfo' })
export class PaymentTokenSchema {
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Masked account the token charges',
    example: '411111******1111',
  })
  account: string | null;
  @ApiProperty({ type: String, nullable: true, example: '2027-12-31T00:00:00.000Z' }) expiresAt:
    string | null;
  @ApiPropertyOptional({
    description: 'The raw recurrent token: admin keys only',
    example: 'tok_7f3a9c',
  })
  token?: string;
}

@ApiSchema({ name: 'Invoice' })
export class InvoiceSchema {
  @ApiProperty({ example: 'order-1001' }) shopOrderId: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The gateway's invoice id",
    example: '98765',
  })
  invoiceId: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The gateway's payment id",
    example: '556677',
  })
  paymentId: string | null;
  @ApiProperty({ enum: INVOICE_STATUSES, example: 'awaiting_payer' }) status: InvoiceStatus;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: "The gateway's status number",
    example: 2,
  })
  gatewayStatus: number | null;
  @ApiProperty({ description: 'Decimal string', example: '100.10' }) amount: string;
  @ApiProperty({ example: 643 }) currency: number;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'ISO 4217 alphabetic code of currency',
    example: 'RUB',
  })
  currencyCode: string | null;
  @ApiProperty({ example: 'card_core_payin_rub[mock_server,success_with_callback]' })
  payway: string;
  @ApiProperty({ type: String, nullable: true, example: 'Order 1001' }) description: string | null;
  @ApiProperty({ example: false }) twoStep: boolean;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: "The shop's own references, as given at create ({} when none)",
    example: { customerId: 'c-42' },
  })
  metadata: Record<string, string>;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "What the payer pays, fees included, in psCurrency (decimal string): the gateway's price from its quote, record or notification; null until the gateway has said",
    example: '103.10',
  })
  payerPrice: string | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    description:
      'ISO 4217 numeric code of the currency of payerPrice (the payway’s); null until known',
    example: 643,
  })
  psCurrency: number | null;
  @ApiProperty({
    description: 'Sum of SUCCESS refunds (decimal string with the amount scale)',
    example: '30.00',
  })
  refundedAmount: string;
  @ApiProperty({
    description:
      'Sum of WAITING refunds: sent to the gateway (or being sent) and not settled yet (decimal string with the amount scale)',
    example: '20.00',
  })
  refundPendingAmount: string;
  @ApiProperty({
    description:
      'Sum of the disputes (chargebacks) recorded on the invoice that are open, lost or accepted: held or taken back by the payer’s bank, ' +
      'so not refundable (decimal string with the amount scale)',
    example: '0.00',
  })
  disputedAmount: string;
  @ApiProperty({
    description:
      'What a new refund may still take: amount − refundedAmount − refundPendingAmount − disputedAmount (every refund that is not FAILED ' +
      'and every dispute open, lost or accepted counts). ' +
      'Zero ("0.00") for an invoice that is not succeeded, since only a paid invoice can be refunded; never below zero. ' +
      'Decimal string with the amount scale',
    example: '50.00',
  })
  refundableAmount: string;
  @ApiProperty({
    enum: REFUND_PROGRESS,
    description:
      'From refundedAmount (SUCCESS refunds only): `none` when it is zero, `full` when it equals the amount, `partial` otherwise',
    example: 'partial',
  })
  refundStatus: RefundProgress;
  @ApiProperty({ type: RedirectSchema, nullable: true }) redirect: RedirectSchema | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Where to send the payer (carries an unguessable token)',
    example: 'https://payments.example.com/pay/order-1001?t=Qm9vay1vcmRlcg',
  })
  payUrl: string | null;
  @ApiProperty({ type: PaymentTokenSchema, nullable: true })
  paymentToken: PaymentTokenSchema | null;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:00:00.000Z' }) createdAt: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:00:01.000Z' }) updatedAt: string;
  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: null }) processedAt:
    string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    example: null,
    description:
      "A hold's expiry as invoice/check reports it (`invoice.hold_expiring` comes HOLD_EXPIRY_WARNING_S before it); null when not known",
  })
  holdExpiresAt: string | null;
  @ApiProperty({ description: 'An operator must look (see GET /admin/attention)', example: false })
  needsAttention: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) attentionReason: string | null;
  @ApiPropertyOptional({
    description: 'The payment link whose payer page made this invoice; absent for invoices the shop created',
    example: 'plink_0b6f6a523c1e4a8f9a7e2d5c1f0e9b11',
    pattern: '^plink_[0-9a-f]{32}$',
  })
  paymentLinkId?: string;
}
sameShape<InvoiceView, InvoiceSchema>(true);

@ApiSchema({ name: 'QuoteField' })
export class QuoteFieldSchema {
  @ApiProperty({ example: 'phone' }) name: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    example: { en: 'Phone', ru: 'Телефон' },
  })
  label: Record<string, string> | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    example: { en: 'Digits only' },
  })
  hint: Record<string, string> | null;
  @ApiProperty({ type: String, nullable: true, example: '79001234567' }) example: string | null;
  @ApiProperty({ type: String, nullable: true, example: '^7\\d{10}$' }) regex: string | null;
  @ApiProperty({ type: String, nullable: true, example: '+' }) prefix: string | null;
}
sameShape<QuoteField, QuoteFieldSchema>(true);

@ApiSchema({ name: 'InvoiceQuote' })
export class QuoteSchema {
  @ApiProperty({ description: 'What the payer pays (decimal string)', example: '103.10' })
  payerPrice: string;
  @ApiProperty({ example: 643 }) psCurrency: number;
  @ApiProperty({ example: 5 }) paymethodId: number;
  @ApiProperty({ example: 'Bank card' }) paymethodName: string;
  @ApiProperty({ type: [QuoteFieldSchema] }) fields: QuoteFieldSchema[];
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { ru: 'Оплата картой' },
  })
  manual: Record<string, string>;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: {} })
  warning: Record<string, string>;
  @ApiProperty({ type: 'object', additionalProperties: true, example: {} }) info: Record<
    string,
    unknown
  >;
}
sameShape<QuoteView, QuoteSchema>(true);
