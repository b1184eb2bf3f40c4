import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  ApiSchema,
  getSchemaPath,
} from '@nestjs/swagger';
import type { AuditEventEntity } from '../audit/audit-event.entity';
import { SHOP_EVENT_TYPES, type EventObjectType } from '../audit/shop-events';
import { InvoiceSchema } from '../invoices/dto/invoice.schemas';
import { PayoutView } from '../payouts/dto/payout.view';
import { PayoutBatchSummarySchema } from '../payouts/dto/payout-batch.schemas';
import { RefundView } from '../refunds/dto/refund.view';
import { PaymentTokenView } from '../payment-tokens/dto/payment-token.view';
import { DisputeView } from '../disputes/dto/dispute.view';
import { PaymentLinkSchema } from '../payment-links/dto/payment-link.view';

/** A shop event as the feed returns it and webhooks POST it (shared/API.md, Shop events). */
export interface ShopEvent {
  id: string;
  type: string;
  createdAt: string;
  objectType: string;
  objectId: string;
  sequence: number;
  keyId?: string;
  data: Record<string, unknown>;
}

/** What every event has, whatever its object; the subclasses type `type`, `objectType` and `data`. */
abstract class ShopEventBase {
  @ApiProperty({
    example: 'evt_019ab3f2-6c1e-7d4a-9b2f-3c5e8a1d7f60',
    description:
      'Globally unique and time-ordered (`evt_` + a UUIDv7); also the `webhook-id` of its deliveries. Deduplicate on it; order by `sequence` per object',
  })
  id: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:02:00.000Z' }) createdAt: string;
  @ApiProperty({
    description: "The shop's id: shopOrderId, shopRefundId or shopPaymentId; a payment token's id",
    example: 'order-1001',
  })
  objectId: string;
  @ApiProperty({ description: '1, 2, … per object', example: 3 }) sequence: number;
  @ApiPropertyOptional({
    description: 'The acting API key (first 12 hex digits of its SHA-256)',
    example: '9f86d081884c',
  })
  keyId?: string;
}

const typesOf = (objectType: EventObjectType): string[] =>
  SHOP_EVENT_TYPES.filter((t) => t.startsWith(`${objectType}.`));

@ApiSchema({ name: 'InvoiceEvent' })
export class InvoiceEventSchema extends ShopEventBase {
  @ApiProperty({ enum: typesOf('invoice'), example: 'invoice.succeeded' }) type: string;
  @ApiProperty({ enum: ['invoice'], example: 'invoice' }) objectType: 'invoice';
  @ApiProperty({
    type: InvoiceSchema,
    description: 'The invoice as its GET returned it at that moment',
  })
  data: InvoiceSchema;
}

@ApiSchema({ name: 'RefundEvent' })
export class RefundEventSchema extends ShopEventBase {
  @ApiProperty({ enum: typesOf('refund'), example: 'refund.success' }) type: string;
  @ApiProperty({ enum: ['refund'], example: 'refund' }) objectType: 'refund';
  @ApiProperty({
    type: RefundView,
    description: 'The refund as its GET returned it at that moment',
  })
  data: RefundView;
}

@ApiSchema({ name: 'PayoutEvent' })
export class PayoutEventSchema extends ShopEventBase {
  @ApiProperty({ enum: typesOf('payout'), example: 'payout.succeeded' }) type: string;
  @ApiProperty({ enum: ['payout'], example: 'payout' }) objectType: 'payout';
  @ApiProperty({
    type: PayoutView,
    description: 'The payout as its GET returned it at that moment',
  })
  data: PayoutView;
}

@ApiSchema({ name: 'PayoutBatchEvent' })
export class PayoutBatchEventSchema extends ShopEventBase {
  @ApiProperty({ enum: typesOf('payout_batch'), example: 'payout_batch.completed' }) type: string;
  @ApiProperty({ enum: ['payout_batch'], example: 'payout_batch' }) objectType: 'payout_batch';
  @ApiProperty({
    type: PayoutBatchSummarySchema,
    description:
      'The batch (counts, its payouts by status) when every row had its answer; objectId is the batchId',
  })
  data: PayoutBatchSummarySchema;
}

@ApiSchema({ name: 'PaymentTokenEvent' })
export class PaymentTokenEventSchema extends ShopEventBase {
  @ApiProperty({ enum: typesOf('payment_token'), example: 'payment_token.revoked' }) type: string;
  @ApiProperty({ enum: ['payment_token'], example: 'payment_token' }) objectType: 'payment_token';
  @ApiProperty({
    type: PaymentTokenView,
    description:
      'The token as GET /payment-tokens listed it at that moment (its objectId is the token id)',
  })
  data: PaymentTokenView;
}

@ApiSchema({ name: 'DisputeEvent' })
export class DisputeEventSchema extends ShopEventBase {
  @ApiProperty({ enum: typesOf('dispute'), example: 'dispute.opened' }) type: string;
  @ApiProperty({ enum: ['dispute'], example: 'dispute' }) objectType: 'dispute';
  @ApiProperty({
    type: DisputeView,
    description:
      'The dispute as GET /admin/disputes listed it at that moment (its objectId is the dispute id, dp_…); the invoice it disputes also gets invoice.refund_updated',
  })
  data: DisputeView;
}

@ApiSchema({ name: 'PaymentLinkEvent' })
export class PaymentLinkEventSchema extends ShopEventBase {
  @ApiProperty({ enum: typesOf('payment_link'), example: 'payment_link.paid' }) type: string;
  @ApiProperty({ enum: ['payment_link'], example: 'payment_link' }) objectType: 'payment_link';
  @ApiProperty({
    type: PaymentLinkSchema,
    description: 'The link as its GET returned it at that moment (its objectId is the link id)',
  })
  data: PaymentLinkSchema;
}

/**
 * An event's schema: one of the four, told apart by `objectType`, so a generated client can
 * switch on `objectType` (or on `type`) and read `data` typed, without a cast.
 */
export const SHOP_EVENT_SCHEMA = {
  oneOf: [
    { $ref: getSchemaPath('InvoiceEvent') },
    { $ref: getSchemaPath('RefundEvent') },
    { $ref: getSchemaPath('PayoutEvent') },
    { $ref: getSchemaPath('PayoutBatchEvent') },
    { $ref: getSchemaPath('PaymentTokenEvent') },
    { $ref: getSchemaPath('DisputeEvent') },
    { $ref: getSchemaPath('PaymentLinkEvent') },
  ],
  discriminator: {
    propertyName: 'objectType',
    mapping: {
      invoice: getSchemaPath('InvoiceEvent'),
      refund: getSchemaPath('RefundEvent'),
      payout: getSchemaPath('PayoutEvent'),
      payout_batch: getSchemaPath('PayoutBatchEvent'),
      payment_token: getSchemaPath('PaymentTokenEvent'),
      dispute: getSchemaPath('DisputeEvent'),
      payment_link: getSchemaPath('PaymentLinkEvent'),
    },
  },
};

/** Registers the event schemas a route's SHOP_EVENT_SCHEMA refers to. */
export const ApiShopEventModels = (): ClassDecorator & MethodDecorator =>
  ApiExtraModels(
    InvoiceEventSchema,
    RefundEventSchema,
    PayoutEventSchema,
    PayoutBatchEventSchema,
    PaymentTokenEventSchema,
    DisputeEventSchema,
    PaymentLinkEventSchema,
  );

@ApiShopEventModels()
export class ShopEventPage {
  @ApiProperty({ type: 'array', items: SHOP_EVENT_SCHEMA }) items: ShopEvent[];
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
    id: e.publicId,
    type: e.type!,
    createdAt: e.createdAt.toISOString(),
    objectType: e.entityType,
    objectId: e.entityId,
    sequence: e.sequence!,
    ...(e.keyId !== null ? { keyId: e.keyId } : {}),
    data: e.data!,
  };
}
