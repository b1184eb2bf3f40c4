import { randomUUID } from 'node:crypto';
import { transactionFor, type By } from '../common/actor';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AuditEventEntity } from '../audit/audit-event.entity';
import { crashPoint } from '../common/crash-point';
import { batchChangesIn } from '../audit/event-write';
import { BatchedWrite } from '../common/batched-write';
import { byColumn, clientOf, poolOf, run, statement } from '../common/sql';
import { NotFound } from '../common/errors';
import { KeyRing } from '../common/key-ring';
import { logger } from '../common/logger';
import { RateLimiter } from '../common/rate-limit';
import {
  afterCursorSql,
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  Page,
  toPage,
} from '../common/pagination';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayShops, verifyNotification } from '../gateway';
import { notificationsReceived } from '../metrics/metrics';
import { NotificationAppliers, type ApplyOutcome } from './notification-appliers';
import { NotificationEntity, type NotificationStatus } from './notification.entity';
import { openNotificationFields, sealNotificationFields } from './notification-payload';
import {
  isAllowedSource,
  NOTIFICATION_KEY_VERSION,
  normaliseIp,
  notificationContentKey,
} from './notification-key';
import {
  NotificationShopUnknown,
  NotificationSignatureInvalid,
  NotificationSourceForbidden,
  NotificationUnreadable,
} from './notifications.errors';

const log = logger.child({ component: 'notifications' });

export interface IncomingNotification {
  /** The `type` query parameter as received (may be missing or unknown). */
  type: string | undefined;
  rawBody: Buffer | undefined;
  contentType: string | undefined;
  sourceIp: string | undefined;
}

export interface ReceiveResult {
  id: string;
  status: NotificationStatus;
  /** True when this delivery repeated a notification already stored. */
  duplicate: boolean;
}

export interface NotificationListFilter {
  type?: string;
  verified?: boolean;
  status?: NotificationStatus;
  shopOrderId?: string;
  limit?: number;
  cursor?: string;
}

export interface EventListFilter {
  entityType?: string;
  entityId?: string;
  limit?: number;
  cursor?: string;
}

const TYPE_MAX = 32;

/**
 * The inbox's statements (issue #23: plain SQL, prepared once per connection). The upsert: a new
 * row, or one more delivery of a stored one (its lock taken either way).
 */
const UPSERT_SQL = `INSERT INTO notifications (type, content_key, payload, content_type, source_ip, verified, status, outcome, shop_order_id, shop_refund_id, id, shop_id, key_version)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
   ON CONFLICT (content_key) DO UPDATE
     SET delivery_count = notifications.delivery_count + 1, last_received_at = now()
   RETURNING id, status, (xmax = 0) AS inserted`;
const UPSERT = statement('notification_upsert', UPSERT_SQL);
/**
 * The upsert, and in the same statement the invoice it is about read and locked for the
 * applier, when the notification is new or not applied yet (a redelivery of an applied one
 * locks nothing). Same order of locks as before: the inbox row, then the invoice.
 */
const UPSERT_LOCKING_INVOICE = statement(
  'notification_upsert_locking_invoice',
  `WITH n AS (${UPSERT_SQL})
   SELECT n.id AS n_id, n.status AS n_status, n.inserted AS n_inserted, i.*
     FROM n LEFT JOIN LATERAL (
       SELECT * FROM invoices WHERE shop_id = $14 AND shop_order_id = $15 AND n.status = 'pending'
       FOR UPDATE) i ON true`,
);
const RECORD_OUTCOME = statement(
  'notification_record_outcome',
  `UPDATE notifications
      SET status = $2::varchar, outcome = $3, applied_at = CASE WHEN $2::varchar = 'applied' THEN now() END,
          shop_order_id = $4, shop_refund_id = $5, status_effect = $6
    WHERE id = $1`,
);

/**
 * UPSERT_LOCKING_INVOICE for the invoice notifications of one turn (the inbox batch): parameter
 * n is the array of the single statement's parameter n over the notifications (distinct
 * invoices, so distinct content keys); each comes back by its ordinal, with its invoice when it
 * is to be applied.
 */
const UPSERT_MANY_LOCKING_INVOICES = statement(
  'notification_upsert_many_locking_invoices',
  `WITH v AS (
     SELECT * FROM unnest($1::text[], $2::bpchar[], $3::jsonb[], $4::text[], $5::text[],
       $6::bool[], $7::text[], $8::text[], $9::text[], $10::text[], $11::uuid[], $12::int[],
       $13::int[], $14::int[], $15::text[]) WITH ORDINALITY
       AS v(type, content_key, payload, content_type, source_ip, verified, status, outcome,
            shop_order_id, shop_refund_id, id, shop_id, key_version, lock_shop_id,
            lock_shop_order_id, ord__)),
   n AS (
     INSERT INTO notifications (type, content_key, payload, content_type, source_ip, verified,
       status, outcome, shop_order_id, shop_refund_id, id, shop_id, key_version)
     SELECT type, content_key, payload, content_type, source_ip, verified, status, outcome,
       shop_order_id, shop_refund_id, id, shop_id, key_version FROM v ORDER BY ord__
     ON CONFLICT (content_key) DO UPDATE
       SET delivery_count = notifications.delivery_count + 1, last_received_at = now()
     RETURNING id, status, (xmax = 0) AS inserted, content_key)
   SELECT v.ord__, n.id AS n_id, n.status AS n_status, n.inserted AS n_inserted, i.*
     FROM v JOIN n ON n.content_key = v.content_key
     LEFT JOIN LATERAL (
       SELECT * FROM invoices
        WHERE shop_id = v.lock_shop_id AND shop_order_id = v.lock_shop_order_id
          AND n.status = 'pending'
        FOR UPDATE) i ON true`,
);
/** RECORD_OUTCOME for several notifications: parameter n is the array of its parameter n. */
const RECORD_OUTCOMES = statement(
  'notification_record_outcomes',
  `UPDATE notifications n
      SET status = v.status, outcome = v.outcome,
          applied_at = CASE WHEN v.status = 'applied' THEN now() END,
          shop_order_id = v.shop_order_id, shop_refund_id = v.shop_refund_id,
          status_effect = v.status_effect
     FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
       AS v(id, status, outcome, shop_order_id, shop_refund_id, status_effect)
    WHERE n.id = v.id`,
);

type Json = Record<string, unknown>;

/** What the inbox stores of a notification, verified or not. */
interface InboxRow {
  type: string;
  fields: Record<string, string>;
  contentType: string;
  sourceIp: string;
  verified: boolean;
  status: NotificationStatus;
  outcome: string | null;
}

/** A verified notification on its way to the inbox. */
interface VerifiedNotification {
  type: string;
  fields: Record<string, string>;
  contentType: string;
  sourceIp: string;
  /** The invoice it is about, read and locked when it is stored (see UPSERT_LOCKING_INVOICE). */
  lockInvoice?: { shopId: number; shopOrderId: string };
}

/** An applier's outcome, or `ignored` for a kind nobody handles (spec: new kinds may appear). */
type StoredOutcome = Omit<ApplyOutcome, 'status' | 'statusEffect'> &
  (
    | Pick<ApplyOutcome, 'status' | 'statusEffect'>
    | { status: 'ignored'; statusEffect: null }
  );

/**
 * A row of UPSERT_LOCKING_INVOICE (or of its batch form): the inbox row's id, status and whether
 * it is new, and the invoice it locked (null when there is none, or nothing to apply).
 */
function storedWithInvoice(row: Json): {
  id: string;
  status: NotificationStatus;
  inserted: boolean;
  lockedInvoice: Json | null;
} {
  const { n_id, n_status, n_inserted, ...invoice } = row;
  return {
    id: n_id as string,
    status: n_status as NotificationStatus,
    inserted: n_inserted as boolean,
    lockedInvoice: invoice.id === null || invoice.id === undefined ? null : invoice,
  };
}

/** RECORD_OUTCOME's parameters for one applied notification. */
function outcomeValues(
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

/**
 * The notifications inbox: verify → store → apply in one transaction → reply. The unique
 * `content_key` (over the signed text only) recognises redeliveries (the gateway re-sends up to
 * 25 times, sometimes twice at once): the upsert takes the inbox row's lock, so concurrent copies queue behind the first and
 * find it already applied.
 */
@Injectable()
export class NotificationsService {
  private readonly shops: GatewayShops;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly appliers: NotificationAppliers,
    private readonly keys: KeyRing,
    private readonly limiter: RateLimiter,
  ) {
    this.shops = new GatewayShops(config.gateway.shops);
  }

  async receive(input: IncomingNotification): Promise<ReceiveResult> {
    const type = (input.type ?? '').slice(0, TYPE_MAX);
    const metricType = this.appliers.get(type) ? type : 'other';
    const sourceIp = normaliseIp(input.sourceIp);
    if (!isAllowedSource(sourceIp, this.config.notifyAllowedIps)) {
      // Strangers are throttled per address; the gateway's own addresses never are.
      await this.limiter.takeForAddress(sourceIp, 'webhook');
      notificationsReceived.inc({ type: metricType, result: 'forbidden' });
      log.warn({ type, sourceIp }, 'notification refused: source address not allowed');
      throw new NotificationSourceForbidden();
    }
    const contentType = input.contentType ?? '';
    if (!input.rawBody || input.rawBody.length === 0) {
      notificationsReceived.inc({ type: metricType, result: 'bad_request' });
      log.warn({ type, sourceIp, contentType }, 'notification refused: no readable body');
      throw new NotificationUnreadable('The notification has no JSON or form body');
    }
    // The shop the notification names picks the secret it must be signed with.
    const check = verifyNotification(
      input.rawBody,
      contentType,
      (shopId) => this.shops.byId(shopId)?.secretKey,
    );
    if (!check.valid && check.error?.startsWith('unreadable')) {
      notificationsReceived.inc({ type: metricType, result: 'bad_request' });
      log.warn({ type, sourceIp, contentType }, 'notification refused: body unreadable');
      throw new NotificationUnreadable('The notification body is not a JSON object or a form');
    }
    if (!check.valid) {
      const result = check.unknownShop ? 'unknown_shop' : 'bad_signature';
      notificationsReceived.inc({ type: metricType, result });
      // Kept for operators (verified = false, in a key space of its own), applied never.
      await this.storeUnverified(
        type,
        check.fields,
        contentType,
        sourceIp,
        check.error ?? 'bad sign',
      );
      log.warn(
        { type, sourceIp, shopOrderId: check.fields.shop_order_id, reason: check.error },
        check.unknownShop
          ? 'notification refused: it names a shop that is not configured'
          : 'notification refused: signature does not verify',
      );
      throw check.unknownShop ? new NotificationShopUnknown() : new NotificationSignatureInvalid();
    }

    const verified: VerifiedNotification = {
      type,
      fields: check.fields,
      contentType,
      sourceIp,
      lockInvoice: this.appliers.get(type)?.invoiceToLock?.(check.fields) ?? undefined,
    };
    // A notification about an invoice shares its turn's transaction (the inbox batch); any
    // other kind is stored and applied in one of its own.
    const result =
      verified.lockInvoice !== undefined
        ? await this.inbox.write(verified)
        : await this.storeAndApply(verified);
    // Committed, not yet answered: the re-sent copy finds it applied.
    crashPoint('notification.apply.after_commit');
    notificationsReceived.inc({
      type: metricType,
      result: result.duplicate ? 'duplicate' : result.status,
    });
    log.info(
      {
        type,
        notificationId: result.id,
        shopOrderId: check.fields.shop_order_id,
        status: result.status,
        duplicate: result.duplicate,
      },
      'notification received',
    );
    return result;
  }

  /** Verify → store → apply for one notification: its own transaction. */
  private storeAndApply(n: VerifiedNotification): Promise<ReceiveResult> {
    return this.dataSource.transaction(async (manager) => {
      const stored = await this.upsert(manager, {
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
      const outcome = await this.applyStored(
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
   * The invoice notifications of one turn in one transaction (issue #23): one statement stores
   * them all and locks their invoices, their appliers run side by side, each on its own locked row
   * (their status changes of one turn share a statement), one statement records the outcomes,
   * one commit. Two about one invoice never share it (the second waits for
   * the first's commit, as it would alone). On any failure nothing of the batch is committed, or,
   * for a failure at the commit itself, all of it may be: each notification is then stored and
   * applied again alone, which finds an applied one as a redelivery (the inbox's content key).
   */
  private readonly inbox = new BatchedWrite<VerifiedNotification, ReceiveResult>({
    name: 'notification_inbox',
    key: (n) => `${n.lockInvoice!.shopId}:${n.lockInvoice!.shopOrderId}`,
    one: (n) => this.storeAndApply(n),
    many: (ns) => this.storeAndApplyMany(ns),
    aloneAfter: () => true,
  });

  private storeAndApplyMany(ns: VerifiedNotification[]): Promise<ReceiveResult[]> {
    return this.dataSource.transaction(async (manager) => {
      const client = await clientOf(manager);
      const rows = await run(
        client,
        UPSERT_MANY_LOCKING_INVOICES,
        byColumn(
          ns.map((n) => {
            const values = this.upsertValues({
              ...n,
              verified: true,
              status: 'pending',
              outcome: null,
            });
            return [...values, n.lockInvoice!.shopId, n.lockInvoice!.shopOrderId];
          }),
        ),
      );
      const byOrdinal = new Map(rows.map((r) => [Number(r.ord__), r]));
      const results: ReceiveResult[] = [];
      const toApply: Array<{ i: number; id: string; lockedInvoice: Json | null }> = [];
      for (let i = 0; i < ns.length; i++) {
        const row = byOrdinal.get(i + 1);
        if (!row) throw new Error(`notification batch: no stored row for element ${i + 1}`);
        const { ord__: _ord, ...rest } = row;
        const { id, status, inserted, lockedInvoice } = storedWithInvoice(rest);
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
          this.runApplier(manager, a.id, ns[a.i].type, ns[a.i].fields, a.lockedInvoice),
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

  /**
   * Re-applies a stored, verified notification (admin); a no-op when it was applied already. What
   * it changes is recorded under the operator's key (`by`).
   */
  async replay(id: string, by: By): Promise<NotificationEntity> {
    await transactionFor(this.dataSource, by, async (manager) => {
      const n = await manager.findOne(NotificationEntity, {
        where: { id },
        lock: { mode: 'pessimistic_write' },
      });
      if (n === null) throw new NotFound('Notification', id);
      if (!n.verified || n.status === 'applied') return;
      await this.applyStored(
        manager,
        n.id,
        n.type,
        openNotificationFields(this.keys, n.id, n.payload),
      );
    });
    return this.get(id);
  }

  async get(id: string): Promise<NotificationEntity> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) throw new NotFound('Notification', id);
    const n = await this.dataSource.getRepository(NotificationEntity).findOne({ where: { id } });
    if (n === null) throw new NotFound('Notification', id);
    return n;
  }

  async list(filter: NotificationListFilter): Promise<Page<NotificationEntity>> {
    const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
    const cursor = decodeCursor(filter.cursor);
    const qb = this.dataSource.getRepository(NotificationEntity).createQueryBuilder('n');
    if (filter.type !== undefined) qb.andWhere('n.type = :type', { type: filter.type });
    if (filter.verified !== undefined)
      qb.andWhere('n.verified = :verified', { verified: filter.verified });
    if (filter.status !== undefined) qb.andWhere('n.status = :status', { status: filter.status });
    if (filter.shopOrderId !== undefined)
      qb.andWhere('n.shop_order_id = :shopOrderId', { shopOrderId: filter.shopOrderId });
    if (cursor !== null)
      qb.andWhere(afterCursorSql('n', 'notifications', 'received_at'), { cursorId: cursor });
    const rows = await qb
      .orderBy('n.received_at', 'DESC')
      .addOrderBy('n.id', 'DESC')
      .limit(limit + 1)
      .getMany();
    return toPage(rows, limit, (r) => r);
  }

  async events(filter: EventListFilter): Promise<Page<AuditEventEntity>> {
    const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
    const cursor = decodeCursor(filter.cursor, 'bigint');
    const qb = this.dataSource.getRepository(AuditEventEntity).createQueryBuilder('e');
    if (filter.entityType !== undefined)
      qb.andWhere('e.entity_type = :entityType', { entityType: filter.entityType });
    if (filter.entityId !== undefined)
      qb.andWhere('e.entity_id = :entityId', { entityId: filter.entityId });
    if (cursor !== null) qb.andWhere('e.id < :cId', { cId: cursor });
    const rows = await qb
      .orderBy('e.id', 'DESC')
      .limit(limit + 1)
      .getMany();
    return toPage(rows, limit, (r) => r);
  }

  /** Runs the type's applier and records what it did on the inbox row, in the caller's transaction. */
  private async applyStored(
    manager: EntityManager,
    id: string,
    type: string,
    fields: Record<string, string>,
    lockedInvoice?: Record<string, unknown> | null,
  ): Promise<StoredOutcome> {
    const outcome = await this.runApplier(manager, id, type, fields, lockedInvoice);
    await run(await clientOf(manager), RECORD_OUTCOME, outcomeValues(id, outcome, fields));
    return outcome;
  }

  /** The type's applier on the stored notification, in the caller's transaction. */
  private async runApplier(
    manager: EntityManager,
    id: string,
    type: string,
    fields: Record<string, string>,
    lockedInvoice?: Record<string, unknown> | null,
  ): Promise<StoredOutcome> {
    const applier = this.appliers.get(type);
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

  private async storeUnverified(
    type: string,
    fields: Record<string, string>,
    contentType: string,
    sourceIp: string,
    reason: string,
  ): Promise<void> {
    try {
      await this.upsert(this.dataSource.manager, {
        type,
        fields,
        contentType,
        sourceIp,
        verified: false,
        status: 'rejected',
        outcome: `not verified: ${reason}`,
      });
      await this.trimUnverified();
    } catch (e) {
      // The refusal stands whether or not the record could be kept.
      log.error({ type, err: (e as Error).message }, 'could not record an unverified notification');
    }
  }

  /**
   * Unverified bodies are a sample for operators, not a record: anyone who can reach the webhook
   * can send them. The oldest beyond NOTIFY_UNVERIFIED_KEEP are dropped (every one is counted in
   * gateway_notifications_total all the same).
   */
  private async trimUnverified(): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM notifications WHERE id IN (
         SELECT id FROM notifications WHERE verified = false
         ORDER BY received_at DESC, id DESC OFFSET $1)`,
      [this.config.notifyUnverifiedKeep],
    );
  }

  /** UPSERT's parameters for one notification. */
  private upsertValues(n: InboxRow): unknown[] {
    const key = notificationContentKey(n.fields, n.verified);
    // The id is chosen here: sealed fields are bound to their row. A redelivery keeps the first
    // row (and its payload); this id is then unused.
    const id = randomUUID();
    return [
      n.type,
      key,
      JSON.stringify(sealNotificationFields(this.keys, id, n.fields)),
      n.contentType.slice(0, 100),
      n.sourceIp.slice(0, 64) || null,
      n.verified,
      n.status,
      n.outcome,
      (n.fields.shop_order_id ?? '').slice(0, 255) || null,
      (n.fields.shop_refund_id ?? '').slice(0, 255) || null,
      id,
      /^\d{1,9}$/.test(n.fields.shop_id ?? '') ? Number(n.fields.shop_id) : null,
      NOTIFICATION_KEY_VERSION,
    ];
  }

  private async upsert(
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
    const values = this.upsertValues(n);
    const on = manager.queryRunner ? await clientOf(manager) : poolOf(this.dataSource);
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
}
