import { clock } from '../../common/clock';
import { isDue } from '../payment-link.rules';
import type { PaymentLinkEntity } from '../payment-link.entity';
import { DUE_LINKS, LOCK_LINK_BY_ID } from '../payment-link-sql';
import { linkFromRow, log, moveLink, type PaymentLinkDeps } from './payment-link-deps';

/** Links expired per round of the job. */
const BATCH = 100;

/**
 * An active link whose expiresAt has come is `expired` (event `payment_link.expired`): written
 * by the expiry job, or by the first reader that finds it due. Under the row lock, so it is
 * written once; null when it was not due (or someone else moved it first).
 */
export async function expireIfDue(
  deps: PaymentLinkDeps,
  link: PaymentLinkEntity,
): Promise<PaymentLinkEntity | null> {
  if (!isDue(link, clock.now())) return null;
  return deps.dataSource.transaction(async (m) => {
    const rows = (await m.query(LOCK_LINK_BY_ID, [link.id, deps.shopId])) as Record<string, unknown>[];
    const locked = linkFromRow(m, rows[0]);
    if (isDue(locked, clock.now()))
      await moveLink(deps, m, locked, 'expired', 'reconciliation', { expiresAt: locked.expiresAt });
    return locked;
  });
}

/** One round of the expiry job: due links claimed (SKIP LOCKED) and expired; how many. */
export async function expireDueLinks(deps: PaymentLinkDeps): Promise<number> {
  return deps.dataSource.transaction(async (m) => {
    const due = (await m.query(DUE_LINKS, [BATCH])) as Array<{ id: string }>;
    let n = 0;
    for (const { id } of due) {
      const rows = (await m.query(`SELECT * FROM payment_links WHERE id = $1`, [id])) as Record<
        string,
        unknown
      >[];
      const link = linkFromRow(m, rows[0]);
      if (await moveLink(deps, m, link, 'expired', 'reconciliation', { expiresAt: link.expiresAt }))
        n++;
    }
    if (n > 0) log.info({ expired: n }, 'payment links expired');
    return n;
  });
}
