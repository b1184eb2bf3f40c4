import type { DataSource } from 'typeorm';
import type { GatewayConfig } from '../config/config';

export interface OtherShopRows {
  table: 'invoices' | 'refunds' | 'payouts';
  shopId: number;
  open: number;
}

/**
 * Open invoices, refunds and payouts stored under a shop that is no longer the configured shop of
 * their kind (GATEWAY_SHOP_ID or GATEWAY_PAYOUT_SHOP_ID changed). Reconciliation leaves them
 * alone: asking the new shop about them, or creating them again there, could pay twice. They are
 * reported at start-up so an operator settles them with the old shop's credentials.
 */
export async function openRowsOfOtherShops(
  dataSource: DataSource,
  gateway: Pick<GatewayConfig, 'shops'>,
): Promise<OtherShopRows[]> {
  const rows = (await dataSource.query(
    `SELECT 'invoices' AS "table", shop_id AS "shopId", count(*)::int AS open FROM invoices
      WHERE shop_id <> $1 AND next_check_at IS NOT NULL GROUP BY shop_id
     UNION ALL
     SELECT 'refunds', shop_id, count(*)::int FROM refunds
      WHERE shop_id <> $1 AND next_check_at IS NOT NULL GROUP BY shop_id
     UNION ALL
     SELECT 'payouts', shop_id, count(*)::int FROM payouts
      WHERE shop_id <> $2 AND next_poll_at IS NOT NULL GROUP BY shop_id
     ORDER BY 1, 2`,
    [gateway.shops.payment.shopId, gateway.shops.payout.shopId],
  )) as OtherShopRows[];
  return rows;
}
