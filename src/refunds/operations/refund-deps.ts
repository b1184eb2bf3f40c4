import type { DataSource } from 'typeorm';
import type { AuditService } from '../../audit/audit.service';
import type { Coalescer } from '../../common/coalesce';
import { InvalidState } from '../../common/errors';
import { logger } from '../../common/logger';
import type { Amount } from '../../common/money';
import type { AppConfig } from '../../config/config';
import type { GatewayService } from '../../gateway';
import type { InvoicesService } from '../../invoices/invoices.service';
import type { RefundView } from '../dto/refund.view';
import type { StoredProblem } from '../refund.errors';

/** What every refund operation works with (given by RefundsService, the module's one provider). */
export interface RefundDeps {
  dataSource: DataSource;
  gateway: GatewayService;
  audit: AuditService;
  config: AppConfig;
  invoices: InvoicesService;
  /** The payment shop: refunds are written, found and reconciled under its id. */
  shopId: number;
  /** Concurrent refreshes of one invoice's refunds share one invoice/get-refunds call. */
  refreshes: Coalescer;
}

export const log = logger.child({ component: 'refunds' });

/** Phase 1's result: the refund, and what its gateway call needs when this request claimed it. */
export type Reserved =
  | { id: string; claimed: false }
  | {
      id: string;
      claimed: true;
      gatewayInvoiceId: string | null;
      amount: Amount;
      shopRefundId: string;
    };

/** A paid invoice whose gateway id is not known (yet): 409 unless invoice/check brings it. */
export class InvoiceIdNotKnown extends InvalidState {
  constructor(shopOrderId: string) {
    super('Invoice', shopOrderId, 'without gateway invoice id', 'refund');
  }
}

/** No gateway call in flight for the row. */
export const NO_CALL = { callOwner: null, callLeaseUntil: null } as const;

export interface StoredResponse {
  refund?: RefundView;
  problem?: StoredProblem;
}

export interface CreateResult {
  code: number;
  body: RefundView;
  /** Given to a repeat (sent with `Idempotent-Replayed: true`), not made by this request. */
  replayed?: boolean;
}

/** What the reconciler did with one refund. */
export type ReconcileOutcome =
  'settled' | 'waiting' | 'not_created' | 'needs_attention' | 'gateway_error' | 'done';
