import {
  afterCursorSql,
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  toPage,
  type Page,
} from '../../common/pagination';
import type { ListInvoicesQuery } from '../dto/invoice-queries.dto';
import { InvoiceEntity } from '../invoice.entity';
import type { InvoiceView } from '../invoice.view';
import { invoiceView, type InvoiceDeps } from './invoice-deps';
import { instantOf } from '../../common/date-time';

/** `GET /invoices`: the shop's invoices, newest first, filtered, a page at a time. */
export async function listInvoices(
  ctx: InvoiceDeps,
  q: ListInvoicesQuery,
  admin: boolean,
): Promise<Page<InvoiceView>> {
  const limit = q.limit ?? DEFAULT_PAGE_SIZE;
  const cursor = decodeCursor(q.cursor);
  const qb = ctx.dataSource
    .getRepository(InvoiceEntity)
    .createQueryBuilder('i')
    .where('i.shop_id = :shopId', { shopId: ctx.shopId });
  if (q.status) qb.andWhere('i.status = :status', { status: q.status });
  if (q.payway) qb.andWhere('i.payway = :payway', { payway: q.payway });
  if (q.metadata)
    qb.andWhere('i.metadata @> CAST(:metadata AS jsonb)', {
      metadata: JSON.stringify(q.metadata),
    });
  if (q.createdFrom)
    qb.andWhere('i.created_at >= :from', { from: instantOf(q.createdFrom, 'timeOrDay') });
  if (q.createdTo) qb.andWhere('i.created_at < :to', { to: instantOf(q.createdTo, 'timeOrDay') });
  if (cursor) qb.andWhere(afterCursorSql('i', 'invoices'), { cursorId: cursor });
  const rows = await qb
    .orderBy('i.created_at', 'DESC')
    .addOrderBy('i.id', 'DESC')
    .take(limit + 1)
    .getMany();
  return toPage(rows, limit, (r) => invoiceView(ctx, r, admin));
}
