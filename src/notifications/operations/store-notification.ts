/**
 * The inbox: verify → store → apply in one transaction. The unique `content_key` (over the
 * signed text only) recognises redeliveries (the gateway re-sends up to 25 times, sometimes twice
 * at once): the upsert takes the inbox row's lock, so concurrent copies queue behind the first
 * and find it already applied.
 */
import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { crashPoint } from '../../common/crash-point';
import { batchChangesIn } from '../../audit/event-write';
import { BatchedWrite } from '../../common/batched-write';
import { byColumn, clientOf, poolOf, run } from '../../common/sql';
import { type NotificationStatus } from '../notification.entity';
import { sealNotificationFields } from '../notification-payload';
import { NOTIFICATION_KEY_VERSION, notificationContentKey } from '../notification-key';
import {
  type NotificationDeps,
  type ReceiveResult,
  type Json,
  type InboxRow,
  type VerifiedNotification,
  type StoredOutcome,
} from './notification-deps';
import {
  UPSERT,
  UPSERT_LOCKING_INVOICE,
  UPSERT_MANY_LOCKING_INVOICES,
  RECORD_OUTCOMES,
} from '../notification-sql';
import { applyStored, runApplier, outcomeValues } from './apply-notification';

/**
 * A row of UPSERT_LOCKING_INVOICE (or of its batch form): the inbox row's id, status and whether
 * it is new, and the invoice it locked (null when there is none, or nothing to apply). The
 * invoice is the row itself, not a copy without the inbox's columns: it is only ever read
 * column by column for the invoice's own (invoiceFromRow), and the copy of its 50-odd fields
 * cost more than any other step of the batch's own code (by profile).
 */
export function storedWithInvoice(row: Json): {
  id: string;
  status: NotificationStatus;
  inserted: boolean;
  lockedInvoice: Json | null;
} {
  return {
    id: row.n_id as string,
    status: row.n_status as NotificationStatus,
    inserted: row.n_inserted as boolean,
    lockedInvoice: row.id === null || row.id === undefined ? null : row,
  };
}

/** Verify → store → apply for one notification: its own transaction. */
export function storeAndApply(
  d: NotificationDeps,
  n: VerifiedNotification,
): Promise<ReceiveResult> {
  return d.dataSource.transaction(async (manager) => {
    const stored = await upsert(d, manager, {
      ...n,
      verified: true,
      status: 'pending',
      outcome: null,
    });
    if (!stored.inserted && stored.status !== 'pending') {
      return { id: stored.id, status: stored.status, duplicate: true };
    }
    // Stored, not yet applied nor committed: a crash here loses nothing (the gateway re-sends).
    crashPoint('notification.apply.after_store');
    const outcome = await applyStored(
      d,
      manager,
      stored.id,
      n.type,
      n.fields,
      stored.lockedInvoice,
    );
    return { id: stored.id, status: outcome.status, duplicate: false };
  });
}

/**
 * The invoice notifications of one turn in one transaction: one statement stores
 * them all and locks their invoices, their appliers run side by side, each on its own locked row
 * (their status changes of one turn share a statement), one statement records the outcomes,
 * one commit. Two about one invoice never share it (the second waits for
 * the first's commit, as it would alone). On any failure nothing of the batch is committed, or,
 * for a failure at the commit itself, all of it may be: each notification is then stored and
 * applied again alone, which finds an applied one as a redelivery (the inbox's content key).
 */
export function createInbox(
  d: NotificationDeps,
): BatchedWrite<VerifiedNotification, ReceiveResult> {
  return new BatchedWrite<VerifiedNotification, ReceiveResult>({
    name: 'notification_inbox',
    key: (n) => `${n.lockInvoice!.shopId}:${n.lockInvoice!.shopOrderId}`,
    one: (n) => storeAndApply(d, n),
    many: (ns) => storeAndApplyMany(d, ns),
    aloneAfter: () => true,
  });
}

export function storeAndApplyMany(
  d: NotificationDeps,
  ns: VerifiedNotification[],
): Promise<ReceiveResult[]> {
  return d.dataSource.transaction(async (manager) => {
    const client = await clientOf(manager);
    const rows = await run(
      client,
      UPSERT_MANY_LOCKING_INVOICES,
      byColumn(
        ns.map((n) => {
          const values = upsertValues(d, n, VERIFIED_PENDING);
          values.push(n.lockInvoice!.shopId, n.lockInvoice!.shopOrderId);
          return values;
        }),
      ),
    );
    const byOrdinal = new Map(rows.map((r) => [Number(r.ord__), r]));
    const results: ReceiveResult[] = [];
    const toApply: Array<{ i: number; id: string; lockedInvoice: Json | null }> = [];
    for (let i = 0; i < ns.length; i++) {
      const row = byOrdinal.get(i + 1);
      if (!row) throw new Error(`notification batch: no stored row for element ${i + 1}`);
      const { id, status, inserted, lockedInvoice } = storedWithInvoice(row);
      if (!inserted && status !== 'pending') {
        results[i] = { id, status, duplicate: true };
        continue;
      }
      // Stored, not yet applied nor committed: a crash here loses nothing (the gateway re-sends).
      crashPoint('notification.apply.after_store');
      toApply.push({ i, id, lockedInvoice });
    }
    // Each on its own locked invoice, side by side, so their status changes of one turn share
    // a statement (batchChangesIn). Every applier has finished before the transaction ends,
    // whatever one of them threw: no statement of the batch runs after its rollback.
    batchChangesIn(manager);
    const applied = await Promise.allSettled(
      toApply.map((a) =>
        runApplier(d, manager, a.id, ns[a.i].type, ns[a.i].fields, a.lockedInvoice),
      ),
    );
    const failed = applied.find((o) => o.status === 'rejected');
    if (failed) throw failed.reason;
    const outcomes: unknown[][] = [];
    for (const [k, a] of toApply.entries()) {
      const outcome = (applied[k] as PromiseFulfilledResult<StoredOutcome>).value;
      outcomes.push(outcomeValues(a.id, outcome, ns[a.i].fields));
      results[a.i] = { id: a.id, status: outcome.status, duplicate: false };
    }
    if (outcomes.length > 0) await run(client, RECORD_OUTCOMES, byColumn(outcomes));
    return results;
  });
}

/** How a verified notification is first stored: pending, its outcome to come. */
const VERIFIED_PENDING: InboxState = { verified: true, status: 'pending', outcome: null };

/** What a stored notification is: verified or not, its status and outcome. */
type InboxState = Pick<InboxRow, 'verified' | 'status' | 'outcome'>;

/**
 * UPSERT's parameters for one notification, in `state`: given apart, so a batch does not copy
 * each notification into a new object to say it is pending.
 */
export function upsertValues(
  d: NotificationDeps,
  n: Omit<InboxRow, keyof InboxState>,
  state: InboxState,
): unknown[] {
  const key = notificationContentKey(n.type, n.fields, state.verified);
  // The id is chosen here: sealed fields are bound to their row. A redelivery keeps the first
  // row (and its payload); this id is then unused.
  const id = randomUUID();
  return [
    n.type,
    key,
    JSON.stringify(sealNotificationFields(d.keys, id, n.fields)),
    n.contentType.slice(0, 100),
    n.sourceIp.slice(0, 64) || null,
    state.verified,
    state.status,
    state.outcome,
    (n.fields.shop_order_id ?? '').slice(0, 255) || null,
    (n.fields.shop_refund_id ?? '').slice(0, 255) || null,
    id,
    /^\d{1,9}$/.test(n.fields.shop_id ?? '') ? Number(n.fields.shop_id) : null,
    NOTIFICATION_KEY_VERSION,
  ];
}

export async function upsert(
  d: NotificationDeps,
  manager: EntityManager,
  n: InboxRow & {
    /** Also read and lock this invoice in the same statement (see UPSERT_LOCKING_INVOICE). */
    lockInvoice?: { shopId: number; shopOrderId: string };
  },
): Promise<{
  id: string;
  status: NotificationStatus;
  inserted: boolean;
  /** With `lockInvoice`: the locked row, or null when there is none (or nothing to apply). */
  lockedInvoice?: Record<string, unknown> | null;
}> {
  const values = upsertValues(d, n, n);
  const on = manager.queryRunner ? await clientOf(manager) : poolOf(d.dataSource);
  if (n.lockInvoice === undefined || !manager.queryRunner) {
    const rows = await run<{ id: string; status: NotificationStatus; inserted: boolean }>(
      on,
      UPSERT,
      values,
    );
    return rows[0];
  }
  const [row] = await run(on, UPSERT_LOCKING_INVOICE, [
    ...values,
    n.lockInvoice.shopId,
    n.lockInvoice.shopOrderId,
  ]);
  return storedWithInvoice(row as Json);
}
