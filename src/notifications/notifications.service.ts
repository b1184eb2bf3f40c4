import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AuditEventEntity } from '../audit/audit-event.entity';
import type { By } from '../common/actor';
import { KeyRing } from '../common/key-ring';
import type { Page } from '../common/pagination';
import { RateLimiter } from '../common/rate-limit';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayShops } from '../gateway';
import { NotificationAppliers } from './notification-appliers';
import type { NotificationEntity } from './notification.entity';
import {
  getNotification,
  listAuditEvents,
  listNotifications,
} from './operations/list-notifications';
import type {
  EventListFilter,
  IncomingNotification,
  NotificationDeps,
  NotificationListFilter,
  ReceiveResult,
} from './operations/notification-deps';
import { receiveNotification } from './operations/receive-notification';
import { replayNotification } from './operations/replay-notification';
import { createInbox } from './operations/store-notification';

export type {
  EventListFilter,
  IncomingNotification,
  NotificationListFilter,
  ReceiveResult,
} from './operations/notification-deps';

/**
 * The notifications inbox, one file per operation in operations/ (receive-notification,
 * store-notification, apply-notification, replay-notification, list-notifications), its
 * statements in notification-sql.ts. This provider only holds what they share: the inbox batch
 * of the invoice notifications of one turn among them.
 */
@Injectable()
export class NotificationsService {
  private readonly deps: NotificationDeps;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() dataSource: DataSource,
    appliers: NotificationAppliers,
    keys: KeyRing,
    limiter: RateLimiter,
  ) {
    const deps = {
      config,
      dataSource,
      appliers,
      keys,
      limiter,
      shops: new GatewayShops(config.gateway.shops),
    } as NotificationDeps;
    deps.inbox = createInbox(deps);
    this.deps = deps;
  }

  receive(input: IncomingNotification): Promise<ReceiveResult> {
    return receiveNotification(this.deps, input);
  }

  /**
   * Re-applies a stored, verified notification (admin); a no-op when it was applied already. What
   * it changes is recorded under the operator's key (`by`).
   */
  replay(id: string, by: By): Promise<NotificationEntity> {
    return replayNotification(this.deps, id, by);
  }

  get(id: string): Promise<NotificationEntity> {
    return getNotification(this.deps, id);
  }

  list(filter: NotificationListFilter): Promise<Page<NotificationEntity>> {
    return listNotifications(this.deps, filter);
  }

  events(filter: EventListFilter): Promise<Page<AuditEventEntity>> {
    return listAuditEvents(this.deps, filter);
  }
}
