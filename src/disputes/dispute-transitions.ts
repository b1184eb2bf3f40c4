import type { EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import { registerSnapshotLoader } from '../audit/shop-events';
import { entityFromRow } from '../common/sql';
import { DisputeEntity } from './dispute.entity';
import { COUNTED_DISPUTE_STATUSES } from './dispute.state';
import { SYNC_DISPUTED_SQL } from './dispute-sql';
import { toDisputeView } from './dto/dispute.view';

const audit = new AuditService();

registerSnapshotLoader('dispute', async (m, ref) => {
  const rows = (await m.query(
    `SELECT * FROM disputes WHERE ${ref.rowId !== undefined ? 'id = $1' : 'public_id = $1'}`,
    [ref.rowId ?? ref.objectId],
  )) as Record<string, unknown>[];
  if (rows.length === 0) throw new Error(`dispute ${ref.objectId} not found for its event`);
  return { ...toDisputeView(entityFromRow(m.connection, DisputeEntity, rows[0])) };
});

/**
 * The invoice's disputed amount (disputes open, lost or accepted) recomputed from its disputes
 * in one UPDATE, never incremented, so it cannot drift; written only when it differs, and then
 * the shop gets `invoice.refund_updated` (its refundable amount changed) in the same
 * transaction. The caller holds the invoice's row lock. Returns true when it changed.
 */
export async function syncDisputedAmount(
  m: EntityManager,
  invoicePk: string,
  disputeId: string,
  cause: AuditCause,
): Promise<boolean> {
  const [rows] = (await m.query(SYNC_DISPUTED_SQL, [invoicePk, COUNTED_DISPUTE_STATUSES])) as [
    Array<{ shop_order_id: string; status: string; disputed: string }>,
    number,
  ];
  const row = rows[0];
  if (row === undefined) return false;
  await audit.record(m, {
    entityType: 'invoice',
    entityId: row.shop_order_id,
    rowId: invoicePk,
    fromStatus: row.status,
    toStatus: row.status,
    cause,
    notice: 'refund_updated',
    details: { disputedAmount: row.disputed, disputeId },
  });
  return true;
}
