import { afterCursorSql, decodeCursor, DEFAULT_PAGE_SIZE, toPage, type Page } from '../../common/pagination';
import type { ListPaymentLinksQuery } from '../dto/create-payment-link.dto';
import type { PaymentLinkView } from '../dto/payment-link.view';
import type { PaymentLinkEntity } from '../payment-link.entity';
import { expireIfDue } from './expire-payment-links';
import { findLink, linkFromRow, viewsOf, type PaymentLinkDeps } from './payment-link-deps';

/** `GET /payment-links/{id}`: a link whose expiry has come is expired first (its event written). */
export async function getPaymentLink(deps: PaymentLinkDeps, publicId: string): Promise<PaymentLinkView> {
  const m = deps.dataSource.manager;
  let link = await findLink(deps, m, publicId);
  link = (await expireIfDue(deps, link)) ?? link;
  return (await viewsOf(m, [link], deps.shopId, deps.config.publicBaseUrl))[0];
}

/**
 * `GET /payment-links?status=`, newest first. A link whose expiry has come is listed (and
 * filtered) as `expired` even before the expiry job has written it.
 */
export async function listPaymentLinks(
  deps: PaymentLinkDeps,
  q: ListPaymentLinksQuery,
): Promise<Page<PaymentLinkView>> {
  const limit = q.limit ?? DEFAULT_PAGE_SIZE;
  const cursor = decodeCursor(q.cursor);
  const where = ['l.shop_id = $1'];
  const params: unknown[] = [deps.shopId];
  const due = `l.status = 'active' AND l.expires_at IS NOT NULL AND l.expires_at <= clock_now()`;
  if (q.status === 'active') where.push(`l.status = 'active' AND NOT (${due})`);
  else if (q.status === 'expired') where.push(`(l.status = 'expired' OR (${due}))`);
  else if (q.status !== undefined) {
    params.push(q.status);
    where.push(`l.status = $${params.length}`);
  }
  if (cursor) {
    params.push(cursor);
    where.push(afterCursorSql('l', 'payment_links', 'created_at', `$${params.length}::uuid`));
  }
  params.push(limit + 1);
  const m = deps.dataSource.manager;
  const rows = (await m.query(
    `SELECT l.* FROM payment_links l WHERE ${where.join(' AND ')}
      ORDER BY l.created_at DESC, l.id DESC LIMIT $${params.length}`,
    params,
  )) as Record<string, unknown>[];
  const links = rows.map((r) => linkFromRow(m, r));
  const views = new Map(
    (await viewsOf(m, links.slice(0, limit), deps.shopId, deps.config.publicBaseUrl)).map((v, i) => [
      links[i].id,
      v,
    ]),
  );
  return toPage(links, limit, (l: PaymentLinkEntity) => views.get(l.id)!);
}
