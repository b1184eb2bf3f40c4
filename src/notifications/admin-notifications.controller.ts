import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { Acting, type Actor } from '../common/actor';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuditEventEntity } from '../audit/audit-event.entity';
import { ApiProblems, pageOf } from '../common/openapi';
import type { Page } from '../common/pagination';
import { EventSchema, NotificationSchema } from './dto/notification.schemas';
import { ListEventsQuery, ListNotificationsQuery } from './dto/list-notifications.dto';
import type { NotificationEntity } from './notification.entity';
import { NotificationsService } from './notifications.service';
import { AdminOnly } from '../common/access.decorator';

export interface NotificationView {
  id: string;
  type: string;
  verified: boolean;
  status: string;
  outcome: string | null;
  /** What it did to its object's status: applied, unchanged, not_applied; null when none was judged. */
  statusEffect: string | null;
  /** The gateway shop the notification names (payment or agent shop); null when none. */
  shopId: number | null;
  shopOrderId: string | null;
  shopRefundId: string | null;
  fields: Record<string, string>;
  contentType: string;
  sourceIp: string | null;
  deliveryCount: number;
  receivedAt: string;
  lastReceivedAt: string;
  appliedAt: string | null;
}

export interface EventView {
  id: string;
  entityType: string;
  entityId: string;
  fromStatus: string | null;
  toStatus: string;
  cause: string;
  /** The acting API key's id (first 12 hex of its SHA-256) when a request made the change. */
  keyId: string | null;
  details: Record<string, unknown> | null;
  /** The shop event this entry is (null: audit only), its public id and per-object sequence. */
  eventType: string | null;
  eventId: string | null;
  sequence: number | null;
  createdAt: string;
}

function notificationView(n: NotificationEntity): NotificationView {
  return {
    id: n.id,
    type: n.type,
    verified: n.verified,
    status: n.status,
    outcome: n.outcome,
    statusEffect: n.statusEffect,
    shopId: n.shopId,
    shopOrderId: n.shopOrderId,
    shopRefundId: n.shopRefundId,
    fields: n.payload,
    contentType: n.contentType,
    sourceIp: n.sourceIp,
    deliveryCount: n.deliveryCount,
    receivedAt: n.receivedAt.toISOString(),
    lastReceivedAt: n.lastReceivedAt.toISOString(),
    appliedAt: n.appliedAt?.toISOString() ?? null,
  };
}

function eventView(e: AuditEventEntity): EventView {
  return {
    id: e.id,
    entityType: e.entityType,
    entityId: e.entityId,
    fromStatus: e.fromStatus,
    toStatus: e.toStatus,
    cause: e.cause,
    keyId: e.keyId,
    details: e.details,
    eventType: e.type,
    eventId: e.type === null ? null : e.publicId,
    sequence: e.sequence,
    createdAt: e.createdAt.toISOString(),
  };
}

/** Operators' view of the inbox and of the audit trail (admin keys only). */
@ApiTags('admin')
@ApiBearerAuth()
@AdminOnly()
@Controller('admin')
export class AdminNotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @Get('notifications')
  @ApiOperation({
    summary:
      'Every received notification with its verification result and what it changed (newest first)',
  })
  @ApiOkResponse({ type: pageOf(NotificationSchema) })
  async list(@Query() q: ListNotificationsQuery): Promise<Page<NotificationView>> {
    const page = await this.notifications.list(q);
    return { items: page.items.map(notificationView), nextCursor: page.nextCursor };
  }

  @Post('notifications/:id/replay')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Apply a stored verified notification again (same rules; no-op when already applied)',
  })
  @ApiOkResponse({ type: NotificationSchema })
  @ApiParam({
    name: 'id',
    description: 'The notification id',
    example: '4f6c1c1e-8c3b-4a57-9d55-0d1f0c0a7b21',
  })
  @ApiProblems(404, 409)
  async replay(@Param('id') id: string, @Acting() by: Actor): Promise<NotificationView> {
    await this.notifications.get(id);
    return notificationView(await this.notifications.replay(id, by));
  }

  @Get('events')
  @ApiOperation({ summary: 'The audit trail of every state change (newest first)' })
  @ApiOkResponse({ type: pageOf(EventSchema) })
  async events(@Query() q: ListEventsQuery): Promise<Page<EventView>> {
    const page = await this.notifications.events(q);
    return { items: page.items.map(eventView), nextCursor: page.nextCursor };
  }
}
