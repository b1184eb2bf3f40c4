import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { AuditEventEntity } from '../audit/audit-event.entity';
import { SHOP_EVENT_TYPES } from '../audit/shop-events';

/** A shop event as the feed returns it and webhooks POST it (shared/API.md, Shop events). */
export class ShopEvent {
  @ApiProperty({ example: '1042', description: 'Also the `webhook-id` of its deliveries' })
  id: string;
  @ApiProperty({ enum: SHOP_EVENT_TYPES, example: 'invoice.succeeded' }) type: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:02:00.000Z' }) createdAt: string;
  @ApiProperty({ enum: ['invoice', 'refund', 'payout'] }) objectType: string;
  @ApiProperty({
    description: "The shop's id: shopOrderId, shopRefundId or shopPaymentId",
    example: 'order-1001',
  })
  objectId: string;
  @ApiProperty({ description: '1, 2, … per object', example: 3 }) sequence: number;
  @ApiPropertyOptional({
    description: 'The acting API key (first 12 hex digits of its SHA-256)',
    example: '9f86d081884c',
  })
  keyId?: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { shopOrderId: 'order-1001', status: 'succeeded', amount: '100.00' },
    description:
      'The object as its GET returned it at that moment (invoice, refund or payout body)',
  })
  data: Record<string, unknown>;
}

export class ShopEventPage {
  @ApiProperty({ type: [ShopEvent] }) items: ShopEvent[];
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'cDQy',
    description:
      'Pass as `after` for the next page; returned even when the page is empty, so a reader can keep polling',
  })
  nextCursor: string | null;
}

export function toShopEvent(e: AuditEventEntity): ShopEvent {
  return {
    id: e.id,
    type: e.type!,
    createdAt: e.createdAt.toISOString(),
    objectType: e.entityType,
    objectId: e.entityId,
    sequence: e.sequence!,
    ...(e.keyId !== null ? { keyId: e.keyId } : {}),
    data: e.data!,
  };
}
