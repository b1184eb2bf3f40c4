import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { registerSnapshotLoader } from '../audit/shop-events';
import { NotFound } from '../common/errors';
import { afterCursorSql, decodeCursor, DEFAULT_PAGE_SIZE, type Page, toPage } from '../common/pagination';
import { transactionFor, type By } from '../common/actor';
import { GatewayService } from '../gateway/gateway.service';
import type { ListPaymentTokensQuery, PaymentTokenStatus, PaymentTokenView } from './dto/payment-token.view';

interface Row {
  id: string;
  account: string | null;
  status: 'active' | 'revoked';
  invoiceShopOrderId: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  /** The database's clock when read: `expired` is judged against it. */
  now: Date;
}

const SELECT = `SELECT t.id, t.account, t.status, i.shop_order_id AS "invoiceShopOrderId",
    t.created_at AS "createdAt", t.last_used_at AS "lastUsedAt", t.expires_at AS "expiresAt",
    t.revoked_at AS "revokedAt", clock_now() AS now
  FROM payment_tokens t JOIN invoices i ON i.id = t.invoice_id`;

/** A token is expired once the gateway's expiry has passed; a revocation wins over it. */
export function tokenStatus(r: Pick<Row, 'status' | 'expiresAt'>, now: Date): PaymentTokenStatus {
  if (r.status === 'revoked') return 'revoked';
  return r.expiresAt !== null && r.expiresAt.getTime() <= now.getTime() ? 'expired' : 'active';
}

function toView(r: Row): PaymentTokenView {
  return {
    id: r.id,
    account: r.account,
    status: tokenStatus(r, r.now),
    invoiceShopOrderId: r.invoiceShopOrderId,
    createdAt: r.createdAt.toISOString(),
    lastUsedAt: r.lastUsedAt?.toISOString() ?? null,
    expiresAt: r.expiresAt?.toISOString() ?? null,
    revokedAt: r.revokedAt?.toISOString() ?? null,
  };
}

async function loadView(m: EntityManager, id: string): Promise<PaymentTokenView | null> {
  const rows = (await m.query(`${SELECT} WHERE t.id = $1`, [id])) as Row[];
  return rows.length > 0 ? toView(rows[0]) : null;
}

// Events of `payment_token` carry the token as GET /payment-tokens lists it.
registerSnapshotLoader('payment_token', async (m, ref) => {
  const view = await loadView(m, ref.rowId ?? ref.objectId);
  if (!view) throw new Error(`payment token ${ref.objectId} not found for its event`);
  return view as unknown as Record<string, unknown>;
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The registry of recurrent tokens issued to this shop's invoices: listed masked,
 * revoked when a customer withdraws consent. The entries are written where tokens are stored
 * (src/invoices/payment-token.ts); a revoked entry is refused by the invoice create path.
 */
@Injectable()
export class PaymentTokensService {
  private readonly audit = new AuditService();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
  ) {}

  /** Tokens are issued to invoices, which are the payment shop's. */
  private get shopId(): number {
    return this.gateway.shopId('payment');
  }

  async list(q: ListPaymentTokensQuery): Promise<Page<PaymentTokenView>> {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const cursor = decodeCursor(q.cursor);
    const where = ['t.shop_id = $1'];
    const params: unknown[] = [this.shopId];
    if (q.status === 'revoked') where.push(`t.status = 'revoked'`);
    if (q.status === 'active')
      where.push(`t.status = 'active' AND (t.expires_at IS NULL OR t.expires_at > clock_now())`);
    if (q.status === 'expired') where.push(`t.status = 'active' AND t.expires_at <= clock_now()`);
    if (q.invoiceShopOrderId !== undefined) {
      params.push(q.invoiceShopOrderId);
      // The issuing invoice, or any later invoice of this shop issued the same token.
      where.push(
        `(i.shop_order_id = $${params.length} OR EXISTS (SELECT 1 FROM invoices j WHERE j.shop_id = t.shop_id AND j.shop_order_id = $${params.length} AND j.payment_token_hash = t.token_index))`,
      );
    }
    if (cursor) {
      params.push(cursor);
      where.push(afterCursorSql('t', 'payment_tokens', 'created_at', `$${params.length}`));
    }
    params.push(limit + 1);
    const rows = (await this.dataSource.query(
      `${SELECT} WHERE ${where.join(' AND ')} ORDER BY t.created_at DESC, t.id DESC LIMIT $${params.length}`,
      params,
    )) as Row[];
    return toPage(rows, limit, toView);
  }

  /**
   * Revokes the token (idempotent: a revoked one is answered as it is, with no second event),
   * audited with the acting key's id in the same transaction, as the event
   * `payment_token.revoked`. Only this shop's tokens are found, by their id exactly.
   */
  async revoke(id: string, by: By): Promise<PaymentTokenView> {
    if (!UUID.test(id)) throw new NotFound('Payment token', id);
    const rowId = id.toLowerCase();
    return transactionFor(this.dataSource, by, async (m) => {
      const found = (await m.query(
        `SELECT status FROM payment_tokens WHERE id = $1 AND shop_id = $2 FOR UPDATE`,
        [rowId, this.shopId],
      )) as Array<{ status: string }>;
      if (found.length === 0) throw new NotFound('Payment token', id);
      if (found[0].status !== 'revoked') {
        await m.query(
          `UPDATE payment_tokens SET status = 'revoked', revoked_at = clock_now(), revoked_by = $2 WHERE id = $1`,
          [rowId, by?.keyId ?? null],
        );
        await this.audit.record(m, {
          entityType: 'payment_token',
          entityId: rowId,
          rowId,
          fromStatus: 'active',
          toStatus: 'revoked',
          cause: by?.role === 'admin' ? 'admin' : 'api',
        });
      }
      return (await loadView(m, rowId))!;
    });
  }
}
