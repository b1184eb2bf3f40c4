import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { Acting, type Actor } from '../common/actor';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblems, pageOf } from '../common/openapi';
import type { Page } from '../common/pagination';
import { EventSchema, NotificationSchema } from './dto/notification.schemas';
import { ListEventsQuery, ListNotificationsQuery } from './dto/list-notifications.dto';
import {
  eventView,
  notificationView,
  type EventView,
  type NotificationView,
} from './dto/notification.view';
import { NotificationsService } from './notifications.service';
import { AdminOnly } from '../common/access.decorator';

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
