import { ApiProperty } from '@nestjs/swagger';
import type { RefundEntity, RefundStatus } from '../refund.entity';

/** The shop-facing refund body. */
export class RefundView {
  @ApiProperty() shopRefundId: string;
  @ApiProperty() shopOrderId: string;
  @ApiProperty({ description: 'Decimal string', example: '50.00' }) amount: string;
  @ApiProperty({ example: 643 }) currency: number;
  @ApiProperty({ enum: ['WAITING', 'SUCCESS', 'FAILED'] }) status: RefundStatus;
  @ApiProperty({ nullable: true, type: Number }) errorCode: number | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
  @ApiProperty({ nullable: true, type: String }) processedAt: string | null;
}

export class RefundPage {
  @ApiProperty({ type: [RefundView] }) items: RefundView[];
  @ApiProperty({ nullable: true, type: String }) nextCursor: string | null;
}

export function toRefundView(r: RefundEntity): RefundView {
  return {
    shopRefundId: r.shopRefundId,
    shopOrderId: r.shopOrderId,
    amount: r.amount.toString(),
    currency: r.currency,
    status: r.status,
    errorCode: r.errorCode,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    processedAt: r.processedAt ? r.processedAt.toISOString() : null,
  };
}
