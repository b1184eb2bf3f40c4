import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { AuditCause, AuditEntityType } from './audit-event.entity';

export interface AuditRecord {
  entityType: AuditEntityType;
  entityId: string;
  fromStatus: string | null;
  toStatus: string;
  cause: AuditCause;
  details?: Record<string, unknown>;
}

/** Writes the audit trail; always inside the transaction that makes the change. */
@Injectable()
export class AuditService {
  async record(manager: EntityManager, event: AuditRecord): Promise<void> {
    await manager.query(
      `INSERT INTO events (entity_type, entity_id, from_status, to_status, cause, details)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        event.entityType,
        event.entityId,
        event.fromStatus,
        event.toStatus,
        event.cause,
        event.details ?? null,
      ],
    );
  }
}
