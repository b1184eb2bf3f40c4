import { EntityManager } from 'typeorm';
import { PayoutEntity, type PayoutStatus } from '../payout.entity';
import { decideTransition } from '../payout.state';
import { write } from '../payout-transitions';
import type { PayoutDeps } from './payout-deps';
import { clock } from '../../common/clock';

/** An operator's verified final status (attention `accept`), after the accept guard allowed it. */

/**
 * An operator's verified final status (attention `accept`): allowed moves through write; a
 * final status corrected to another final one is audited with the note.
 */
export async function accept(
  d: PayoutDeps,
  m: EntityManager,
  p: PayoutEntity,
  to: PayoutStatus,
  details: Record<string, unknown>,
): Promise<void> {
  if (p.status === to) return;
  if (decideTransition(p.status, to).allowed) {
    await write(m, p, to, 'admin', details);
    return;
  }
  const from = p.status;
  const all = { status: to, finishedAt: clock.date(), nextPollAt: null };
  await m.update(PayoutEntity, { id: p.id }, all);
  Object.assign(p, all);
  await d.audit.record(m, {
    entityType: 'payout',
    entityId: p.shopPaymentId,
    rowId: p.id,
    fromStatus: from,
    toStatus: to,
    cause: 'admin',
    details: { ...details, correction: true },
  });
}
