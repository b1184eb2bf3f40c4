import type { DataSource, EntityManager } from 'typeorm';
import type { By } from '../../common/actor';
import { AuditService } from '../../audit/audit.service';
import { KeyRing, SealError } from '../../common/key-ring';
import { logger } from '../../common/logger';
import { entityFromRow, poolOf, run } from '../../common/sql';
import type { AppConfig } from '../../config/config';
import type { GatewayService } from '../../gateway/gateway.service';
import { callLeaseSeconds } from '../../jobs/in-flight';
import { INSTANCE_ID } from '../../jobs/instance';
import type { StoredAnswer } from '../../common/stored-answer';
import type { PaywayConfigService } from '../../payway-config/payway-config.service';
import { BY_SHOP_ORDER_ID } from '../invoice-sql';
import { InvoiceEntity } from '../invoice.entity';
import { toInvoiceView, type InvoiceView, type InvoiceViewSource } from '../invoice.view';
import { revealPaymentToken } from '../payment-token';
import { clock } from '../../common/clock';

/** A create's answer: replayed as is (code and body) for an identical repeat. */
export type StoredResponse = StoredAnswer;

/** No gateway call in flight for the row. */
export const NO_CALL = { callOwner: null, callLeaseUntil: null } as const;

/**
 * What every invoice operation (operations/*.ts) works with: the service's dependencies and the
 * few helpers they all share (the shop, the view, the row reads, the call claim). Made once by
 * the facade (invoices.service.ts); holds no per-request state.
 */
export class InvoiceContext {
  readonly log = logger.child({ component: 'invoices' });
  readonly audit = new AuditService();

  constructor(
    readonly config: AppConfig,
    readonly dataSource: DataSource,
    readonly gateway: GatewayService,
    readonly payways: PaywayConfigService,
    readonly keys: KeyRing,
    /** invoice/check applied (recheck-invoice.ts), shared by concurrent callers: a charge asks it first when a hold's id is lost. */
    readonly refresh: (shopOrderId: string, by: By) => Promise<void>,
  ) {}

  /** A plain row of `invoices` as the entity (the hot paths' reads, src/common/sql.ts). */
  fromRow(row: Record<string, unknown>): InvoiceEntity {
    return entityFromRow(this.dataSource, InvoiceEntity, row);
  }

  /** Invoices are the payment shop's: written and found under its id. */
  get shopId(): number {
    return this.gateway.shopId('payment');
  }

  get webhookUrl(): string {
    return `${this.config.publicBaseUrl}/webhooks/gateway`;
  }

  view(inv: InvoiceViewSource, admin = false): InvoiceView {
    return toInvoiceView(inv, this.config.publicBaseUrl, {
      admin,
      revealToken: () => {
        try {
          return revealPaymentToken(this.keys, inv);
        } catch (e) {
          // The invoice is still shown; only the token that does not open is left out.
          if (!(e instanceof SealError)) throw e;
          this.log.error({ invoiceRowId: inv.id }, 'stored payment token cannot be opened');
          return null;
        }
      },
    });
  }

  async findInvoice(shopOrderId: string): Promise<InvoiceEntity | null> {
    const rows = await run(poolOf(this.dataSource), BY_SHOP_ORDER_ID, [this.shopId, shopOrderId]);
    return rows.length > 0 ? this.fromRow(rows[0]) : null;
  }

  reload(m: EntityManager, inv: InvoiceEntity): Promise<InvoiceEntity> {
    return m.findOneByOrFail(InvoiceEntity, { id: inv.id });
  }

  /**
   * A call whose outcome is not known yet: the claim is kept with its lease already over, so no
   * new charge/unhold can claim the row (they answer 409 request-in-progress) until a status
   * call (reconciliation, or a refresh) has settled what the first one did and freed it.
   */
  settleFirst(): Pick<InvoiceEntity, 'callOwner' | 'callLeaseUntil'> {
    return { callOwner: INSTANCE_ID, callLeaseUntil: clock.date() };
  }

  /** The claim on a gateway call: who, since when, until when it is presumed alive. */
  claim(): Pick<InvoiceEntity, 'callOwner' | 'callStartedAt' | 'callLeaseUntil'> {
    return {
      callOwner: INSTANCE_ID,
      callStartedAt: clock.date(),
      callLeaseUntil: this.secondsFromNow(callLeaseSeconds(this.config.gateway.timeoutMs)),
    };
  }

  secondsFromNow(s: number): Date {
    return new Date(clock.now() + s * 1000);
  }
}
