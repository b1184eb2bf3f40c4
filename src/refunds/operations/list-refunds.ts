/** Listing refunds: an invoice's (optionally refreshed from the gateway first) and the admin list. */
import { type By } from '../../common/actor';
import { NotFound } from '../../common/errors';
import {
  afterCursorSql,
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  Page,
  toPage,
} from '../../common/pagination';
import { InvoiceEntity } from '../../invoices/invoice.entity';
import type { AdminRefundsQuery, InvoiceRefundsQuery } from '../dto/list-refunds.query';
import { RefundView, toRefundView } from '../dto/refund.view';
import { RefundEntity } from '../refund.entity';
import { type RefundDeps } from './refund-deps';
import { refreshInvoiceRefunds } from './recheck-refund';

export async function listInvoiceRefunds(
  d: RefundDeps,
  shopOrderId: string,
  q: InvoiceRefundsQuery,
  by: By,
): Promise<Page<RefundView>> {
  const invoice = await d.dataSource
    .getRepository(InvoiceEntity)
    .findOne({ where: { shopId: d.shopId, shopOrderId } });
  if (!invoice) throw new NotFound('Invoice', shopOrderId);
  // Concurrent refreshes of one invoice's refunds share one invoice/get-refunds call.
  if (q.refresh) await d.refreshes.run(invoice.id, () => refreshInvoiceRefunds(d, invoice, by));
  return page(d, { shopOrderId, metadata: q.metadata }, q.limit, q.cursor);
}

export function listAllRefunds(d: RefundDeps, q: AdminRefundsQuery): Promise<Page<RefundView>> {
  return page(
    d,
    { shopOrderId: q.shopOrderId, status: q.status, metadata: q.metadata },
    q.limit,
    q.cursor,
  );
}

async function page(
  d: RefundDeps,
  filter: { shopOrderId?: string; status?: string; metadata?: Record<string, string> },
  limit = DEFAULT_PAGE_SIZE,
  cursor?: string,
): Promise<Page<RefundView>> {
  const pos = decodeCursor(cursor);
  const qb = d.dataSource
    .getRepository(RefundEntity)
    .createQueryBuilder('r')
    .where('r.shop_id = :shopId', { shopId: d.shopId })
    .orderBy('r.created_at', 'DESC')
    .addOrderBy('r.id', 'DESC')
    .take(limit + 1);
  if (filter.shopOrderId !== undefined)
    qb.andWhere('r.shop_order_id = :so', { so: filter.shopOrderId });
  if (filter.status !== undefined) qb.andWhere('r.status = :st', { st: filter.status });
  if (filter.metadata !== undefined)
    qb.andWhere('r.metadata @> CAST(:md AS jsonb)', { md: JSON.stringify(filter.metadata) });
  if (pos) qb.andWhere(afterCursorSql('r', 'refunds'), { cursorId: pos });
  return toPage(await qb.getMany(), limit, toRefundView);
}
