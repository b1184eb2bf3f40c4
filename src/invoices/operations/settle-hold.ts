import type { EntityManager } from 'typeorm';
import type { AuditCause } from '../../audit/audit-event.entity';
import type { By } from '../../common/actor';
import { DomainError, InvalidState, NotFound, RequestInProgress } from '../../common/errors';
import { isOutcomeUnknown } from '../../gateway/gateway.errors';
import type { GatewayService } from '../../gateway/gateway.service';
import { toGatewayId } from '../../gateway/ids';
import type { InvoiceRecord } from '../../gateway/gateway.types';
import { runGatewayOperation, type CallAnswer } from '../../jobs/gateway-operation';
import { callLeaseSeconds } from '../../jobs/in-flight';
import { INSTANCE_ID } from '../../jobs/instance';
import { InvoiceEntity } from '../invoice.entity';
import { absencePolicy, applyInvoiceEvidence, evidenceOfCheck } from '../invoice-evidence';
import { applyGatewayFacts, priceFactsOf } from '../invoice-gateway-facts';
import { CLAIM_HOLD_ACTION } from '../invoice-sql';
import { canCaptureOrRelease, holdActionDone, isFinal } from '../invoice.state';
import type { InvoiceView } from '../invoice.view';
import { applyRecordFacts } from './apply-check-record';
import { describe, gatewayFailure } from './gateway-failure';
import {
  NO_CALL,
  type InvoiceDeps,
  findInvoice,
  invoiceView,
  reloadInvoice,
  secondsFromNow,
  settleFirst,
} from './invoice-deps';
import { clock } from '../../common/clock';

/**
 * What charge-invoice.ts and unhold-invoice.ts share: the phases of an action on a hold. Each
 * names its action: its gateway call (the request builder: the hold's gateway id) and its call
 * name for the audit.
 */
export interface HoldAction {
  action: 'charge' | 'unhold';
  call: 'invoice/charge' | 'invoice/unhold';
  send: (gateway: GatewayService, invoiceId: number) => Promise<InvoiceRecord>;
  /** Who asked, for the audit: the shop's request (`api`, the default) or the service's hold policy. */
  cause?: AuditCause;
  /** Added to the audit entries' details (the hold policy names itself). */
  details?: Record<string, unknown>;
}

/**
 * Charge or release a hold in atomic phases: a claim committed on the held row (so two
 * requests cannot both act), the call with nothing held (the one runner, runGatewayOperation),
 * then a short lock to write the answer through the invoice rule (applyInvoiceEvidence: for an
 * unhold a 6 is the released hold, an 8 is settled later by invoice/check, a 4 is a charge and
 * flagged). A hold whose gateway id is not known yet is first asked about (invoice/check,
 * nothing held). A repeat of what already happened answers the invoice as it is
 * (holdActionDone); whether the status allows the action at all is canCaptureOrRelease.
 */
export async function settleHold(
  ctx: InvoiceDeps,
  shopOrderId: string,
  hold: HoldAction,
  by: By,
): Promise<InvoiceView> {
  let row = await claimHold(ctx, shopOrderId, hold.action);
  if (row === undefined) {
    const inv = await findInvoice(ctx, shopOrderId);
    if (inv?.status === 'held' && inv.invoiceId === null && inv.callLeaseUntil === null) {
      // The id its create answer lost: the first invoice/check brings it.
      await ctx.refresh(shopOrderId, by).catch((e: unknown) => {
        if (!(e instanceof DomainError)) throw e;
      });
      row = await claimHold(ctx, shopOrderId, hold.action);
    }
  }
  if (row === undefined) return holdNotClaimed(ctx, shopOrderId, hold.action);
  const claimed = row;
  return runGatewayOperation(ctx.dataSource, {
    name: `invoice.${hold.action}`,
    by,
    call: () => hold.send(ctx.gateway, toGatewayId(claimed.invoice_id)),
    lock: (m) =>
      m.findOne(InvoiceEntity, {
        where: { id: claimed.id },
        lock: { mode: 'pessimistic_write' },
      }),
    missing: () => new NotFound('Invoice', shopOrderId),
    record: (m, inv, answer) => holdAnswered(ctx, m, inv, hold, answer),
  });
}

/**
 * Phase 3 of a charge or unhold (the row locked): the claim released, the answer through the
 * invoice rule; a failure is returned so that what it leaves commits first.
 */
async function holdAnswered(
  ctx: InvoiceDeps,
  m: EntityManager,
  inv: InvoiceEntity,
  { action, call, cause = 'api', details: actDetails = {} }: HoldAction,
  answer: CallAnswer<InvoiceRecord>,
): Promise<InvoiceView | DomainError> {
  // The call is audited even when the status stays (a failure, a non-final answer).
  const auditCall = (details: Record<string, unknown>): Promise<void> =>
    ctx.audit.record(m, {
      entityType: 'invoice',
      entityId: inv.shopOrderId,
      fromStatus: inv.status,
      toStatus: inv.status,
      cause,
      details: { call, ...actDetails, ...details },
    });
  await m.update(InvoiceEntity, { id: inv.id }, NO_CALL);
  if (!answer.ok) {
    const err = answer.err;
    if (!isOutcomeUnknown(err) && action === 'unhold') {
      // Not done: a 6 reported later is not the release of our request.
      await m.update(InvoiceEntity, { id: inv.id }, { unholdRequestedAt: null });
    }
    if (isOutcomeUnknown(err)) {
      // It may have happened: invoice/check settles it (reconciliation, now), and until
      // then no second charge or unhold is sent: the claim stays, its lease already over.
      await m.update(
        InvoiceEntity,
        { id: inv.id },
        { ...settleFirst(), nextCheckAt: clock.date() },
      );
    }
    await auditCall({ failed: describe(err) });
    return gatewayFailure(err, call);
  }
  const record = answer.value;
  const gatewayStatus = typeof record.status === 'number' ? record.status : null;
  // The answer is a gateway record like any other: the invoice rule judges it (the row
  // says an unhold was sent, so a 6 is the released hold).
  const verdict = await applyInvoiceEvidence(
    m,
    inv,
    evidenceOfCheck(record),
    cause,
    { call, ...actDetails },
    absencePolicy(ctx.config),
    { gatewayStatus, ...priceFactsOf(record) },
  );
  if (!(verdict.kind === 'attention' && verdict.reason === 'mismatch'))
    await applyRecordFacts(m, inv, record);
  const applied = verdict.kind === 'apply';
  await applyGatewayFacts(m, inv, record, ctx.config.gateway.nowOffset, cause);
  if (!applied) {
    // Accepted, status unchanged (non-final answer): recorded, the notification follows.
    await auditCall({ gatewayStatus });
    // The gateway took it without a final status: the notification (or invoice/check)
    // settles it; meanwhile no second charge or unhold.
    if (!isFinal(inv.status))
      await m.update(
        InvoiceEntity,
        { id: inv.id },
        {
          ...(inv.status === 'held' ? settleFirst() : {}),
          nextCheckAt: secondsFromNow(ctx.config.invoices.reconcileGraceS),
        },
      );
  }
  return invoiceView(ctx, await reloadInvoice(m, inv));
}

/**
 * Phase 1 of a charge or unhold: the claim on a held row whose gateway id is known, one
 * statement (CLAIM_HOLD_ACTION); an unhold also records that it was asked for. Undefined: not
 * claimed.
 */
async function claimHold(
  ctx: InvoiceDeps,
  shopOrderId: string,
  action: 'charge' | 'unhold',
): Promise<{ id: string; invoice_id: string } | undefined> {
  const leaseS = callLeaseSeconds(ctx.config.gateway.timeoutMs);
  const claimed = (await ctx.dataSource.query(CLAIM_HOLD_ACTION, [
    ctx.shopId,
    shopOrderId,
    INSTANCE_ID,
    leaseS,
    action === 'unhold',
  ])) as [Array<{ id: string; invoice_id: string }>, number];
  return claimed[0][0];
}

/** A charge or unhold that could not claim the row: done already (200), in flight, or 409. */
async function holdNotClaimed(
  ctx: InvoiceDeps,
  shopOrderId: string,
  action: 'charge' | 'unhold',
): Promise<InvoiceView> {
  const inv = await findInvoice(ctx, shopOrderId);
  if (!inv) throw new NotFound('Invoice', shopOrderId);
  if (holdActionDone(inv, action)) return invoiceView(ctx, inv);
  if (canCaptureOrRelease(inv.status) && inv.callLeaseUntil !== null)
    throw new RequestInProgress('shopOrderId', shopOrderId, 1);
  if (canCaptureOrRelease(inv.status) && inv.invoiceId === null)
    throw new InvalidState('Invoice', shopOrderId, 'held without gateway invoice id', action);
  throw new InvalidState('Invoice', shopOrderId, inv.status, action);
}
