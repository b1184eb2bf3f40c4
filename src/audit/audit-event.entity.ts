import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export type AuditEntityType =
  | 'invoice'
  | 'refund'
  | 'payout'
  | 'payout_batch'
  | 'payment_token'
  | 'payment_link'
  | 'notification'
  | 'reconciliation'
  | 'dispute'
  /** An operator's act on the deliveries to one address (entity id: the address as shown). */
  | 'webhook_delivery';
/** What caused a change. */
export type AuditCause = 'api' | 'gateway' | 'notification' | 'reconciliation' | 'admin';

/**
 * One log, two views: every row is an audit entry (`GET /admin/events`); a row with a `type` is
 * also a shop event (`GET /events`, webhooks) with its per-object `sequence` and the object's
 * view at that moment as `data`.
 */
@Entity('events')
// A typed row may lose its `data` to the feed's retention; an audit-only row has none.
@Check(
  'ck_events_typed',
  `("type" IS NULL) = ("sequence" IS NULL) AND ("type" IS NOT NULL OR "data" IS NULL)`,
)
// By object, every row (an audit entry alone has no sequence: NULLs never collide), so no other
// index by object is needed (migration EventsOneObjectIndex).
@Index('uq_events_object_sequence', ['entityType', 'entityId', 'sequence'], { unique: true })
@Index('uq_events_position', ['position'], { unique: true })
@Index('uq_events_public_id', ['publicId'], { unique: true })
@Index('ix_events_unpositioned', ['id'], { where: '"type" IS NOT NULL AND "position" IS NULL' })
/** The feed filtered by `objectId` (with or without objectType), in feed order. */
@Index('ix_events_object_position', ['entityId', 'position'], { where: '"position" IS NOT NULL' })
export class AuditEventEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;
  @Column({ name: 'entity_type', type: 'varchar', length: 16 }) entityType: AuditEntityType;
  /** The shop's id of the object (shopOrderId, shopRefundId, shopPaymentId). */
  @Column({ name: 'entity_id', type: 'varchar', length: 255 }) entityId: string;
  @Column({ name: 'from_status', type: 'varchar', length: 32, nullable: true }) fromStatus:
    string | null;
  @Column({ name: 'to_status', type: 'varchar', length: 32 }) toStatus: string;
  @Column({ type: 'varchar', length: 32 }) cause: AuditCause;
  @Column({ type: 'jsonb', nullable: true }) details: Record<string, unknown> | null;
  /** Shop event type (`invoice.succeeded`, `refund.attention_raised`); null: audit only. */
  @Column({ type: 'varchar', length: 64, nullable: true }) type: string | null;
  /** 1, 2, … per object, over its shop events. */
  @Column({ type: 'int', nullable: true }) sequence: number | null;
  /**
   * The object as its GET returned it in the transaction that made the change; null once the
   * event is older than the feed's horizon (RETENTION_EVENTS_DAYS), never for a served event.
   */
  @Column({ type: 'jsonb', nullable: true }) data: Record<string, unknown> | null;
  /** First 12 hex digits of the acting key's SHA-256; null for the service's own jobs. */
  @Column({ name: 'key_id', type: 'varchar', length: 16, nullable: true }) keyId: string | null;
  /**
   * With tracing on, the W3C `traceparent` of the request whose write recorded it: its webhook
   * deliveries continue that trace. Null for the service's own work and with tracing off.
   */
  @Column({ name: 'trace_parent', type: 'varchar', length: 55, nullable: true })
  traceParent: string | null;
  /**
   * The event's public id (`evt_` + a UUIDv7, time-ordered, globally unique, made by the
   * database: `evt_id()`): a shop event's `id` in the feed and its `webhook-id`.
   */
  @Column({ name: 'public_id', type: 'varchar', length: 40, default: () => 'evt_id()' })
  publicId: string;
  /** Feed position, given by the relay once no older transaction is still running. */
  @Column({ type: 'bigint', nullable: true }) position: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_now()' })
  createdAt: Date;
}
