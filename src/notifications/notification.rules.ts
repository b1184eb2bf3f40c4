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

/** The kinds of notification the gateway sends: the `type` parameter of the called URL (spec, Events). */
export const NOTIFICATION_KINDS = ['invoice', 'refund'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/**
 * Rule "which kind was received": the `type` query parameter exactly as sent (no case folding,
 * no trimming: `Invoice` and `invoice ` are not kinds the gateway sends). Given more than once,
 * the same value each time is that kind; different values are no kind at all. Anything else is
 * a problem naming `type`, so nothing is stored under it.
 */
export function notificationKindOf(
  raw: string | readonly string[] | undefined,
): { kind: NotificationKind } | { problem: string } {
  const values = raw === undefined ? [] : typeof raw === 'string' ? [raw] : [...raw];
  if (values.length === 0) return { problem: 'is required (invoice or refund)' };
  if (new Set(values).size > 1) return { problem: 'is given more than once with different values' };
  const kind = NOTIFICATION_KINDS.find((k) => k === values[0]);
  if (kind === undefined) return { problem: 'must be invoice or refund' };
  return { kind };
}

/**
 * Rule "does the body fit its kind": a refund notification names its refund (`shop_refund_id`);
 * a payment notification names its order (`shop_order_id`) and no refund. Null when it fits,
 * else why not (the problem names `type`).
 */
export function kindMisfit(
  kind: NotificationKind,
  fields: Readonly<Record<string, string>>,
): string | null {
  const has = (f: string): boolean => (fields[f] ?? '') !== '';
  if (kind === 'refund')
    return has('shop_refund_id') ? null : 'is refund, but the body names no shop_refund_id';
  if (!has('shop_order_id')) return 'is invoice, but the body names no shop_order_id';
  if (has('shop_refund_id')) return 'is invoice, but the body is a refund (it names shop_refund_id)';
  return null;
}
