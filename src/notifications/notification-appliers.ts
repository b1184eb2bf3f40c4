import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { NotificationStatus, NotificationStatusEffect } from './notification.entity';

/** What applying one verified notification did. */
export interface ApplyOutcome {
  /** applied (state changed), stale (recorded, no change: repeat or would move a final back), rejected (mismatch). */
  status: Extract<NotificationStatus, 'applied' | 'stale' | 'rejected'>;
  /** Human-readable: what changed, or why nothing did. */
  outcome: string;
  /** What it did to the object's status, whatever else it changed (retention keeps `not_applied`). */
  statusEffect: NotificationStatusEffect;
  shopOrderId?: string;
  shopRefundId?: string;
}

/** Where the notification being applied is stored (for the audit trail). */
export interface ApplyContext {
  notificationId?: string;
  /**
   * The applier's invoice row, read and locked (FOR UPDATE) in this transaction by the statement
   * that stored the notification (one round trip less); null when that statement found
   * none; absent when it did not look (the applier locks it itself).
   */
  lockedInvoice?: Record<string, unknown> | null;
}

/**
 * Applies a verified notification of one `type` inside the webhook's transaction (`manager`);
 * it takes its own row locks. `fields` are the notification's fields as transmitted (text), sign removed.
 */
export interface NotificationApplier {
  /** The invoice this notification is about, when the applier would lock it (see lockedInvoice). */
  invoiceToLock?(fields: Record<string, string>): { shopId: number; shopOrderId: string } | null;
  apply(
    manager: EntityManager,
    fields: Record<string, string>,
    ctx?: ApplyContext,
  ): Promise<ApplyOutcome>;
}

/**
 * Registry of appliers by notification type (`invoice`, `refund`, ...). Feature modules register
 * theirs in `onModuleInit`; a type with no applier is stored as `ignored` and answered OK.
 */
@Injectable()
export class NotificationAppliers {
  private readonly appliers = new Map<string, NotificationApplier>();

  register(type: string, applier: NotificationApplier): void {
    this.appliers.set(type, applier);
  }

  get(type: string): NotificationApplier | undefined {
    return this.appliers.get(type);
  }
}
