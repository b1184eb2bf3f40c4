/** An operator's replay of a stored, verified notification. */
import { transactionFor, type By } from '../../common/actor';
import { NotFound } from '../../common/errors';
import { NotificationEntity } from '../notification.entity';
import { openNotificationFields } from '../notification-payload';
import { type NotificationDeps } from './notification-deps';
import { applyStored } from './apply-notification';
import { getNotification } from './list-notifications';

/**
 * Re-applies a stored, verified notification (admin); a no-op when it was applied already. What
 * it changes is recorded under the operator's key (`by`).
 */
export async function replayNotification(
  d: NotificationDeps,
  id: string,
  by: By,
): Promise<NotificationEntity> {
  await transactionFor(d.dataSource, by, async (manager) => {
    const n = await manager.findOne(NotificationEntity, {
      where: { id },
      lock: { mode: 'pessimistic_write' },
    });
    if (n === null) throw new NotFound('Notification', id);
    if (!n.verified || n.status === 'applied') return;
    await applyStored(d, manager, n.id, n.type, openNotificationFields(d.keys, n.id, n.payload));
  });
  return getNotification(d, id);
}
