import { Inject, Injectable } from '@nestjs/common';
import { transactionFor, type By } from '../common/actor';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { resolveAttention, type AttentionObject } from '../common/attention';
import { isLockReason, liftLock } from '../common/idempotency';
import { moneyTextOrNull } from '../common/money';
import {
  GatewayEvidenceRequired,
  NotFlagged,
  NotFound,
  NotLocked,
  RequestInProgress,
  ValidationFailed,
} from '../common/errors';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway/gateway.service';
import { toGatewayId } from '../gateway/ids';
import { InvoiceEntity } from '../invoices/invoice.entity';
import {
  FINAL_INVOICE_STATUSES,
  isFinal as isFinalInvoice,
  type InvoiceStatus,
} from '../invoices/invoice.state';
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
import {
  acceptBlocked,
  decideAccept,
  type GatewayView,
  invoiceView,
  payoutView,
  refundView,
  viewOfFailure,
} from './accept-guard';
import type { AttentionItem, ResolveAttentionDto } from './dto/resolve-attention.dto';
import { clock } from '../common/clock';

const FINAL_PAYOUT: readonly PayoutStatus[] = ['succeeded', 'failed', 'rejected'];

/** Where each object's create id and its count of conflicting repeats live. */
const LOCKABLE: Record<'invoice' | 'refund' | 'payout', { table: string; shopIdColumn: string }> = {
  invoice: { table: 'invoices', shopIdColumn: 'shop_order_id' },
  refund: { table: 'refunds', shopIdColumn: 'shop_refund_id' },
  payout: { table: 'payouts', shopIdColumn: 'shop_payment_id' },
};

/**
 * The operator's side of attention: the queue (invoices, refunds, payouts, oldest first) and
 * its resolutions — `recheck` (ask the gateway now and apply the answer through the object's
 * rule; the flag stays, and the object stays watched, unless the gateway settles or confirms
 * it), `accept` (a final status the gateway's fresh answer does not contradict, with a note;
 * accept-guard.ts) and, for a held invoice, `charge` / `unhold` (the real gateway calls). All
 * audited.
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
    private readonly gateway: GatewayService,
  ) {}

  async list(limit = 50): Promise<AttentionItem[]> {
    const rows = (await this.dataSource.query(
      `SELECT * FROM (
         SELECT 'invoice' AS object_type, shop_order_id AS id, status, attention_reason, attention_at,
                amount::text AS amount, currency, created_at,
                next_check_at AS next_check_at
           FROM invoices WHERE needs_attention AND shop_id = $1
         UNION ALL
         SELECT 'refund', shop_refund_id, status, attention_reason, attention_at,
                amount::text, currency, created_at, next_check_at
           FROM refunds WHERE needs_attention AND shop_id = $1
         UNION ALL
         SELECT 'payout', shop_payment_id, status, attention_reason, attention_at,
                amount::text, shop_currency, created_at, next_poll_at
           FROM payouts WHERE needs_attention AND shop_id = $3
         UNION ALL
         SELECT 'reconciliation', id::text, status, attention_reason, attention_at, NULL, NULL, started_at, NULL
           FROM reconciliations WHERE needs_attention
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
      amount: string | null;
      currency: number | null;
      next_check_at: Date | null;
    }>;
    return rows.map((r) => ({
      objectType: r.object_type,
      id: r.id,
      status: r.status,
      attentionReason: r.attention_reason,
      attentionAt: r.attention_at ? r.attention_at.toISOString() : null,
      nextCheckAt: r.next_check_at ? r.next_check_at.toISOString() : null,
      amount: moneyTextOrNull(r.amount, r.currency),
      currency: r.currency,
    }));
  }

  async resolve(
    object: AttentionObject,
    id: string,
    dto: ResolveAttentionDto,
    by: By,
  ): Promise<unknown> {
    if (dto.action === 'accept')
      return this.accept(object, id, dto.status ?? '', dto.note ?? '', by);
    if (dto.action === 'charge' || dto.action === 'unhold')
      return this.settleHold(object, id, dto.action, by);
    if (dto.action === 'unlock') return this.unlock(object, id, dto.note ?? '', by);
    // Recheck asks now and applies through the object's rule; it never clears a flag by itself
    // nor unschedules anything: each recheck clears only a final object's flag that
    // the gateway's fresh answer confirms.
    if (object === 'invoice') return this.invoices.recheck(id, by);
    if (object === 'refund') return this.refunds.recheck(id, by);
    return this.payouts.reconcile(id, by);
  }

  /**
   * An operator lifts an idempotency lock (docs/api.md, Idempotency): the id's count of
   * conflicting repeats starts again, audited with the note, and the flag those repeats raised is
   * resolved (a flag for another reason stays). 409 `not-locked` when there is nothing to lift.
   */
  private async unlock(object: AttentionObject, id: string, note: string, by: By): Promise<unknown> {
    const k = LOCKABLE[object];
    const shopId = this.shopOf(object);
    return transactionFor(this.dataSource, by, async (m) => {
      const [row] = (await m.query(
        `SELECT id, status, idempotency_conflicts AS conflicts, needs_attention, attention_reason
           FROM ${k.table} WHERE shop_id = $1 AND ${k.shopIdColumn} = $2 FOR UPDATE`,
        [shopId, id],
      )) as Array<{
        id: string;
        status: string;
        conflicts: number;
        needs_attention: boolean;
        attention_reason: string | null;
      }>;
      if (row === undefined) throw new NotFound(label(object), id);
      const flagged = row.needs_attention && isLockReason(row.attention_reason);
      if (row.conflicts === 0 && !flagged) throw new NotLocked(label(object), id);
      const target = { object, id: row.id, shopId: id, status: row.status, conflicts: row.conflicts };
      await liftLock(m, target, note);
      if (flagged) await resolveAttention(m, target, { action: 'unlock', note });
      if (object === 'invoice')
        return this.invoices.view(await m.findOneByOrFail(InvoiceEntity, { id: row.id }), true);
      if (object === 'refund') return toRefundView(await m.findOneByOrFail(RefundEntity, { id: row.id }));
      return toPayoutView(await m.findOneByOrFail(PayoutEntity, { id: row.id }));
    });
  }

  /** The gateway shop an object of that kind belongs to. */
  private shopOf(object: AttentionObject): number {
    return this.config.gateway.shops[object === 'payout' ? 'payout' : 'payment'].shopId;
  }

  /**
   * An operator's final status, guarded: flagged objects only, never while a gateway call on
   * the object is in flight; the gateway is asked first with nothing held, and the choice is
   * applied only with its word for it (accept-guard.ts `decideAccept`), else a 409
   * `gateway-evidence-required` with nothing changed. Applied through the object's accept
   * transition, audited; a move between final statuses posts its difference in the books (the
   * row's position), sends the new status's event, and gives back refund room and cap share.
   */
  private async accept(
    object: AttentionObject,
    id: string,
    status: string,
    note: string,
    by: By,
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
    const shopId = this.shopOf(object);
    const pre = await this.find(object, id);
    if (pre === null) throw new NotFound(label(object), id);
    this.guard(object, id, pre);
    const view = await this.askGateway(object, pre);
    const decision = decideAccept(object, status, pre.status, view);
    if (decision.kind === 'refuse')
      throw new GatewayEvidenceRequired(
        label(object),
        id,
        status,
        decision.gatewaySays,
        decision.missing,
      );
    const facts = {
      gatewayAnswer: decision.gatewayAnswer,
      ...(view.kind === 'record' || view.kind === 'foreign' ? { gatewaySays: view.text } : {}),
    };
    const details = { attention: 'accept', note, ...facts };
    const resolution = { action: 'accept', status, note, ...facts };
    return transactionFor(this.dataSource, by, async (m) => {
      if (object === 'invoice') {
        const inv = await lockInvoice(m, { shopId, shopOrderId: id });
        if (!inv) throw new NotFound('Invoice', id);
        // Locked now: a call claimed, or the flag settled, while the gateway was asked.
        this.guard(object, id, inv);
        await acceptInvoiceStatus(m, inv, status as InvoiceStatus, details);
        await resolveAttention(
          m,
          { object, id: inv.id, shopId: id, status: inv.status },
          resolution,
        );
        return this.invoices.view(await m.findOneByOrFail(InvoiceEntity, { id: inv.id }), true);
      }
      if (object === 'refund') {
        const refund = await lockRefundById(m, pre.id);
        if (!refund) throw new NotFound('Refund', id);
        this.guard(object, id, refund);
        await acceptRefundStatus(m, refund, status as RefundStatus, details);
        await resolveAttention(
          m,
          { object, id: refund.id, shopId: id, status: refund.status },
          resolution,
        );
        return toRefundView(await m.findOneByOrFail(RefundEntity, { id: refund.id }));
      }
      const p = await this.processor.lock(m, { shopId, shopPaymentId: id });
      if (!p) throw new NotFound('Payout', id);
      this.guard(object, id, p);
      await this.processor.accept(m, p, status as PayoutStatus, details);
      await resolveAttention(m, { object, id: p.id, shopId: id, status: p.status }, resolution);
      return toPayoutView(await m.findOneByOrFail(PayoutEntity, { id: p.id }));
    });
  }

  /** Refuses accept on an object that is not flagged, or while a gateway call on it is in flight. */
  private guard(object: AttentionObject, id: string, row: GuardedRow): void {
    const block = acceptBlocked(row, clock.date());
    if (block === 'not_flagged') throw new NotFlagged(label(object), id);
    if (block === 'in_flight')
      throw new RequestInProgress(
        label(object),
        id,
        Math.max(1, Math.ceil(((row.callLeaseUntil?.getTime() ?? 0) - clock.now()) / 1000)),
        'a gateway call on it is in flight; accept after its answer',
      );
  }

  private find(object: AttentionObject, id: string): Promise<GuardedRow | null> {
    const shopId = this.shopOf(object);
    if (object === 'invoice')
      return this.dataSource.getRepository(InvoiceEntity).findOneBy({ shopId, shopOrderId: id });
    if (object === 'refund')
      return this.dataSource.getRepository(RefundEntity).findOneBy({ shopId, shopRefundId: id });
    return this.dataSource.getRepository(PayoutEntity).findOneBy({ shopId, shopPaymentId: id });
  }

  /** The gateway's answer about the object now, asked with nothing held. */
  private async askGateway(object: AttentionObject, row: GuardedRow): Promise<GatewayView> {
    if (object === 'payout') {
      const { answer } = await this.processor.askStatus(row as PayoutEntity);
      return answer.ok
        ? payoutView(row as PayoutEntity, answer.value, this.config.payouts.status)
        : viewOfFailure(answer.err);
    }
    try {
      if (object === 'invoice') {
        const record = await this.gateway.checkInvoice((row as InvoiceEntity).shopOrderId);
        return invoiceView(record.status);
      }
      const refund = row as RefundEntity;
      const invoiceId =
        refund.gatewayInvoiceId ??
        (await this.dataSource.getRepository(InvoiceEntity).findOneBy({ id: refund.invoicePk }))
          ?.invoiceId ??
        null;
      // No gateway invoice id: no refund of it can have been sent.
      if (invoiceId === null) return { kind: 'never_sent' };
      const records = await this.gateway.getRefunds(toGatewayId(invoiceId));
      const record = records.find((r) => r.shop_refund_id === refund.shopRefundId);
      return record ? refundView(record.status) : { kind: 'absent' };
    } catch (err) {
      return viewOfFailure(err);
    }
  }

  /**
   * The operator's charge or unhold of a held invoice: the real gateway call, through the same
   * two-step path as the shop's (InvoicesService), audited with the admin's key id; a flag the
   * call leaves settled (the invoice final, no new flag raised by the call) is cleared.
   */
  private async settleHold(
    object: AttentionObject,
    id: string,
    action: 'charge' | 'unhold',
    by: By,
  ): Promise<unknown> {
    if (object !== 'invoice')
      throw new ValidationFailed([
        { field: 'action', message: `${action} applies to held invoices only` },
      ]);
    const before = await this.dataSource
      .getRepository(InvoiceEntity)
      .findOneBy({ shopId: this.shopOf(object), shopOrderId: id });
    if (before === null) throw new NotFound('Invoice', id);
    await (action === 'charge' ? this.invoices.charge(id, by) : this.invoices.unhold(id, by));
    await transactionFor(this.dataSource, by, async (m) => {
      const inv = await lockInvoice(m, { shopId: this.shopOf(object), shopOrderId: id });
      if (!inv) throw new NotFound('Invoice', id);
      if (
        inv.needsAttention &&
        isFinalInvoice(inv.status) &&
        inv.attentionReason === before.attentionReason
      )
        await resolveAttention(
          m,
          { object, id: inv.id, shopId: id, status: inv.status },
          { action, status: inv.status },
        );
    });
    return this.invoices.get(id, false, true, by);
  }
}

/** What the accept guard reads of any of the three objects. */
type GuardedRow = (InvoiceEntity | RefundEntity | PayoutEntity) & {
  needsAttention: boolean;
  callLeaseUntil: Date | null;
};

function label(object: AttentionObject): string {
  return object === 'invoice' ? 'Invoice' : object === 'refund' ? 'Refund' : 'Payout';
}
