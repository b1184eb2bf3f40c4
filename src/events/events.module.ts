import { Module } from '@nestjs/common';
import { AdminEventsController, EventsController } from './events.controller';
import { EventRelay } from './event-relay';
import { EventRetention } from './event-retention';
import { EventsService } from './events.service';
import { WebhookDispatcher } from './webhook-dispatcher';

/** Shop events: the gap-free feed and signed push delivery of the audit log's events. */
@Module({
  controllers: [EventsController, AdminEventsController],
  providers: [EventRelay, EventsService, WebhookDispatcher, EventRetention],
  exports: [EventRelay, EventsService, WebhookDispatcher, EventRetention],
})
export class EventsModule {}
