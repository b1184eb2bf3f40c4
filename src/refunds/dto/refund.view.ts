import { alphabeticCurrency } from '../../common/currency';
import { moneyText } from '../../common/money';
import { ApiProperty } from '@nestjs/swagger';
import type { RefundEntity, RefundStatus } from '../refund.entity';

/** The shop-facing refund body. */
export class RefundView {
  @ApiProperty({ example: 'refund-1001-1' }) shopRefundId: string;
  @ApiProperty({ example: 'order-1001' }) shopOrderId: string;
  @ApiProperty({ description: 'Decimal string', example: '50.00' }) amount: string;
  @ApiProperty({ example: 643 }) currency: number;
  @ApiProperty({ type: String, nullable: true, description: 'ISO 4217 alphabetic code of currency', example: 'RUB' })
  currencyCode: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: "The shop's own references, as given at create ({} when none)",
    example: { ticket: 'T-1' },
  })
  metadata: Record<string, string>;
  @ApiProperty({ enum: ['WAITING', 'SUCCESS', 'FAILED'], example: 'WAITING' }) status: RefundStatus;
  @ApiProperty({ nullable: true, type: Number, description: "The gateway's error code when FAILED", example: null }) errorCode: number | null;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:05:00.000Z' }) createdAt: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:05:00.000Z' }) updatedAt: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: null }) processedAt: string | null;
  @ApiProperty({ description: 'An operator must look (see GET /admin/attention)', example: false })
  needsAttention: boolean;
  @ApiProperty({ nullable: true, type: String, example: null }) attentionReason: string | null;
}

export class RefundPage {
  @ApiProperty({ type: [RefundView] }) items: RefundView[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as `cursor` for the next page; null on the last page', example: null })
  nextCursor: string | null;
}

export function toRefundView(r: RefundEntity): RefundView {
  return {
    shopRefundId: r.shopRefundId,
    shopOrderId: r.shopOrderId,
    amount: moneyText(r.amount, r.currency),
    currency: r.currency,
    currencyCode: alphabeticCurrency(r.currency),
    metadata: r.metadata ?? {},
    status: r.status,
    errorCode: r.errorCode,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    processedAt: r.processedAt ? r.processedAt.toISOString() : null,
    needsAttention: r.needsAttention,
    attentionReason: r.attentionReason ?? null,
  };
}
