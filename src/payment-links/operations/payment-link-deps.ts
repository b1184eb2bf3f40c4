import type { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../../audit/audit.service';
import type { AuditCause } from '../../audit/audit-event.entity';
import { NotFound } from '../../common/errors';
import { logger } from '../../common/logger';
import { alphabeticCurrency } from '../../common/currency';
import { moneyText } from '../../common/money';
import { clock } from '../../common/clock';
import { entityFromRow } from '../../common/sql';
import type { AppConfig } from '../../config/config';
import type { InvoicesService } from '../../invoices/invoices.service';
import type { PaywayConfigService } from '../../payway-config/payway-config.service';
import type { PaymentLinkView } from '../dto/payment-link.view';
import { PaymentLinkEntity } from '../payment-link.entity';
import { INVOICES_OF_LINKS, LINK_BY_ID, LOCK_LINK_BY_ID } from '../payment-link-sql';
import { linkUrl, mayMove, publicIdOf, rowIdOf, shownStatus } from '../payment-link.rules';
import type { PaymentLinkStatus } from '../payment-link.state';

/** What every payment-link operation works with (built once by PaymentLinksService). */
export interface PaymentLinkDeps {
  dataSource: DataSource;
  invoices: InvoicesService;
  payways: PaywayConfigService;
  config: AppConfig;
  audit: AuditService;
  /** Links are the payment shop's, like the invoices they make. */
  shopId: number;
}

export const log = logger.child({ component: 'payment-links' });

/** A link row (SELECT *) as the entity. */
export function linkFromRow(m: EntityManager, row: Record<string, unknown>): PaymentLinkEntity {
  return entityFromRow(m.connection, PaymentLinkEntity, row);
}

/** The link of this shop a public id names (locked when `lock`), or 404. */
export async function findLink(
  deps: PaymentLinkDeps,
  m: EntityManager,
  publicId: string,
  lock = false,
): Promise<PaymentLinkEntity> {
  const rowId = rowIdOf(publicId);
  if (rowId === null) throw new NotFound('Payment link', publicId);
  const rows = (await m.query(lock ? LOCK_LINK_BY_ID : LINK_BY_ID, [rowId, deps.shopId])) as Record<
    string,
    unknown
  >[];
  if (rows.length === 0) throw new NotFound('Payment link', publicId);
  return linkFromRow(m, rows[0]);
}

/** The links' views, with their invoices (one statement for all of them). */
export async function viewsOf(
  m: EntityManager,
  links: readonly PaymentLinkEntity[],
  shopId: number,
  publicBaseUrl: string,
): Promise<PaymentLinkView[]> {
  if (links.length === 0) return [];
  const rows = (await m.query(INVOICES_OF_LINKS, [links.map((l) => l.id), shopId])) as Array<{
    link_id: string;
    shop_order_id: string;
  }>;
  const byLink = new Map<string, string[]>();
  for (const r of rows) byLink.set(r.link_id, [...(byLink.get(r.link_id) ?? []), r.shop_order_id]);
  const now = clock.now();
  return links.map((l) => toView(l, byLink.get(l.id) ?? [], publicBaseUrl, now));
}

export function toView(
  l: PaymentLinkEntity,
  invoices: string[],
  publicBaseUrl: string,
  now: number,
): PaymentLinkView {
  const id = publicIdOf(l.id);
  return {
    id,
    url: linkUrl(publicBaseUrl, id),
    status: shownStatus(l, now),
    amount: moneyText(l.amount, l.currency),
    currency: l.currency,
    currencyCode: alphabeticCurrency(l.currency),
    description: l.description,
    payways: [...l.payways],
    reusable: l.reusable,
    expiresAt: l.expiresAt ? l.expiresAt.toISOString() : null,
    metadata: l.metadata ?? {},
    invoices,
    createdAt: l.createdAt.toISOString(),
  };
}

/**
 * The one write path of a link's status: the move the rules allow, written with its audit entry
 * and shop event (`payment_link.<status>`) in the caller's transaction, which holds the row lock.
 * False (nothing written) when the rules do not allow it.
 */
export async function moveLink(
  deps: Pick<PaymentLinkDeps, 'audit'>,
  m: EntityManager,
  link: PaymentLinkEntity,
  to: PaymentLinkStatus,
  cause: AuditCause,
  details: Record<string, unknown> = {},
): Promise<boolean> {
  if (!mayMove(link.status, to)) return false;
  const from = link.status;
  await m.query(`UPDATE payment_links SET status = $2, updated_at = clock_now() WHERE id = $1`, [
    link.id,
    to,
  ]);
  link.status = to;
  await deps.audit.record(m, {
    entityType: 'payment_link',
    entityId: publicIdOf(link.id),
    rowId: link.id,
    fromStatus: from,
    toStatus: to,
    cause,
    details,
  });
  return true;
}
