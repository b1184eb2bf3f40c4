/** Running a notification type's applier and recording what it did on the inbox row. */
import { EntityManager } from 'typeorm';
import { clientOf, run } from '../../common/sql';
import { type NotificationDeps, type StoredOutcome } from './notification-deps';
import { RECORD_OUTCOME } from '../notification-sql';

/** RECORD_OUTCOME's parameters for one applied notification. */
export function outcomeValues(
  id: string,
  outcome: StoredOutcome,
  fields: Record<string, string>,
): unknown[] {
  return [
    id,
    outcome.status,
    outcome.outcome,
    outcome.shopOrderId ?? fields.shop_order_id ?? null,
    outcome.shopRefundId ?? fields.shop_refund_id ?? null,
    outcome.statusEffect,
  ];
}

/** Runs the type's applier and records what it did on the inbox row, in the caller's transaction. */
export async function applyStored(
  d: NotificationDeps,
  manager: EntityManager,
  id: string,
  type: string,
  fields: Record<string, string>,
  lockedInvoice?: Record<string, unknown> | null,
): Promise<StoredOutcome> {
  const outcome = await runApplier(d, manager, id, type, fields, lockedInvoice);
  await run(await clientOf(manager), RECORD_OUTCOME, outcomeValues(id, outcome, fields));
  return outcome;
}

/** The type's applier on the stored notification, in the caller's transaction. */
export async function runApplier(
  d: NotificationDeps,
  manager: EntityManager,
  id: string,
  type: string,
  fields: Record<string, string>,
  lockedInvoice?: Record<string, unknown> | null,
): Promise<StoredOutcome> {
  const applier = d.appliers.get(type);
  return applier
    ? applier.apply(manager, fields, {
        notificationId: id,
        ...(lockedInvoice !== undefined ? { lockedInvoice } : {}),
      })
    : {
        status: 'ignored',
        outcome: `no handler for notification type "${type}"`,
        statusEffect: null,
      };
}
