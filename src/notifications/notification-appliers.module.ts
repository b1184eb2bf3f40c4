import { Global, Module } from '@nestjs/common';
import { NotificationAppliers } from './notification-appliers';

/** Global so that any feature module can register an applier without importing the webhook module. */
@Global()
@Module({ providers: [NotificationAppliers], exports: [NotificationAppliers] })
export class NotificationAppliersModule {}
