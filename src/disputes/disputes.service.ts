import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { By } from '../common/actor';
import type { Page } from '../common/pagination';
import { GatewayService } from '../gateway';
import type { CreateDisputeDto, ResolveDisputeDto } from './dto/create-dispute.dto';
import type { DisputeView } from './dto/dispute.view';
import type { AdminDisputesQuery } from './dto/list-disputes.query';
import { createDispute } from './operations/create-dispute';
import type { DisputeCreated, DisputeDeps } from './operations/dispute-deps';
import { disputesOfInvoice, listDisputes, openDisputes } from './operations/list-disputes';
import { resolveDispute } from './operations/resolve-dispute';

/**
 * Disputes (chargebacks), one file per operation in operations/ (create-dispute,
 * resolve-dispute, list-disputes), their rules in disputes.rules.ts and their statements in
 * dispute-sql.ts. This provider only holds what they share.
 */
@Injectable()
export class DisputesService {
  private readonly deps: DisputeDeps;

  constructor(@InjectDataSource() dataSource: DataSource, gateway: GatewayService, audit: AuditService) {
    // Disputes are of the payment shop's invoices.
    this.deps = { dataSource, audit, shopId: gateway.shopId('payment') };
  }

  create(shopOrderId: string, dto: CreateDisputeDto, idempotencyKey: unknown, by: By): Promise<DisputeCreated> {
    return createDispute(this.deps, shopOrderId, dto, idempotencyKey, by);
  }

  resolve(id: string, dto: ResolveDisputeDto, by: By): Promise<DisputeView> {
    return resolveDispute(this.deps, id, dto, by);
  }

  list(q: AdminDisputesQuery): Promise<Page<DisputeView>> {
    return listDisputes(this.deps, q);
  }

  /** The desk: open disputes, nearest respondBy first. */
  open(limit: number): Promise<DisputeView[]> {
    return openDisputes(this.deps, limit);
  }

  ofInvoice(shopOrderId: string): Promise<DisputeView[]> {
    return disputesOfInvoice(this.deps, shopOrderId);
  }
}
