import type { AuditEventEntity } from '../../audit/audit-event.entity';
import type { NotificationEntity } from '../notification.entity';

/** The admin views of an inbox entry and of an audit entry (admin-notifications.controller.ts). */

export interface NotificationView {
  id: string;
  type: string;
  verified: boolean;
  status: string;
  outcome: string | null;
  /** What it did to its object's status: applied, unchanged, not_applied; null when none was judged. */
  statusEffect: string | null;
  /** The gateway shop the notification names (payment or agent shop); null when none. */
  shopId: number | null;
  shopOrderId: string | null;
  shopRefundId: string | null;
  fields: Record<string, string>;
  contentType: string;
  sourceIp: string | null;
  deliveryCount: number;
  receivedAt: string;
  lastReceivedAt: string;
  appliedAt: string | null;
}

export interface EventView {
  id: string;
  entityType: string;
  entityId: string;
  fromStatus: string | null;
  toStatus: string;
  cause: string;
  /** The acting API key's id (first 12 hex of its SHA-256) when a request made the change. */
  keyId: string | null;
  details: Record<string, unknown> | null;
  /** The shop event this entry is (null: audit only), its public id and per-object sequence. */
  eventType: string | null;
  eventId: string | null;
  sequence: number | null;
  createdAt: string;
}

export function notificationView(n: NotificationEntity): NotificationView {
  return {
    id: n.id,
    type: n.type,
    verified: n.verified,
    status: n.status,
    outcome: n.outcome,
    statusEffect: n.statusEffect,
    shopId: n.shopId,
    shopOrderId: n.shopOrderId,
    shopRefundId: n.shopRefundId,
    fields: n.payload,
    contentType: n.contentType,
    sourceIp: n.sourceIp,
    deliveryCount: n.deliveryCount,
    receivedAt: n.receivedAt.toISOString(),
    lastReceivedAt: n.lastReceivedAt.toISOString(),
    appliedAt: n.appliedAt?.toISOString() ?? null,
  };
}

export function eventView(e: AuditEventEntity): EventView {
  return {
    id: e.id,
    entityType: e.entityType,
    entityId: e.entityId,
    fromStatus: e.fromStatus,
    toStatus: e.toStatus,
    cause: e.cause,
    keyId: e.keyId,
    details: e.details,
    eventType: e.type,
    eventId: e.type === null ? null : e.publicId,
    sequence: e.sequence,
    createdAt: e.createdAt.toISOString(),
  };
}
