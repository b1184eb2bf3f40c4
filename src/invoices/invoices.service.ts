import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { By } from '../common/actor';
import { BatchedRead } from '../common/batched-read';
import { Coalescer } from '../common/coalesce';
import { NotFound } from '../common/errors';
import { KeyRing } from '../common/key-ring';
import type { Page } from '../common/pagination';
import { poolOf, run } from '../common/sql';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway/gateway.service';
import { PaywayConfigService } from '../payway-config/payway-config.service';
import type { CreateInvoiceDto, QuoteInvoiceDto } from './dto/create-invoice.dto';
import type { ListInvoicesQuery } from './dto/invoice-queries.dto';
import { VIEWS_BY_SHOP_ORDER_IDS } from './invoice-sql';
import type { InvoiceView, InvoiceViewSource } from './invoice.view';
import type { PayerStep } from './redirect-page';
import { CHARGE, chargeInvoice } from './operations/charge-invoice';
import { settleHold } from './operations/settle-hold';
import { CreateInvoice, type InvoiceOrigin } from './operations/create-invoice';
import {
  invoiceDeps,
  invoiceFromRow,
  invoiceView,
  type InvoiceDeps,
  type StoredResponse,
} from './operations/invoice-deps';
import { listInvoices } from './operations/list-invoices';
import { payerStep } from './operations/payer-step';
import { quoteInvoice, validateAgainstPayway, type QuoteView } from './operations/quote-invoice';
import { checkAndApply } from './operations/recheck-invoice';
import { resolvePaymentTokenFrom } from './operations/resolve-payment-token';
import { UNHOLD, unholdInvoice } from './operations/unhold-invoice';

export type { QuoteField, QuoteView } from './operations/quote-invoice';
export type { StoredResponse } from './operations/invoice-deps';
export { PaymentLinkSlotTaken, type InvoiceOrigin } from './operations/create-invoice';

/**
 * Payments, as the controllers and other modules call them. Each operation lives in its own file
 * under operations/ (create-invoice.ts, charge-invoice.ts, unhold-invoice.ts,
 * recheck-invoice.ts, quote-invoice.ts, payer-step.ts, …) with its request builder and the rules
 * it obeys; every gateway call runs in the one runner (src/jobs/gateway-operation.ts) and every
 * status change goes through the invoice state machine (transitionInvoice), audited in the
 * transaction that makes it. This facade only holds what is shared across requests: the turn's
 * batched reads and claims, and the coalesced refreshes.
 */
@Injectable()
export class InvoicesService {
  private readonly ctx: InvoiceDeps;
  private readonly creates: CreateInvoice;
  private readonly refreshes = new Coalescer();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    gateway: GatewayService,
    payways: PaywayConfigService,
    keys: KeyRing,
  ) {
    this.ctx = invoiceDeps(config, dataSource, gateway, payways, keys, (id, by) =>
      this.refresh(id, by),
    );
    this.creates = new CreateInvoice(this.ctx);
  }

  view(inv: InvoiceViewSource, admin = false): InvoiceView {
    return invoiceView(this.ctx, inv, admin);
  }

  quote(dto: QuoteInvoiceDto): Promise<QuoteView> {
    return quoteInvoice(this.ctx, dto);
  }

  /** Idempotent by shopOrderId, in atomic phases (operations/create-invoice.ts). */
  create(dto: CreateInvoiceDto, by: By, origin?: InvoiceOrigin): Promise<StoredResponse> {
    return this.creates.create(dto, by, origin);
  }

  /**
   * What a create checks before anything is written, without creating: the payway known and
   * active, the amount within its bounds and the extras its add-on fields (a payment link's
   * form checks the payer's fields with it, word for word as `POST /invoices` would).
   */
  async checkCreate(dto: CreateInvoiceDto): Promise<void> {
    await validateAgainstPayway(this.ctx, dto, true);
  }

  resolvePaymentTokenFrom(dto: CreateInvoiceDto): Promise<CreateInvoiceDto> {
    return resolvePaymentTokenFrom(this.ctx, dto);
  }

  async get(shopOrderId: string, refresh: boolean, admin: boolean, by: By): Promise<InvoiceView> {
    if (refresh) await this.refresh(shopOrderId, by);
    const row = await this.viewReads.get(shopOrderId);
    if (row === undefined) throw new NotFound('Invoice', shopOrderId);
    return this.view(invoiceFromRow(this.ctx, row), admin);
  }

  /** The view's columns of invoices by the shop's id, the turn's reads in one statement. */
  private readonly viewReads = new BatchedRead<string, Record<string, unknown>>(async (ids) => {
    const rows = await run(poolOf(this.dataSource), VIEWS_BY_SHOP_ORDER_IDS, [
      this.ctx.shopId,
      ids,
    ]);
    return new Map(rows.map((r) => [r.shop_order_id as string, r]));
  });

  /**
   * invoice/check, applied through the state machine (cause reconciliation), token kept.
   * Concurrent refreshes of one invoice share one call.
   */
  refresh(shopOrderId: string, by: By): Promise<void> {
    return this.refreshes.run(shopOrderId, () => checkAndApply(this.ctx, shopOrderId, by));
  }

  /** Admin recheck (operations/recheck-invoice.ts), then the invoice as admins see it. */
  async recheck(shopOrderId: string, by: By): Promise<InvoiceView> {
    await checkAndApply(this.ctx, shopOrderId, by, true);
    return this.get(shopOrderId, false, true, by);
  }

  list(q: ListInvoicesQuery, admin: boolean): Promise<Page<InvoiceView>> {
    return listInvoices(this.ctx, q, admin);
  }

  charge(shopOrderId: string, by: By): Promise<InvoiceView> {
    return chargeInvoice(this.ctx, shopOrderId, by);
  }

  unhold(shopOrderId: string, by: By): Promise<InvoiceView> {
    return unholdInvoice(this.ctx, shopOrderId, by);
  }

  /**
   * The hold policy's own act (hold-policy.ts): the same charge or unhold a shop asks for, by
   * nobody's key, audited with the policy's name.
   */
  actOnHold(
    shopOrderId: string,
    policy: 'charge' | 'release',
    details: Record<string, unknown>,
  ): Promise<InvoiceView> {
    const action = policy === 'charge' ? CHARGE : UNHOLD;
    return settleHold(
      this.ctx,
      shopOrderId,
      { ...action, cause: 'reconciliation', details: { holdPolicy: policy, ...details } },
      undefined,
    );
  }

  payerStep(shopOrderId: string, token: string | undefined, nonce: string): Promise<PayerStep> {
    return payerStep(this.ctx, shopOrderId, token, nonce);
  }
}
