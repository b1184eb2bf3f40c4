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
 * What every invoice operation (operations/*.ts) works with. Built once by the facade
 * (invoices.service.ts, the module's provider) with invoiceDeps; holds no per-request state. The
 * few helpers all operations share (the view, the row reads, the call claim) are the functions
 * below, each taking it first.
 */
export interface InvoiceDeps {
  config: AppConfig;
  dataSource: DataSource;
  gateway: GatewayService;
  payways: PaywayConfigService;
  keys: KeyRing;
  audit: AuditService;
  /** invoice/check applied (recheck-invoice.ts), shared by concurrent callers: a charge asks it first when a hold's id is lost. */
  refresh: (shopOrderId: string, by: By) => Promise<void>;
  /** The payment shop: invoices are written and found under its id. */
  shopId: number;
  /** Where the gateway sends this service's notifications. */
  webhookUrl: string;
}

export const log = logger.child({ component: 'invoices' });

export function invoiceDeps(
  config: AppConfig,
  dataSource: DataSource,
  gateway: GatewayService,
  payways: PaywayConfigService,
  keys: KeyRing,
  refresh: InvoiceDeps['refresh'],
): InvoiceDeps {
  return {
    config,
    dataSource,
    gateway,
    payways,
    keys,
    audit: new AuditService(),
    refresh,
    shopId: gateway.shopId('payment'),
    webhookUrl: `${config.publicBaseUrl}/webhooks/gateway`,
  };
}

/** A plain row of `invoices` as the entity (the hot paths' reads, src/common/sql.ts). */
export function invoiceFromRow(d: InvoiceDeps, row: Record<string, unknown>): InvoiceEntity {
  return entityFromRow(d.dataSource, InvoiceEntity, row);
}

export function invoiceView(d: InvoiceDeps, inv: InvoiceViewSource, admin = false): InvoiceView {
  return toInvoiceView(inv, d.config.publicBaseUrl, {
    admin,
    revealToken: () => {
      try {
        return revealPaymentToken(d.keys, inv);
      } catch (e) {
        // The invoice is still shown; only the token that does not open is left out.
        if (!(e instanceof SealError)) throw e;
        log.error({ invoiceRowId: inv.id }, 'stored payment token cannot be opened');
        return null;
      }
    },
  });
}

export async function findInvoice(
  d: InvoiceDeps,
  shopOrderId: string,
): Promise<InvoiceEntity | null> {
  const rows = await run(poolOf(d.dataSource), BY_SHOP_ORDER_ID, [d.shopId, shopOrderId]);
  return rows.length > 0 ? invoiceFromRow(d, rows[0]) : null;
}

export function reloadInvoice(m: EntityManager, inv: InvoiceEntity): Promise<InvoiceEntity> {
  return m.findOneByOrFail(InvoiceEntity, { id: inv.id });
}

/**
 * A call whose outcome is not known yet: the claim is kept with its lease already over, so no
 * new charge/unhold can claim the row (they answer 409 request-in-progress) until a status
 * call (reconciliation, or a refresh) has settled what the first one did and freed it.
 */
export function settleFirst(): Pick<InvoiceEntity, 'callOwner' | 'callLeaseUntil'> {
  return { callOwner: INSTANCE_ID, callLeaseUntil: clock.date() };
}

/** The claim on a gateway call: who, since when, until when it is presumed alive. */
export function claimCall(
  d: InvoiceDeps,
): Pick<InvoiceEntity, 'callOwner' | 'callStartedAt' | 'callLeaseUntil'> {
  return {
    callOwner: INSTANCE_ID,
    callStartedAt: clock.date(),
    callLeaseUntil: secondsFromNow(callLeaseSeconds(d.config.gateway.timeoutMs)),
  };
}

export function secondsFromNow(s: number): Date {
  return new Date(clock.now() + s * 1000);
}
