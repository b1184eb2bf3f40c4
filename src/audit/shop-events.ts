import type { DataSource, EntityManager } from 'typeorm';

/** Objects that have shop events. */
export type EventObjectType =
  | 'invoice'
  | 'refund'
  | 'payout'
  | 'payout_batch'
  | 'payment_token'
  | 'reconciliation'
  | 'dispute'
  | 'payment_link';
export const EVENT_OBJECT_TYPES: readonly EventObjectType[] = [
  'invoice',
  'refund',
  'payout',
  'payout_batch',
  'payment_token',
  'reconciliation',
  'dispute',
  'payment_link',
];

/**
 * A status whose event is not named by the status itself: a dispute recorded `open` is
 * `dispute.opened`.
 */
const STATUS_EVENT_NAMES: Partial<Record<EventObjectType, Record<string, string>>> = {
  dispute: { open: 'opened' },
};
/** Objects with an attention flag (a payout batch or a payment token has none). */
const FLAGGED_OBJECT_TYPES: readonly EventObjectType[] = ['invoice', 'refund', 'payout'];

/** Attention flags raised or resolved: events of their own, whatever the status. */
export type AttentionChange = 'attention_raised' | 'attention_resolved';

/**
 * Events about an object that are not a status change: an invoice's refund sums
 * changed (`invoice.refund_updated`), its hold expires soon (`invoice.hold_expiring`).
 */
export type ObjectNotice = 'refund_updated' | 'hold_expiring' | 'hold_updated' | 'approved' | 'created';
/** `invoice.hold_updated`: a hold's `holdExpiresAt` was learnt or changed. */
export const INVOICE_NOTICES: readonly ObjectNotice[] = ['refund_updated', 'hold_expiring', 'hold_updated'];
/** A payout's (last) admin approval: `payout.approved`, then it is sent. */
export const PAYOUT_NOTICES: readonly ObjectNotice[] = ['approved'];

/**
 * Every shop event type (shared/API.md, Shop events): `<objectType>.<status>` with refund
 * statuses in lower case, plus the attention events of each object.
 */
export const SHOP_EVENT_TYPES: readonly string[] = [
  ...[
    'pending',
    'created',
    'awaiting_payer',
    'ps_create_failed',
    'succeeded',
    'ps_notice_failed',
    'rejected',
    'held',
    'unheld',
    'expired',
    'unknown',
  ].map((s) => `invoice.${s}`),
  ...['waiting', 'success', 'failed'].map((s) => `refund.${s}`),
  ...[
    'awaiting_approval',
    'pending',
    'processing',
    'succeeded',
    'failed',
    'rejected',
    'unknown',
    'needs_attention',
    'cancelled',
  ].map((s) => `payout.${s}`),
  ...FLAGGED_OBJECT_TYPES.flatMap((o) => [`${o}.attention_raised`, `${o}.attention_resolved`]),
  ...INVOICE_NOTICES.map((n) => `invoice.${n}`),
  ...PAYOUT_NOTICES.map((n) => `payout.${n}`),
  // Every row of a batch has its answer; the batch's other states are no event.
  'payout_batch.completed',
  // A recurrent token revoked in the registry: its only status change with an event.
  'payment_token.revoked',
  // A run of the books' reconciliation with the gateway: its result (status and items).
  'reconciliation.completed',
  // A chargeback recorded by an operator, and what the gateway decided.
  ...['opened', 'won', 'lost', 'accepted'].map((s) => `dispute.${s}`),
  // A payment link made (`created`, a notice: it is born active), then its one final status.
  ...['created', 'paid', 'expired', 'deactivated'].map((s) => `payment_link.${s}`),
];

/**
 * Which shop event an audit entry is, if any: a status change (from differs from to, including
 * creation from nothing) or an attention change. Entries that record a call without changing
 * the status stay in the audit view only.
 */
export function shopEventTypeOf(entry: {
  entityType: string;
  fromStatus: string | null;
  toStatus: string;
  attention?: AttentionChange;
  notice?: ObjectNotice;
}): string | null {
  if (!(EVENT_OBJECT_TYPES as readonly string[]).includes(entry.entityType)) return null;
  if (entry.attention) return `${entry.entityType}.${entry.attention}`;
  if (entry.notice) return `${entry.entityType}.${entry.notice}`;
  if (entry.fromStatus === entry.toStatus) return null;
  const named = STATUS_EVENT_NAMES[entry.entityType as EventObjectType]?.[entry.toStatus];
  return `${entry.entityType}.${named ?? entry.toStatus.toLowerCase()}`;
}

/** What a snapshot may need beyond the row (e.g. the public address in an invoice's payUrl). */
export interface SnapshotContext {
  publicBaseUrl: string;
}

/** Reads an object in the caller's transaction and returns its shop-facing view (as its GET). */
export type SnapshotLoader = (
  manager: EntityManager,
  ref: { rowId?: string; objectId: string },
  ctx: SnapshotContext,
) => Promise<Record<string, unknown>>;

const loaders = new Map<EventObjectType, SnapshotLoader>();
const contexts = new WeakMap<DataSource, SnapshotContext>();

/**
 * Each domain registers how to read its view (the audit folder never imports the domains, which
 * import it).
 */
export function registerSnapshotLoader(type: EventObjectType, loader: SnapshotLoader): void {
  loaders.set(type, loader);
}

/** The snapshot context of a manager's data source (to build a view the caller already has). */
export function snapshotContextOf(manager: EntityManager): SnapshotContext {
  const ctx = contexts.get(manager.connection);
  if (!ctx) throw new Error('shop events: no snapshot context registered for this data source');
  return ctx;
}

/** Per data source, so two services in one process (tests) each keep their own settings. */
export function registerSnapshotContext(dataSource: DataSource, ctx: SnapshotContext): void {
  contexts.set(dataSource, ctx);
}

export async function snapshotOf(
  manager: EntityManager,
  type: EventObjectType,
  ref: { rowId?: string; objectId: string },
): Promise<Record<string, unknown>> {
  const loader = loaders.get(type);
  const ctx = contexts.get(manager.connection);
  if (!loader) throw new Error(`no snapshot loader registered for ${type} events`);
  if (!ctx) throw new Error('shop events: no snapshot context registered for this data source');
  return loader(manager, ref, ctx);
}
