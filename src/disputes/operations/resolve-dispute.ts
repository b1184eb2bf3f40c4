/**
 * Resolving a dispute (POST /admin/disputes/{id}/resolve): the operator records what the gateway
 * decided. Under the invoice's lock, then the dispute's (the one lock order): only an open
 * dispute moves, to won, lost or accepted; a resolved one is a 409 and nothing changes, also
 * when two resolves race (the second finds it final). The books follow by position (a lost or
 * accepted dispute posts its chargeback in the same statement); a won one gives its amount back
 * to the invoice's refundable room.
 */
import { actingKeyOf, transactionFor, type By } from '../../common/actor';
import { clock } from '../../common/clock';
import { InvalidState, NotFound } from '../../common/errors';
import { entityFromRow } from '../../common/sql';
import { DisputeEntity, type DisputeNote } from '../dispute.entity';
import { LOCK_DISPUTE_SQL, RESOLVE_DISPUTE_SQL } from '../dispute-sql';
import { syncDisputedAmount } from '../dispute-transitions';
import { decideDisputeTransition } from '../disputes.rules';
import type { ResolveDisputeDto } from '../dto/create-dispute.dto';
import { toDisputeView, type DisputeView } from '../dto/dispute.view';
import type { DisputeDeps } from './dispute-deps';

export function resolveDispute(
  d: DisputeDeps,
  id: string,
  dto: ResolveDisputeDto,
  by: By,
): Promise<DisputeView> {
  return transactionFor(d.dataSource, by, async (m) => {
    const pre = (await m.query(`SELECT invoice_pk FROM disputes WHERE shop_id = $1 AND public_id = $2`, [
      d.shopId,
      id,
    ])) as Array<{ invoice_pk: string }>;
    if (pre.length === 0) throw new NotFound('Dispute', id);
    await m.query(`SELECT id FROM invoices WHERE id = $1 FOR UPDATE`, [pre[0].invoice_pk]);
    const locked = (await m.query(LOCK_DISPUTE_SQL, [d.shopId, id])) as Record<string, unknown>[];
    const dispute = entityFromRow(m.connection, DisputeEntity, locked[0]);
    const decision = decideDisputeTransition(dispute.status, dto.outcome);
    if (!decision.allowed) throw new InvalidState('Dispute', id, dispute.status, 'resolve');
    const note: DisputeNote = {
      at: clock.date().toISOString(),
      action: dto.outcome,
      keyId: actingKeyOf(m),
      note: dto.note,
    };
    const rows = (await m.query(RESOLVE_DISPUTE_SQL, [
      dispute.id,
      dto.outcome,
      JSON.stringify([note]),
    ])) as [Record<string, unknown>[], number];
    const resolved = entityFromRow(m.connection, DisputeEntity, rows[0][0]);
    const view = toDisputeView(resolved);
    await d.audit.record(m, {
      entityType: 'dispute',
      entityId: id,
      rowId: dispute.id,
      fromStatus: dispute.status,
      toStatus: dto.outcome,
      cause: 'admin',
      details: { shopOrderId: dispute.shopOrderId, amount: view.amount, note: dto.note },
      committedView: { ...view },
    });
    await syncDisputedAmount(m, dispute.invoicePk, id, 'admin');
    return view;
  });
}
