import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { resolveAttention, type AttentionObject } from '../common/attention';
import { NotFound, ValidationFailed } from '../common/errors';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { InvoiceEntity } from '../invoices/invoice.entity';
import { FINAL_INVOICE_STATUSES, type InvoiceStatus } from '../invoices/invoice.state';
import { acceptInvoiceStatus, lockInvoice } from '../invoices/invoice-transitions';
import { InvoicesService } from '../invoices/invoices.service';
import { toPayoutView } from '../payouts/dto/payout.view';
import { PayoutEntity, type PayoutStatus } from '../payouts/payout.entity';
import { PayoutProcessor } from '../payouts/payout-processor';
import { PayoutsService } from '../payouts/payouts.service';
import { toRefundView } from '../refunds/dto/refund.view';
import { RefundEntity, type RefundStatus } from '../refunds/refund.entity';
import { FINAL_REFUND_STATUSES } from '../refunds/refund.state';
import { acceptRefundStatus, lockRefundById } from '../refunds/refund-transitions';
import { RefundsService } from '../refunds/refunds.service';
import type { AttentionItem, ResolveAttentionDto } from './dto/resolve-attention.dto';

const FINAL_PAYOUT: readonly PayoutStatus[] = ['succeeded', 'failed', 'rejected'];

/**
 * The operator's side of attention: the queue (invoices, refunds, payouts, oldest first) and
 * its two resolutions — `recheck` (ask the gateway now and apply the answer through the
 * object's rule; the flag stays unless the gateway settles or confirms the object) and
 * `accept` (a final status verified in the gateway's back office, with a note). Both audited.
 */
@Injectable()
export class AttentionService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly invoices: InvoicesService,
    private readonly refunds: RefundsService,
    private readonly payouts: PayoutsService,
    private readonly processor: PayoutProcessor,
  ) {}

  async list(limit = 50): Promise<AttentionItem[]> {
    const rows = (await this.dataSource.query(
      `SELECT * FROM (
         SELECT 'invoice' AS object_type, shop_order_id AS id, status, attention_reason, attention_at,
                amount::text AS amount, currency::text AS currency, created_at,
                next_check_at AS next_check_at
           FROM invoices WHERE needs_attention AND shop_id = $1
         UNION ALL
         SELECT 'refund', shop_refund_id, status, attention_reason, attention_at,
                amount::text, currency::text, created_at, next_check_at
           FROM refunds WHERE needs_attention AND shop_id = $1
         UNION ALL
         SELECT 'payout', shop_payment_id, status, attention_reason, attention_at,
                amount::text, shop_currency::text, created_at, next_poll_at
           FROM payouts WHERE needs_attention AND shop_id = $3
       ) a
       ORDER BY COALESCE(attention_at, created_at), id
       LIMIT $2`,
      // Invoices and refunds are the payment shop's, payouts the agent shop's.
      [this.config.gateway.shops.payment.shopId, limit, this.config.gateway.shops.payout.shopId],
    )) as Array<{
      object_type: AttentionObject;
      id: string;
      status: string;
      attention_reason: string | null;
      attention_at: Date | null;
      amount: string;
      currency: string;
      next_check_at: Date | null;
    }>;
    return rows.map((r) => ({
      objectType: r.object_type,
      id: r.id,
      status: r.status,
      attentionReason: r.attention_reason,
      attentionAt: r.attention_at ? r.attention_at.toISOString() : null,
      nextCheckAt: r.next_check_at ? r.next_check_at.toISOString() : null,
      amount: r.amount,
      currency: r.currency,
    }));
  }

  async resolve(object: AttentionObject, id: string, dto: ResolveAttentionDto): Promise<unknown> {
    if (dto.action === 'accept') return this.accept(object, id, dto.status ?? '', dto.note ?? '');
    // Recheck asks now and applies through the object's rule; it never clears a flag by itself
    // nor unschedules anything (issue #22): each recheck clears only a final object's flag that
    // the gateway's fresh answer confirms.
    if (object === 'invoice') return this.invoices.recheck(id);
    if (object === 'refund') return this.refunds.recheck(id);
    return this.payouts.reconcile(id);
  }

  /** The gateway shop an object of that kind belongs to. */
  private shopOf(object: AttentionObject): number {
    return this.config.gateway.shops[object === 'payout' ? 'payout' : 'payment'].shopId;
  }

  private accept(
    object: AttentionObject,
    id: string,
    status: string,
    note: string,
  ): Promise<unknown> {
    const finals: readonly string[] =
      object === 'invoice'
        ? FINAL_INVOICE_STATUSES
        : object === 'refund'
          ? FINAL_REFUND_STATUSES
          : FINAL_PAYOUT;
    if (!finals.includes(status))
      throw new ValidationFailed([
        { field: 'status', message: `must be one of ${finals.join(', ')}` },
      ]);
    const details = { attention: 'accept', note };
    const shopId = this.shopOf(object);
    return this.dataSource.transaction(async (m) => {
      if (object === 'invoice') {
        const inv = await lockInvoice(m, { shopId, shopOrderId: id });
        if (!inv) throw new NotFound('Invoice', id);
        await acceptInvoiceStatus(m, inv, status as InvoiceStatus, details);
        await resolveAttention(
          m,
          { object, id: inv.id, shopId: id, status: inv.status },
          { action: 'accept', status, note },
        );
        return this.invoices.view(await m.findOneByOrFail(InvoiceEntity, { id: inv.id }), true);
      }
      if (object === 'refund') {
        const found = await m.findOne(RefundEntity, { where: { shopId, shopRefundId: id } });
        const refund = found ? await lockRefundById(m, found.id) : null;
        if (!refund) throw new NotFound('Refund', id);
        await acceptRefundStatus(m, refund, status as RefundStatus, details);
        await resolveAttention(
          m,
          { object, id: refund.id, shopId: id, status: refund.status },
          { action: 'accept', status, note },
        );
        return toRefundView(await m.findOneByOrFail(RefundEntity, { id: refund.id }));
      }
      const p = await this.processor.lock(m, { shopId, shopPaymentId: id });
      if (!p) throw new NotFound('Payout', id);
      await this.processor.accept(m, p, status as PayoutStatus, details);
      await resolveAttention(
        m,
        { object, id: p.id, shopId: id, status: p.status },
        { action: 'accept', status, note },
      );
      return toPayoutView(await m.findOneByOrFail(PayoutEntity, { id: p.id }));
    });
  }
}
