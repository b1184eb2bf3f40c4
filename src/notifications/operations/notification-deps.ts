import { DataSource } from 'typeorm';
import { BatchedWrite } from '../../common/batched-write';
import { KeyRing } from '../../common/key-ring';
import { lineLogger, logger } from '../../common/logger';
import { RateLimiter } from '../../common/rate-limit';
import { type AppConfig } from '../../config/config';
import { GatewayShops } from '../../gateway';
import { NotificationAppliers, type ApplyOutcome } from '../notification-appliers';
import { type NotificationStatus } from '../notification.entity';

/** What every notification operation works with (given by NotificationsService). */
export interface NotificationDeps {
  config: AppConfig;
  dataSource: DataSource;
  appliers: NotificationAppliers;
  keys: KeyRing;
  limiter: RateLimiter;
  shops: GatewayShops;
  /** The invoice notifications of one turn, stored and applied in one transaction. */
  inbox: BatchedWrite<VerifiedNotification, ReceiveResult>;
}

export const log = logger.child({ component: 'notifications' });

/** The line each received notification gets (receive-notification.ts), written by lineLogger. */
export const receivedLog = lineLogger('notifications');

export const TYPE_MAX = 32;

export interface IncomingNotification {
  /** The `type` query parameter as received (may be missing, repeated or unknown). */
  type: string | readonly string[] | undefined;
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

export type Json = Record<string, unknown>;

/** What the inbox stores of a notification, verified or not. */
export interface InboxRow {
  type: string;
  fields: Record<string, string>;
  contentType: string;
  sourceIp: string;
  verified: boolean;
  status: NotificationStatus;
  outcome: string | null;
}

/** A verified notification on its way to the inbox. */
export interface VerifiedNotification {
  type: string;
  fields: Record<string, string>;
  contentType: string;
  sourceIp: string;
  /** The invoice it is about, read and locked when it is stored (see UPSERT_LOCKING_INVOICE). */
  lockInvoice?: { shopId: number; shopOrderId: string };
}

/** An applier's outcome, or `ignored` for a kind nobody handles (spec: new kinds may appear). */
export type StoredOutcome = Omit<ApplyOutcome, 'status' | 'statusEffect'> &
  (Pick<ApplyOutcome, 'status' | 'statusEffect'> | { status: 'ignored'; statusEffect: null });
