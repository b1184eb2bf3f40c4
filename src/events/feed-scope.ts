import { EVENT_OBJECT_TYPES, type EventObjectType } from '../audit/shop-events';
import type { Actor, Scope } from '../common/actor';

/** The object types each shop scope covers in the event feed (shared/API.md, Scopes). */
const COVERS: Partial<Record<Scope, readonly EventObjectType[]>> = {
  payments: ['invoice', 'payment_token'],
  refunds: ['refund'],
  payouts: ['payout', 'payout_batch'],
};

/**
 * The object types whose events `actor` may read. Each scope covers its own objects only: a
 * `refunds` key does not see invoice events (they carry `payUrl` with the payer token), a
 * `payments` key does not see refunds or payouts. `read` adds nothing to other scopes; a key
 * holding only `read` sees every type (it reads every object through their GET routes anyway).
 * Admin keys, and the service's own callers (no actor), see everything.
 */
export function feedObjectTypes(actor: Actor | undefined): readonly EventObjectType[] {
  if (actor === undefined || actor.role === 'admin') return EVENT_OBJECT_TYPES;
  const covered = EVENT_OBJECT_TYPES.filter((t) =>
    actor.scopes.some((s) => COVERS[s]?.includes(t)),
  );
  if (covered.length === 0 && actor.scopes.includes('read')) return EVENT_OBJECT_TYPES;
  return covered;
}

/** The object type of a shop event type (`invoice.succeeded` → `invoice`). */
export function objectTypeOfEventType(type: string): string {
  const dot = type.indexOf('.');
  return dot < 0 ? type : type.slice(0, dot);
}
