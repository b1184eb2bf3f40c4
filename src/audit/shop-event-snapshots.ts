import {
  EventSubscriber,
  type EntitySubscriberInterface,
  type EntityManager,
  type QueryRunner,
  type TransactionCommitEvent,
  type TransactionRollbackEvent,
} from 'typeorm';
import { type EventObjectType, snapshotOf } from './shop-events';

interface Pending {
  eventId: string;
  objectType: EventObjectType;
  ref: { rowId?: string; objectId: string };
  data: Record<string, unknown>;
}

/** Per open transaction: the last event of each object it wrote. */
const pending = new WeakMap<QueryRunner, Map<string, Pending>>();

/** Remembers an event so its `data` is brought up to date just before its transaction commits. */
export function rememberForCommit(manager: EntityManager, p: Pending): void {
  const qr = manager.queryRunner;
  if (!qr?.isTransactionActive) return;
  const byObject = pending.get(qr) ?? new Map<string, Pending>();
  byObject.set(JSON.stringify([p.objectType, p.ref.objectId]), p);
  pending.set(qr, byObject);
}

/**
 * The write path may change the object after its event (the poller sets the next poll, a create
 * stores its answer): the last event of each object in a transaction carries the object as it is
 * committed, which is exactly what a GET returns from then on. Earlier events of the same object
 * in that transaction keep the view of their own moment.
 */
@EventSubscriber()
export class ShopEventSnapshots implements EntitySubscriberInterface {
  async beforeTransactionCommit(event: TransactionCommitEvent): Promise<void> {
    const byObject = pending.get(event.queryRunner);
    if (!byObject) return;
    for (const p of byObject.values()) {
      const data = await snapshotOf(event.manager, p.objectType, p.ref);
      if (JSON.stringify(data) === JSON.stringify(p.data)) continue;
      await event.manager.query(`UPDATE events SET data = $1 WHERE id = $2`, [data, p.eventId]);
      p.data = data;
    }
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    if (!event.queryRunner.isTransactionActive) pending.delete(event.queryRunner);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) pending.delete(event.queryRunner);
  }
}
