import { sqlList } from '../common/sql';

/** Every state a webhook delivery can be in (the table's check). */
export const DELIVERY_STATES = ['pending', 'failed', 'dead', 'delivered'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * Rule "is this delivery still owed": pending or failed (it will be tried again). What the
 * dispatcher claims, what holds back an object's later events, what the lag and the console
 * count, what retention keeps.
 */
export const OWED_DELIVERY_STATES = ['pending', 'failed'] as const satisfies readonly DeliveryState[];

/**
 * OWED_DELIVERY_STATES as SQL list text, for predicates that must match the partial indexes
 * over owed deliveries at plan time (a bound array would not let the planner use them).
 */
export const OWED_DELIVERIES_SQL = sqlList(OWED_DELIVERY_STATES);
