/**
 * Creating a refund (POST .../refunds): idempotent by shopRefundId, guarded by the invoice's row
 * lock so the refunds that count and the invoice's disputes never exceed the paid amount
 * (fitsPaidAmount); phase 1 of the
 * atomic phases here, the call and its answer in send-refund.ts.
 */
import { transactionFor, type By } from '../../common/actor';
import { sha256Hex } from '../../common/sha256';
import type { AuditCause } from '../../audit/audit-event.entity';
import { DomainError, InvalidState, NotFound, ValidationFailed } from '../../common/errors';
import { callLeaseSeconds } from '../../jobs/in-flight';
import { INSTANCE_ID } from '../../jobs/instance';
import { Amount } from '../../common/money';
import { lockInvoice } from '../../invoices/invoice-transitions';
import type { CreateRefundDto } from '../dto/create-refund.dto';
import { RefundEntity } from '../refund.entity';
import { RefundExceedsPaidAmount } from '../refund.errors';
import { syncRefundSums } from '../refund-transitions';
import { currencyName, minorUnitsProblem } from '../../common/currency';
import {
  canonicalJson,
  differingFields,
  differs,
  recordConflict,
  refuseIfLocked,
} from '../../common/idempotency';
import { metadataOf } from '../../common/metadata';
import {
  InvoiceIdNotKnown,
  type RefundDeps,
  type Reserved,
  type CreateResult,
} from './refund-deps';
import { COUNTED_REFUNDS_SQL, countedRefundsParams, INSERT_REFUND_SQL } from '../refund-sql';
import { answerRepeat, sendRefund } from './send-refund';
import { fitsPaidAmount } from '../refund.rules';

export async function createRefund(
  d: RefundDeps,
  shopOrderId: string,
  dto: CreateRefundDto,
  cause: Extract<AuditCause, 'api' | 'admin'>,
  by: By,
): Promise<CreateResult> {
  const amount = Amount.parse(dto.amount);
  if (!amount.isPositive())
    throw new ValidationFailed([{ field: 'amount', message: 'must be above zero' }]);
  const fingerprint = fingerprintOf(shopOrderId, dto);
  let reserved: Reserved;
  try {
    reserved = await reserve(d, shopOrderId, dto, amount, fingerprint, cause, by);
  } catch (e) {
    if (!(e instanceof InvoiceIdNotKnown)) throw e;
    // The invoice id its create answer lost: the first invoice/check brings it (nothing held
    // during the call); then the refund is reserved as usual, or refused as before.
    await d.invoices.refresh(shopOrderId, by).catch((err: unknown) => {
      if (!(err instanceof DomainError)) throw err;
    });
    reserved = await reserve(d, shopOrderId, dto, amount, fingerprint, cause, by);
  }
  if (reserved.claimed) return sendRefund(d, reserved, cause, by);
  await sameRequestOrConflict(d, reserved.id, shopOrderId, dto, cause, by);
  return answerRepeat(d, reserved.id, cause, by);
}

/**
 * A repeat is the same request when the invoice, the amount (by value), the currency when
 * given and the metadata match the refund's own columns; otherwise a conflict naming the
 * fields that differ, counted and capped (src/common/idempotency.ts). Outside the reserve
 * transaction: the count must commit though the request is refused.
 */
async function sameRequestOrConflict(
  d: RefundDeps,
  id: string,
  shopOrderId: string,
  dto: CreateRefundDto,
  cause: AuditCause,
  by: By,
): Promise<void> {
  const r = await d.dataSource.getRepository(RefundEntity).findOneBy({ id });
  if (!r) throw new NotFound('Refund', dto.shopRefundId);
  const target = {
    object: 'refund' as const,
    id: r.id,
    key: 'shopRefundId',
    shopId: r.shopRefundId,
    status: r.status,
    conflicts: r.idempotencyConflicts,
  };
  const limit = d.config.idempotencyConflictLimit;
  refuseIfLocked(target, limit);
  const first: Record<string, unknown> = {
    shopOrderId: r.shopOrderId,
    amount: r.amount.canonicalText(),
    metadata: r.metadata ?? {},
  };
  const repeat: Record<string, unknown> = {
    shopOrderId,
    amount: Amount.parse(dto.amount).canonicalText(),
    metadata: metadataOf(dto.metadata),
  };
  if (dto.currency !== undefined) {
    first.currency = r.currency;
    repeat.currency = dto.currency;
  }
  const fields = differingFields(first, repeat);
  if (fields.length > 0)
    await recordConflict(d.dataSource, by, target, limit, differs(fields), cause);
}

/**
 * First transaction: under the invoice's row lock, check the status and the paid amount and
 * commit the refund as WAITING/pending before the gateway hears of it, so a crash after this
 * leaves a row that reconciliation settles. Phase 1 of the atomic phases: the new row carries
 * the claim on its gateway call (owner, start, lease), and the invoice lock is held only for
 * this short transaction, never across the call. Returns the refund (new or the same request's).
 */
function reserve(
  d: RefundDeps,
  shopOrderId: string,
  dto: CreateRefundDto,
  amount: Amount,
  fingerprint: string,
  cause: AuditCause,
  by: By,
): Promise<Reserved> {
  return transactionFor(d.dataSource, by, async (m) => {
    const invoice = await lockInvoice(m, { shopId: d.shopId, shopOrderId });
    if (!invoice) throw new NotFound('Invoice', shopOrderId);
    const existing = await m.findOne(RefundEntity, {
      where: { shopId: d.shopId, shopRefundId: dto.shopRefundId },
    });
    if (existing) return { id: existing.id, claimed: false };
    if (invoice.status !== 'succeeded')
      throw new InvalidState('Invoice', shopOrderId, invoice.status, 'refund');
    if (dto.currency !== undefined && dto.currency !== invoice.currency) {
      throw new ValidationFailed([
        { field: 'currency', message: `must be the invoice currency ${currencyName(invoice.currency)}` },
      ]);
    }
    const tooFine = minorUnitsProblem(dto.amount, invoice.currency);
    if (tooFine) throw new ValidationFailed([{ field: 'amount', message: tooFine }]);
    if (invoice.invoiceId === null) throw new InvoiceIdNotKnown(shopOrderId);
    const counted = (
      (await m.query(COUNTED_REFUNDS_SQL, countedRefundsParams(invoice.id))) as Array<{
        amount: string;
      }>
    ).map((r) => Amount.fromText(r.amount));
    // The disputes' share (open, lost or accepted), kept on the invoice row by every dispute
    // change under this same lock (src/disputes): a refund and a dispute at once never together
    // exceed what was paid.
    const disputed = invoice.disputedAmount;
    if (!fitsPaidAmount(invoice.amount, [...counted, disputed], amount)) {
      throw new RefundExceedsPaidAmount(
        shopOrderId,
        invoice.amount,
        Amount.sum(counted),
        amount,
        disputed,
        invoice.currency,
      );
    }
    const { reconcileGraceS, reconcileMaxS } = d.config.refunds;
    const inserted = (await m.query(INSERT_REFUND_SQL, [
      d.shopId,
      dto.shopRefundId,
      invoice.id,
      shopOrderId,
      invoice.invoiceId,
      fingerprint,
      amount.toString(),
      invoice.currency,
      reconcileGraceS,
      reconcileMaxS,
      INSTANCE_ID,
      callLeaseSeconds(d.config.gateway.timeoutMs),
      JSON.stringify(metadataOf(dto.metadata)),
    ])) as Array<{ id: string }>;
    if (inserted.length === 0) {
      // The same shopRefundId was committed for another invoice while we held this one's lock.
      const raced = await m.findOneOrFail(RefundEntity, {
        where: { shopId: d.shopId, shopRefundId: dto.shopRefundId },
      });
      return { id: raced.id, claimed: false };
    }
    await d.audit.record(m, {
      entityType: 'refund',
      entityId: dto.shopRefundId,
      rowId: inserted[0].id,
      fromStatus: null,
      toStatus: 'WAITING',
      cause,
      details: { shopOrderId, amount: amount.toString(), submitState: 'pending' },
    });
    // The new WAITING refund is pending money on the invoice from this commit on.
    await syncRefundSums(
      m,
      { invoicePk: invoice.id, shopRefundId: dto.shopRefundId, status: 'WAITING' },
      null,
      cause,
    );
    return {
      id: inserted[0].id,
      claimed: true,
      gatewayInvoiceId: invoice.invoiceId,
      amount,
      shopRefundId: dto.shopRefundId,
    };
  });
}

/** SHA-256 of the request as the shop sent it, keys in a fixed order. */
/** Kept with the row: the request as compared (amount by value, metadata, currency when given). */
function fingerprintOf(shopOrderId: string, dto: CreateRefundDto): string {
  const canonical = canonicalJson({
    v: 2,
    shopOrderId,
    shopRefundId: dto.shopRefundId,
    amount: Amount.parse(dto.amount).canonicalText(),
    currency: dto.currency ?? null,
    metadata: metadataOf(dto.metadata),
  });
  return sha256Hex(canonical);
}
