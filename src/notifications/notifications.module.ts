import { Module } from '@nestjs/common';
import { AdminNotificationsController } from './admin-notifications.controller';
import { InvoiceNotificationApplier } from './invoice-notification.applier';
import { NotificationRetention } from './notification-retention';
import { NotificationsController } from './notifications.controller';
import { NotificationsService } from './notifications.service';

/** The gateway webhook, the notifications inbox, the invoice applier and the admin views. */
@Module({
  controllers: [NotificationsController, AdminNotificationsController],
  providers: [NotificationsService, InvoiceNotificationApplier, NotificationRetention],
  exports: [NotificationsService, NotificationRetention],
})
export class NotificationsModule {}
