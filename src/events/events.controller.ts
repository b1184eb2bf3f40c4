import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import { AdminOnly, Scopes } from '../common/access.decorator';
import { ApiProblems } from '../common/openapi';
import { Acting, type Actor } from '../common/actor';
import type { Page } from '../common/pagination';
import { DELIVERY_STATES, EventFeedQuery, ListDeliveriesQuery } from './dto/event-queries.dto';
import { ApiShopEventModels, SHOP_EVENT_SCHEMA, ShopEventPage, type ShopEvent } from './event.view';
import { EventsService, type DeliveryView } from './events.service';
import { RedeliverDeliveriesDto, RedeliveredCount } from './dto/redeliver-deliveries.dto';
import { feedObjectTypes } from './feed-scope';
import { EVENT_OBJECT_TYPES } from '../audit/shop-events';

const FEED_DOC =
  'Every change of an invoice, refund or payout status and every attention flag raised or resolved, in commit order: ' +
  'an event appears once its transaction and every older one have finished, so a reader following `nextCursor` ' +
  'never misses one. Each event is also POSTed to every SHOP_WEBHOOK_URL as this JSON body, signed the Standard ' +
  'Webhooks way: headers `webhook-id` (the event id, the same on every retry), `webhook-timestamp` (Unix seconds) and ' +
  '`webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body" keyed by the base64-decoded SHOP_WEBHOOK_SECRET ' +
  'after whsec_>`. A 2xx within 10 s acknowledges; otherwise retried with exponential backoff and jitter for up to ' +
  '3 days, then dead. Per object, event n+1 is not sent before event n is acknowledged or dead.\n\n' +
  'Scopes: a key sees only the events of the object types its scopes cover: `payments` invoice events, ' +
  '`refunds` refund events (not invoice events: those carry `payUrl` with the payer token), `payouts` payout ' +
  'events. `read` adds nothing to other scopes; a key with only `read` sees every type. Admin keys see every type. ' +
  "A `type` or `objectType` filter outside the key's scopes is 403. Webhooks are not filtered: every event goes to " +
  'the configured SHOP_WEBHOOK_URLs.\n\n' +
  'Retention: events older than RETENTION_EVENTS_DAYS (default 90) leave the feed. Without `after` the feed starts ' +
  'at the oldest event it still serves; an `after` cursor older than that is `410` type `cursor-expired` with ' +
  '`oldestCursor`, from which the reader continues (the events in between are gone from the feed; their audit ' +
  'entries stay under /admin/events).';

@ApiTags('events')
@ApiBearerAuth()
@Scopes('payments', 'refunds', 'payouts')
@Controller('events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @ApiOperation({ summary: 'Shop events after a cursor (gap-free feed)', description: FEED_DOC })
  @ApiOkResponse({ type: ShopEventPage })
  @ApiProblems(400, 403, 410)
  feed(@Query() q: EventFeedQuery, @Acting() by: Actor): Promise<Page<ShopEvent>> {
    return this.events.feed(q, feedObjectTypes(by));
  }

  @Get(':id')
  @ApiOperation({
    summary: 'One shop event',
    description:
      "An event of an object type outside the key's scopes is 404, as if it did not exist. " +
      'An event older than RETENTION_EVENTS_DAYS is 410 (`event-pruned`): its audit entry stays under /admin/events.',
  })
  @ApiShopEventModels()
  @ApiOkResponse({ schema: SHOP_EVENT_SCHEMA })
  @ApiProblems(404, 410)
  get(@Param('id') id: string, @Acting() by: Actor): Promise<ShopEvent> {
    return this.events.get(id, feedObjectTypes(by));
  }
}

class Delivery implements DeliveryView {
  @ApiProperty({ example: '311' }) id: string;
  @ApiProperty({ example: 'evt_019ab3f2-6c1e-7d4a-9b2f-3c5e8a1d7f60' }) eventId: string;
  @ApiProperty({ example: 'invoice.succeeded' }) eventType: string;
  @ApiProperty({ enum: EVENT_OBJECT_TYPES }) objectType: string;
  @ApiProperty({ example: 'order-1001' }) objectId: string;
  @ApiProperty({ example: 3 }) sequence: number;
  @ApiProperty({ example: 'https://shop.example.com/hooks/payments' }) url: string;
  @ApiProperty({ enum: DELIVERY_STATES }) state: DeliveryView['state'];
  @ApiProperty({ example: 2 }) attempts: number;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    format: 'date-time',
    example: '2026-01-15T10:02:05.000Z',
  })
  nextAttemptAt: string | null;
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    example: 500,
    description: "The receiver's last HTTP status",
  })
  lastStatus: number | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'HTTP 500' }) lastError:
    string | null;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:02:00.000Z' }) createdAt: string;
  @ApiPropertyOptional({ type: String, nullable: true, format: 'date-time', example: null })
  deliveredAt: string | null;
  @ApiPropertyOptional({
    type: 'object',
    nullable: true,
    properties: { eventId: { type: 'string' }, sequence: { type: 'integer' } },
    example: null,
    description:
      'An open delivery waiting for an earlier event of its object to the same address (acknowledged or dead first)',
  })
  waitingFor: { eventId: string; sequence: number } | null;
}

class DeliveryPage {
  @ApiProperty({ type: [Delivery] }) items: Delivery[];
  @ApiProperty({ type: String, nullable: true, example: null }) nextCursor: string | null;
}

/** Operators' view of push deliveries (admin role, by the /admin prefix). */
@ApiTags('admin')
@ApiBearerAuth()
@AdminOnly()
@Controller('admin')
export class AdminEventsController {
  constructor(private readonly events: EventsService) {}

  @Get('webhook-deliveries')
  @ApiOperation({
    summary: 'Shop event deliveries, newest first; ?state=pending|failed|dead|delivered',
  })
  @ApiOkResponse({ type: DeliveryPage })
  @ApiProblems(400)
  deliveries(@Query() q: ListDeliveriesQuery): Promise<Page<DeliveryView>> {
    return this.events.deliveries(q);
  }

  @Post('webhook-deliveries/redeliver')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Send again every failed (or dead) delivery matching a filter',
    description:
      'Each starts over (pending, due now, a new retry window) to its configured address; per object the events still go in order. Answers how many.',
  })
  @ApiOkResponse({ type: RedeliveredCount })
  @ApiProblems(400, 409)
  async redeliverMany(@Body() body: RedeliverDeliveriesDto): Promise<RedeliveredCount> {
    return { redelivered: await this.events.redeliverMany(body) };
  }

  @Post('events/:id/redeliver')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Send an event again to every SHOP_WEBHOOK_URL',
    description:
      'Its deliveries start over (pending, due now, a new retry window); later events of the object wait for it.',
  })
  @ApiOkResponse({ type: [Delivery] })
  @ApiProblems(404, 409, 410)
  redeliver(@Param('id') id: string): Promise<DeliveryView[]> {
    return this.events.redeliver(id);
  }
}
