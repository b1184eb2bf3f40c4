import { OWED_DELIVERIES_SQL } from './delivery-states';
import type { DataSource } from 'typeorm';
import type { AuditService } from '../audit/audit.service';
import { type By, transactionFor } from '../common/actor';
import { shownAddress } from '../common/redact';

/** What a drop did: per address (as shown), how many deliveries it stopped. */
export interface DroppedDeliveries {
  dropped: number;
  addresses: Array<{ url: string; count: number }>;
}

/** The words a dropped delivery carries as its last error. */
export const DROPPED_NOTE = 'dropped by an operator: the address is no longer configured in SHOP_WEBHOOK_URL';

/**
 * Deliveries still owed (pending or failed) to an address SHOP_WEBHOOK_URL no longer names are
 * dropped: `dead` (never sent again; the events stay in the feed, and a later event of the same
 * object no longer waits for them), with the reason as their last error. An address counts as
 * configured when it shows as a configured one does (shownAddress: the console compares them
 * so). A delivery being sent right now (a live lease) is left to finish. One audit entry per
 * address, with the acting admin key, in the same transaction.
 */
export async function dropUnconfiguredDeliveries(
  dataSource: DataSource,
  audit: AuditService,
  configuredUrls: readonly string[],
  by: By,
): Promise<DroppedDeliveries> {
  const configured = new Set(configuredUrls.map(shownAddress));
  const owed = (await dataSource.query(
    `SELECT DISTINCT url FROM webhook_deliveries WHERE state IN (${OWED_DELIVERIES_SQL})`,
  )) as Array<{ url: string }>;
  const gone = owed.map((r) => r.url).filter((u) => !configured.has(shownAddress(u)));
  if (gone.length === 0) return { dropped: 0, addresses: [] };
  return transactionFor(dataSource, by, async (m) => {
    const rows = (await m.query(
      `UPDATE webhook_deliveries SET state = 'dead', last_error = $2, lease_until = NULL, lease_owner = NULL,
              updated_at = clock_now()
        WHERE url = ANY($1::text[]) AND state IN (${OWED_DELIVERIES_SQL})
          AND (lease_until IS NULL OR lease_until < clock_now())
        RETURNING url`,
      [gone, DROPPED_NOTE],
    )) as [Array<{ url: string }>, number];
    const counts = new Map<string, number>();
    for (const r of rows[0]) counts.set(shownAddress(r.url), (counts.get(shownAddress(r.url)) ?? 0) + 1);
    const addresses = [...counts].map(([url, count]) => ({ url, count })).sort((a, b) => a.url.localeCompare(b.url));
    for (const a of addresses)
      await audit.record(m, {
        entityType: 'webhook_delivery',
        entityId: a.url,
        fromStatus: 'pending',
        toStatus: 'dead',
        cause: 'admin',
        details: { action: 'drop', reason: 'address no longer configured', deliveries: a.count },
      });
    return { dropped: rows[0].length, addresses };
  });
}
