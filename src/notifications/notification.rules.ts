import type { NotificationStatusEffect } from './notification.entity';

/**
 * What a verified notification did to its object's status, from the object's rule verdict on it
 * (invoice or refund): `applied` when the status moved; `unchanged` when the rule ignored a known
 * status the object already has or has passed (a repeat, a late step); `not_applied` for
 * everything else: the gateway contradicts the object, the record is not ours, or the status word
 * is unknown. Retention keeps every `not_applied` notification: it is evidence.
 */
export function statusEffectOf(
  verdict: { kind: string; changed?: boolean },
  statusKnown: boolean,
): NotificationStatusEffect {
  if (verdict.kind === 'apply') return verdict.changed === false ? 'unchanged' : 'applied';
  if (verdict.kind === 'ignore' && statusKnown) return 'unchanged';
  return 'not_applied';
}

/**
 * The outcome text of a notification: what it changed, and, when its status was not applied, so
 * (even when something else, a payer price or a token, was learnt from it).
 */
export function outcomeText(changes: readonly string[], notApplied: string | null): string {
  if (notApplied === null) return changes.join('; ');
  return changes.length === 0 ? notApplied : `${changes.join('; ')}; status ${notApplied}`;
}
