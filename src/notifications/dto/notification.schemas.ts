import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { sameShape } from '../../common/openapi';
import type { EventView, NotificationView } from './notification.view';

/** OpenAPI schemas of the operators' inbox and audit views; `sameShape` keeps them equal to the code's. */

@ApiSchema({ name: 'Notification' })
export class NotificationSchema {
  @ApiProperty({ example: '4f6c1c1e-8c3b-4a57-9d55-0d1f0c0a7b21' }) id: string;
  @ApiProperty({ example: 'invoice' }) type: string;
  @ApiProperty({ description: 'The signature verified', example: true }) verified: boolean;
  @ApiProperty({ enum: ['pending', 'applied', 'stale', 'rejected', 'ignored'], example: 'applied' })
  status: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'What applying it did',
    example: 'awaiting_payer -> succeeded',
  })
  outcome: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['applied', 'unchanged', 'not_applied'],
    description:
      "What it did to its object's status, whatever else it changed: not_applied when the gateway contradicts the object, the record does not match it or the status word is unknown",
    example: 'applied',
  })
  statusEffect: string | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'The gateway shop the notification names (payment or agent shop)',
    example: 1001,
  })
  shopId: number | null;
  @ApiProperty({ type: String, nullable: true, example: 'order-1001' }) shopOrderId: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) shopRefundId: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'The fields as received (sign redacted)',
    example: { shop_order_id: 'order-1001', status: 'success', amount: '100.10' },
  })
  fields: Record<string, string>;
  @ApiProperty({ example: 'application/json' }) contentType: string;
  @ApiProperty({ type: String, nullable: true, example: '35.198.100.222' }) sourceIp: string | null;
  @ApiProperty({ example: 1 }) deliveryCount: number;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:02:00.000Z' }) receivedAt: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:02:00.000Z' }) lastReceivedAt: string;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    example: '2026-01-15T10:02:00.000Z',
  })
  appliedAt: string | null;
}
sameShape<NotificationView, NotificationSchema>(true);

@ApiSchema({ name: 'Event' })
export class EventSchema {
  @ApiProperty({ example: '812' }) id: string;
  @ApiProperty({
    enum: ['invoice', 'refund', 'payout', 'payout_batch', 'payment_token', 'notification', 'reconciliation', 'dispute', 'webhook_delivery'],
    example: 'invoice',
  })
  entityType: string;
  @ApiProperty({ description: "The shop's id of the object", example: 'order-1001' })
  entityId: string;
  @ApiProperty({ type: String, nullable: true, example: 'awaiting_payer' }) fromStatus:
    string | null;
  @ApiProperty({ example: 'succeeded' }) toStatus: string;
  @ApiProperty({ description: 'What caused the change', example: 'notification' }) cause: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "The acting API key's id (first 12 hex digits of its SHA-256) when a request made the change",
    example: '3f9a1c0b7d2e',
  })
  keyId: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { gatewayStatus: 4 },
  })
  details: Record<string, unknown> | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'invoice.succeeded',
    description: 'The shop event this entry is (GET /events); null: audit only',
  })
  eventType: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'evt_019ab3f2-6c1e-7d4a-9b2f-3c5e8a1d7f60',
    description: "The shop event's public id (GET /events/{id}, webhook-id); null: audit only",
  })
  eventId: string | null;
  @ApiProperty({ type: Number, nullable: true, example: 2, description: '1, 2, … per object' })
  sequence: number | null;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:02:00.000Z' }) createdAt: string;
}
sameShape<EventView, EventSchema>(true);
