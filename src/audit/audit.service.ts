import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { actingKeyOf, traceParentOf } from '../common/actor';
import type { AuditCause, AuditEntityType } from './audit-event.entity';
import { rememberForCommit } from './shop-event-snapshots';
import {
  type AttentionChange,
  type EventObjectType,
  type ObjectNotice,
  shopEventTypeOf,
  snapshotOf,
} from './shop-events';

export interface AuditRecord {
  entityType: AuditEntityType;
  entityId: string;
  fromStatus: string | null;
  toStatus: string;
  cause: AuditCause;
  details?: Record<string, unknown>;
  /** An attention flag raised or resolved by this change (a shop event whatever the status). */
  attention?: AttentionChange;
  /** A notice about the object that is not a status change (a shop event whatever the status). */
  notice?: ObjectNotice;
  /** The object's primary key, when the caller has it (saves a look-up by the shop's id). */
  rowId?: string;
  /**
   * The object's view as this transaction commits it, when the caller knows it: it wrote the row
   * in the statement before and writes nothing more to this object before committing (a create's
   * phase 3). Saves reading the row back twice; without it the view is read here and again just
   * before commit.
   */
  committedView?: Record<string, unknown>;
}

/**
 * Writes the audit trail; always inside the transaction that makes the change, by the object's
 * one write path. The same row is the shop event (outbox) when the entry changes a status or an
 * attention flag: its type, the object's next sequence number and the object's view as read in
 * this transaction are written with it, so no committed change is without its event. The caller
 * holds the object's row lock, which serialises the sequence; the unique index backs it. Just
 * before commit the last event of each object is brought up to the committed view
 * (ShopEventSnapshots), so what the write path changes after recording still shows. The acting
 * key's id is the one the manager acts for (`transactionFor`, src/common/actor.ts).
 */
@Injectable()
export class AuditService {
  async record(manager: EntityManager, event: AuditRecord): Promise<void> {
    const keyId = actingKeyOf(manager);
    const type = shopEventTypeOf(event);
    const data =
      type === null
        ? null
        : (event.committedView ??
          (await snapshotOf(manager, event.entityType as EventObjectType, {
            rowId: event.rowId,
            objectId: event.entityId,
          })));
    const inserted = (await manager.query(
      `INSERT INTO events (entity_type, entity_id, from_status, to_status, cause, details, type, data, key_id, trace_parent, sequence)
       VALUES ($1::varchar, $2::varchar, $3, $4, $5, $6, $7::varchar, $8, $9, $10,
         CASE WHEN $7::varchar IS NULL THEN NULL ELSE
           (SELECT COALESCE(MAX(sequence), 0) + 1 FROM events WHERE entity_type = $1::varchar AND entity_id = $2::varchar AND sequence IS NOT NULL)
         END)
       RETURNING id`,
      [
        event.entityType,
        event.entityId,
        event.fromStatus,
        event.toStatus,
        event.cause,
        event.details ?? null,
        type,
        data,
        keyId,
        traceParentOf(manager),
      ],
    )) as Array<{ id: string }>;
    if (type !== null && data !== null && event.committedView === undefined)
      rememberForCommit(manager, {
        eventId: inserted[0].id,
        objectType: event.entityType as EventObjectType,
        ref: { rowId: event.rowId, objectId: event.entityId },
        data,
      });
  }
}
