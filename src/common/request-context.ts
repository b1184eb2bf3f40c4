import { AsyncLocalStorage } from 'node:async_hooks';

export type Role = 'shop' | 'admin';
export type Scope = 'payments' | 'refunds' | 'payouts' | 'read';
export const SCOPES: readonly Scope[] = ['payments', 'refunds', 'payouts', 'read'];

/** Who is acting in this request: the key's id (never the key), its role and its scopes. */
export interface Actor {
  keyId: string;
  role: Role;
  scopes: readonly Scope[];
}

interface RequestContext {
  actor?: Actor;
}

const storage = new AsyncLocalStorage<RequestContext>();

/**
 * Opens the request's context for everything the request runs (guard, handler, services, audit):
 * called by the last hook before the handler, so `next` runs the guard and the handler inside it.
 * The guard fills in the actor once the key is known, so the store is a holder set up here.
 */
export function openRequestContext(next: () => void): void {
  storage.run({}, next);
}

/** The acting key of the current request; undefined outside a request (jobs, notifications). */
export function currentActor(): Actor | undefined {
  return storage.getStore()?.actor;
}

/** Called by the auth guard only. */
export function setCurrentActor(actor: Actor): void {
  const store = storage.getStore();
  if (store) store.actor = actor;
}

/** Runs `fn` as `actor` (tests and jobs acting on an operator's behalf). */
export function runAs<T>(actor: Actor | undefined, fn: () => T): T {
  return storage.run({ actor }, fn);
}
