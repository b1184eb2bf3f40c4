/** Reading the inbox and the audit trail (admin). */
import { AuditEventEntity } from '../../audit/audit-event.entity';
import { NotFound } from '../../common/errors';
import {
  afterCursorSql,
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  Page,
  toPage,
} from '../../common/pagination';
import { NotificationEntity } from '../notification.entity';
import {
  type NotificationDeps,
  type NotificationListFilter,
  type EventListFilter,
} from './notification-deps';

export async function getNotification(
  d: NotificationDeps,
  id: string,
): Promise<NotificationEntity> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw new NotFound('Notification', id);
  const n = await d.dataSource.getRepository(NotificationEntity).findOne({ where: { id } });
  if (n === null) throw new NotFound('Notification', id);
  return n;
}

export async function listNotifications(
  d: NotificationDeps,
  filter: NotificationListFilter,
): Promise<Page<NotificationEntity>> {
  const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
  const cursor = decodeCursor(filter.cursor);
  const qb = d.dataSource.getRepository(NotificationEntity).createQueryBuilder('n');
  if (filter.type !== undefined) qb.andWhere('n.type = :type', { type: filter.type });
  if (filter.verified !== undefined)
    qb.andWhere('n.verified = :verified', { verified: filter.verified });
  if (filter.status !== undefined) qb.andWhere('n.status = :status', { status: filter.status });
  if (filter.shopOrderId !== undefined)
    qb.andWhere('n.shop_order_id = :shopOrderId', { shopOrderId: filter.shopOrderId });
  if (cursor !== null)
    qb.andWhere(afterCursorSql('n', 'notifications', 'received_at'), { cursorId: cursor });
  const rows = await qb
    .orderBy('n.received_at', 'DESC')
    .addOrderBy('n.id', 'DESC')
    .limit(limit + 1)
    .getMany();
  return toPage(rows, limit, (r) => r);
}

export async function listAuditEvents(
  d: NotificationDeps,
  filter: EventListFilter,
): Promise<Page<AuditEventEntity>> {
  const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
  const cursor = decodeCursor(filter.cursor, 'bigint');
  const qb = d.dataSource.getRepository(AuditEventEntity).createQueryBuilder('e');
  if (filter.entityType !== undefined)
    qb.andWhere('e.entity_type = :entityType', { entityType: filter.entityType });
  if (filter.entityId !== undefined)
    qb.andWhere('e.entity_id = :entityId', { entityId: filter.entityId });
  if (cursor !== null) qb.andWhere('e.id < :cId', { cId: cursor });
  const rows = await qb
    .orderBy('e.id', 'DESC')
    .limit(limit + 1)
    .getMany();
  return toPage(rows, limit, (r) => r);
}
