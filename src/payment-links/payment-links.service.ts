import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { registerSnapshotLoader } from '../audit/shop-events';
import type { By } from '../common/actor';
import type { Page } from '../common/pagination';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway/gateway.service';
import { followLinkedInvoices } from '../invoices/invoice-followers';
import { InvoicesService } from '../invoices/invoices.service';
import { scheduleJob } from '../jobs/schedule';
import { PaywayConfigService } from '../payway-config/payway-config.service';
import type { CreatePaymentLinkDto, ListPaymentLinksQuery } from './dto/create-payment-link.dto';
import type { PaymentLinkView } from './dto/payment-link.view';
import { createPaymentLink, type LinkCreated } from './operations/create-payment-link';
import { deactivatePaymentLink } from './operations/deactivate-payment-link';
import { expireDueLinks } from './operations/expire-payment-links';
import { followInvoice } from './operations/follow-invoices';
import { payByLink, showLink, type LinkPage, type PayForm } from './operations/pay-by-link';
import { linkFromRow, log, viewsOf, type PaymentLinkDeps } from './operations/payment-link-deps';
import { getPaymentLink, listPaymentLinks } from './operations/read-payment-links';
import { NEXT_EXPIRY } from './payment-link-sql';
import { rowIdOf } from './payment-link.rules';
import { moneyText } from '../common/money';

export interface LinkInvoiceRow {
  shopOrderId: string;
  status: string;
  amount: string;
  currency: number;
  payway: string;
  createdAt: string;
}

export interface LinkHistoryRow {
  type: string | null;
  fromStatus: string | null;
  toStatus: string;
  cause: string;
  keyId: string | null;
  at: string;
}

/** How often the expiry job looks for links whose time has come. */
const EXPIRY_EVERY_MS = 30_000;

// Events of `payment_link` carry the link as its GET returns it.
registerSnapshotLoader('payment_link', async (m, ref, ctx) => {
  const rows = (await m.query(`SELECT * FROM payment_links WHERE id = $1`, [ref.rowId])) as Record<
    string,
    unknown
  >[];
  if (rows.length === 0) throw new Error(`payment link ${ref.objectId} not found for its event`);
  const link = linkFromRow(m, rows[0]);
  const [view] = await viewsOf(m, [link], link.shopId, ctx.publicBaseUrl);
  return { ...view };
});

/**
 * Payment links, one file per operation in operations/ (create, read, deactivate, expire, the
 * payer's page, following the invoices); their rules in payment-link.rules.ts. This provider
 * holds what they share, registers the link's follower of its invoices' statuses and runs the
 * expiry job.
 */
@Injectable()
export class PaymentLinksService implements OnApplicationBootstrap {
  private readonly deps: PaymentLinkDeps;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    gateway: GatewayService,
    invoices: InvoicesService,
    payways: PaywayConfigService,
    private readonly scheduler: SchedulerRegistry,
  ) {
    const audit = new AuditService();
    this.deps = { dataSource, invoices, payways, config, audit, shopId: gateway.shopId('payment') };
    followLinkedInvoices((m, invoice, change) => followInvoice({ audit }, m, invoice, change));
  }

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled) return;
    scheduleJob(this.scheduler, 'payment-link-expiry', EXPIRY_EVERY_MS, () => this.expireDue(), log);
  }

  create(dto: CreatePaymentLinkDto, by: By, idempotencyKey?: string): Promise<LinkCreated> {
    return createPaymentLink(this.deps, dto, by, idempotencyKey);
  }

  get(id: string): Promise<PaymentLinkView> {
    return getPaymentLink(this.deps, id);
  }

  list(q: ListPaymentLinksQuery): Promise<Page<PaymentLinkView>> {
    return listPaymentLinks(this.deps, q);
  }

  deactivate(id: string, by: By): Promise<PaymentLinkView> {
    return deactivatePaymentLink(this.deps, id, by);
  }

  /** One round of the expiry job (also the sandbox clock's): how many links expired. */
  expireDue(): Promise<number> {
    return expireDueLinks(this.deps);
  }

  /** The next moment an active link expires (the sandbox clock stops there). */
  async nextDueAt(): Promise<Date | null> {
    const rows = (await this.deps.dataSource.query(NEXT_EXPIRY)) as Array<{ at: Date | null }>;
    return rows[0]?.at ?? null;
  }

  /** A link's invoices as the console lists them, oldest first. */
  async invoicesOf(publicId: string): Promise<LinkInvoiceRow[]> {
    const rowId = rowIdOf(publicId);
    if (rowId === null) return [];
    const rows = (await this.deps.dataSource.query(
      `SELECT shop_order_id, status, amount, currency, payway, created_at FROM invoices
        WHERE payment_link_id = $1 AND shop_id = $2 ORDER BY created_at, shop_order_id`,
      [rowId, this.deps.shopId],
    )) as Array<{ shop_order_id: string; status: string; amount: string; currency: number; payway: string; created_at: Date }>;
    return rows.map((r) => ({
      shopOrderId: r.shop_order_id,
      status: r.status,
      amount: moneyText(r.amount, r.currency),
      currency: r.currency,
      payway: r.payway,
      createdAt: r.created_at.toISOString(),
    }));
  }

  /** A link's audit trail (its events), oldest first. */
  async historyOf(publicId: string): Promise<LinkHistoryRow[]> {
    const rows = (await this.deps.dataSource.query(
      `SELECT type, from_status, to_status, cause, key_id, created_at FROM events
        WHERE entity_type = 'payment_link' AND entity_id = $1 ORDER BY created_at, id`,
      [publicId],
    )) as Array<{ type: string | null; from_status: string | null; to_status: string; cause: string; key_id: string | null; created_at: Date }>;
    return rows.map((r) => ({
      type: r.type,
      fromStatus: r.from_status,
      toStatus: r.to_status,
      cause: r.cause,
      keyId: r.key_id,
      at: r.created_at.toISOString(),
    }));
  }

  show(id: string, payway: string | undefined): Promise<LinkPage> {
    return showLink(this.deps, id, payway);
  }

  pay(id: string, form: PayForm): Promise<LinkPage> {
    return payByLink(this.deps, id, form);
  }
}
