import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import type { By } from '../common/actor';
import { Coalescer } from '../common/coalesce';
import type { Page } from '../common/pagination';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway';
import { InvoicesService } from '../invoices/invoices.service';
import {
  NotificationAppliers,
  type ApplyOutcome,
  type NotificationApplier,
} from '../notifications/notification-appliers';
import type { CreateRefundDto } from './dto/create-refund.dto';
import type { AdminRefundsQuery, InvoiceRefundsQuery } from './dto/list-refunds.query';
import type { RefundView } from './dto/refund.view';
import { createRefund } from './operations/create-refund';
import { listAllRefunds, listInvoiceRefunds } from './operations/list-refunds';
import { applyRefundNotification } from './operations/receive-refund-notification';
import { recheckRefund } from './operations/recheck-refund';
import type { CreateResult, ReconcileOutcome, RefundDeps } from './operations/refund-deps';
import { reconcileRefund } from './operations/settle-refund';

export type { CreateResult, ReconcileOutcome } from './operations/refund-deps';

/**
 * Refunds, one file per operation in operations/ (create-refund, send-refund, recheck-refund,
 * settle-refund, receive-refund-notification, list-refunds), their rules in refund.rules.ts and
 * their statements in refund-sql.ts. This provider only holds what they share and registers the
 * `type=refund` notification applier.
 */
@Injectable()
export class RefundsService implements OnModuleInit, NotificationApplier {
  /** The payment shop: refunds are written, found and reconciled under its id. */
  readonly shopId: number;
  private readonly deps: RefundDeps;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    gateway: GatewayService,
    private readonly appliers: NotificationAppliers,
    audit: AuditService,
    @Inject(APP_CONFIG) config: AppConfig,
    invoices: InvoicesService,
  ) {
    // Refunds belong to the payment shop, like the invoices they refund.
    this.shopId = gateway.shopId('payment');
    this.deps = {
      dataSource,
      gateway,
      audit,
      config,
      invoices,
      shopId: this.shopId,
      refreshes: new Coalescer(),
    };
  }

  onModuleInit(): void {
    this.appliers.register('refund', this);
  }

  create(
    shopOrderId: string,
    dto: CreateRefundDto,
    cause: Extract<AuditCause, 'api' | 'admin'>,
    by: By,
  ): Promise<CreateResult> {
    return createRefund(this.deps, shopOrderId, dto, cause, by);
  }

  /** Applies a verified `type=refund` notification inside the webhook's transaction. */
  apply(manager: EntityManager, fields: Record<string, string>): Promise<ApplyOutcome> {
    return applyRefundNotification(this.deps, manager, fields);
  }

  listForInvoice(shopOrderId: string, q: InvoiceRefundsQuery, by: By): Promise<Page<RefundView>> {
    return listInvoiceRefunds(this.deps, shopOrderId, q, by);
  }

  listAll(q: AdminRefundsQuery): Promise<Page<RefundView>> {
    return listAllRefunds(this.deps, q);
  }

  recheck(shopRefundId: string, by: By): Promise<RefundView> {
    return recheckRefund(this.deps, shopRefundId, by);
  }

  reconcile(id: string): Promise<ReconcileOutcome> {
    return reconcileRefund(this.deps, id);
  }
}
