import { EVENT_OBJECT_TYPES, type EventObjectType } from '../audit/shop-events';
import { SCOPES, type Actor, type Scope } from '../common/actor';

/**
 * The object types each shop scope covers in the event feed (shared/API.md, Shop events). Types
 * the service does not emit yet are named too, so they are covered the day they come.
 */
const COVERS: Partial<Record<Scope, readonly string[]>> = {
  payments: ['invoice', 'payment_token', 'payment_link', 'dispute'],
  refunds: ['refund'],
  payouts: ['payout', 'payout_batch'],
};

/**
 * The object types whose events `actor` may read. Each scope covers its own objects only: a
 * `refunds` key does not see invoice events (they carry `payUrl` with the payer token), a
 * `payments` key does not see refunds or payouts. `read` adds nothing to other scopes; a key
 * holding only `read` sees every type (it reads every object through their GET routes anyway).
 * A key with every shop scope (a bare `API_KEYS` entry), admin keys and the service's own
 * callers (no actor) see everything, `reconciliation` included: what the webhooks deliver.
 */
export function feedObjectTypes(actor: Actor | undefined): readonly EventObjectType[] {
  if (actor === undefined || actor.role === 'admin') return EVENT_OBJECT_TYPES;
  if (SCOPES.every((s) => actor.scopes.includes(s))) return EVENT_OBJECT_TYPES;
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
