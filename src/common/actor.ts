import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';

export type Role = 'shop' | 'admin';
export type Scope = 'payments' | 'refunds' | 'payouts' | 'read';
export const SCOPES: readonly Scope[] = ['payments', 'refunds', 'payouts', 'read'];

/** Who is acting in this request: the key's id (never the key), its role and its scopes. */
export interface Actor {
  keyId: string;
  role: Role;
  scopes: readonly Scope[];
  /** With tracing on: the request's span (a W3C `traceparent`), for the events its writes record. */
  traceparent?: string;
}

/**
 * Who acts is passed explicitly: from the route (`@Acting()`) to the service method,
 * and from there to the transaction (`transactionFor`) or the manager (`managerFor`) its writes go
 * through; the audit trail reads it off that manager (`actingKeyOf`). Undefined: the service itself
 * (jobs, notifications, the reconciler). There is no ambient request context: Node 20's
 * AsyncLocalStorage tags every promise the process makes, which cost about 3 % of a create's CPU
 * and a tenth of what a create waiting on the gateway holds (docs/design.md).
 */
export type By = Actor | undefined;

/** The acting key the guard found, for a handler's parameter; set on every guarded request. */
export const Acting = createParamDecorator((_data: unknown, context: ExecutionContext): Actor => {
  const actor = context.switchToHttp().getRequest<{ actor?: Actor }>().actor;
  // A guarded route always has one; a route without a key is @Public and must not ask.
  if (actor === undefined)
    throw new Error('@Acting() on a route the auth guard did not admit a key to');
  return actor;
});

const acting = new WeakMap<EntityManager, string>();
const traced = new WeakMap<EntityManager, string>();

/** The key `m`'s writes are recorded under (events' key_id); null: the service itself. */
export function actingKeyOf(m: EntityManager): string | null {
  return acting.get(m) ?? null;
}

/** The request span `m`'s writes were made for (events' trace_parent); null: none, or tracing off. */
export function traceParentOf(m: EntityManager): string | null {
  return traced.get(m) ?? null;
}

function actFor(m: EntityManager, by: Actor): void {
  acting.set(m, by.keyId);
  if (by.traceparent !== undefined) traced.set(m, by.traceparent);
}

/** A transaction whose writes are recorded under `by`'s key. */
export function transactionFor<T>(
  ds: DataSource,
  by: By,
  fn: (m: EntityManager) => Promise<T>,
): Promise<T> {
  if (by === undefined) return ds.transaction(fn);
  return ds.transaction((m) => {
    actFor(m, by);
    return fn(m);
  });
}

/** Outside a transaction: a manager whose writes are recorded under `by`'s key. */
export function managerFor(ds: DataSource, by: By): EntityManager {
  if (by === undefined) return ds.manager;
  const m = ds.createEntityManager();
  actFor(m, by);
  return m;
}
