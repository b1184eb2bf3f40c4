/** Listing disputes: the admin list (newest first, paged) and the desk (open ones by respondBy). */
import {
  afterCursorSql,
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  type Page,
  toPage,
} from '../../common/pagination';
import { DisputeEntity } from '../dispute.entity';
import type { AdminDisputesQuery } from '../dto/list-disputes.query';
import { toDisputeView, type DisputeView } from '../dto/dispute.view';
import type { DisputeDeps } from './dispute-deps';

export async function listDisputes(d: DisputeDeps, q: AdminDisputesQuery): Promise<Page<DisputeView>> {
  const limit = q.limit ?? DEFAULT_PAGE_SIZE;
  const pos = decodeCursor(q.cursor);
  const qb = d.dataSource
    .getRepository(DisputeEntity)
    .createQueryBuilder('r')
    .where('r.shop_id = :shopId', { shopId: d.shopId })
    .orderBy('r.created_at', 'DESC')
    .addOrderBy('r.id', 'DESC')
    .take(limit + 1);
  if (q.status !== undefined) qb.andWhere('r.status = :st', { st: q.status });
  if (q.shopOrderId !== undefined) qb.andWhere('r.shop_order_id = :so', { so: q.shopOrderId });
  if (pos) qb.andWhere(afterCursorSql('r', 'disputes'), { cursorId: pos });
  return toPage(await qb.getMany(), limit, toDisputeView);
}

/** The desk: open disputes, the nearest deadline first (those without one last), then oldest. */
export async function openDisputes(d: DisputeDeps, limit: number): Promise<DisputeView[]> {
  const rows = await d.dataSource
    .getRepository(DisputeEntity)
    .createQueryBuilder('r')
    .where('r.shop_id = :shopId AND r.status = :open', { shopId: d.shopId, open: 'open' })
    .orderBy('r.respond_by', 'ASC', 'NULLS LAST')
    .addOrderBy('r.created_at', 'ASC')
    .take(limit)
    .getMany();
  return rows.map(toDisputeView);
}

/** An invoice's disputes, oldest first (its page in the console). */
export async function disputesOfInvoice(d: DisputeDeps, shopOrderId: string): Promise<DisputeView[]> {
  const rows = await d.dataSource.getRepository(DisputeEntity).find({
    where: { shopId: d.shopId, shopOrderId },
    order: { createdAt: 'ASC', id: 'ASC' },
    take: 500,
  });
  return rows.map(toDisputeView);
}
