import type { EntityManager } from 'typeorm';
import type { By } from '../../common/actor';
import { resolveAttention } from '../../common/attention';
import { NotFound, type DomainError } from '../../common/errors';
import { GatewayError } from '../../gateway/gateway.errors';
import type { InvoiceCheckRecord } from '../../gateway/gateway.types';
import { runGatewayOperation } from '../../jobs/gateway-operation';
import { InvoiceEntity } from '../invoice.entity';
import { absencePolicy, applyInvoiceEvidence, evidenceOfCheck } from '../invoice-evidence';
import { nextInvoiceCheck } from '../invoice-reconciler.schedule';
import { isFinal } from '../invoice.state';
import { lockInvoice } from '../invoice-transitions';
import { applyCheckRecord } from './apply-check-record';
import { gatewayFailure } from './gateway-failure';
import type { InvoiceDeps } from './invoice-deps';
import { clock } from '../../common/clock';

/**
 * invoice/check and what it says, through the invoice rule (judgeInvoice, in
 * applyInvoiceEvidence / applyCheckRecord): the one status question of a refresh
 * (GET ?refresh=true), an admin recheck and the payer's return; the reconciler's batch asks the
 * same way. Its request is the shop's order id alone. An absent answer is one more piece of
 * evidence of absence. The call runs in the one runner (runGatewayOperation).
 *
 * A recheck never unschedules anything: an open invoice keeps (or gets) its next
 * check while its watch lasts. The flag is cleared here only when the invoice is final already
 * and the gateway's fresh record says the same.
 */
export async function checkAndApply(
  ctx: InvoiceDeps,
  shopOrderId: string,
  by: By,
  recheck = false,
): Promise<void> {
  const exists = await ctx.dataSource
    .getRepository(InvoiceEntity)
    .existsBy({ shopId: ctx.shopId, shopOrderId });
  if (!exists) throw new NotFound('Invoice', shopOrderId);
  await runGatewayOperation(ctx.dataSource, {
    name: 'invoice.check',
    by,
    call: () => ctx.gateway.checkInvoice(shopOrderId),
    lock: (m) => lockInvoice(m, { shopId: ctx.shopId, shopOrderId }),
    missing: () => undefined,
    record: (m, inv, answer) =>
      answer.ok
        ? checkAnswered(ctx, m, inv, answer.value, recheck)
        : checkFailed(ctx, m, inv, answer.err),
  });
}

/** invoice/check refused: absent is evidence (a pending or unknown row has its own path), else the refusal. */
async function checkFailed(
  ctx: InvoiceDeps,
  m: EntityManager,
  inv: InvoiceEntity,
  err: unknown,
): Promise<DomainError | undefined> {
  if (!(err instanceof GatewayError && err.isAbsent)) return gatewayFailure(err, 'invoice/check');
  if (inv.status === 'pending' || inv.status === 'unknown') return undefined;
  await applyInvoiceEvidence(
    m,
    inv,
    { kind: 'absent' },
    'reconciliation',
    { call: 'invoice/check', reason: 'absent' },
    absencePolicy(ctx.config),
  );
  return undefined;
}

/** invoice/check answered (the row locked): the record through the invoice rule. */
async function checkAnswered(
  ctx: InvoiceDeps,
  m: EntityManager,
  inv: InvoiceEntity,
  record: InvoiceCheckRecord,
  recheck: boolean,
): Promise<undefined> {
  // A call whose lease is over is settled by this check: the row is free for the next call.
  if (inv.callLeaseUntil !== null && inv.callLeaseUntil.getTime() <= clock.now()) {
    await m.update(InvoiceEntity, { id: inv.id }, { callOwner: null, callLeaseUntil: null });
    Object.assign(inv, { callOwner: null, callLeaseUntil: null });
  }
  const wasFinal = isFinal(inv.status);
  const verdict = await applyCheckRecord(
    m,
    inv,
    record,
    'reconciliation',
    absencePolicy(ctx.config),
    ctx.keys,
    ctx.config.gateway.nowOffset,
  );
  if (!recheck) return undefined;
  const ev = evidenceOfCheck(record);
  const agrees =
    wasFinal && verdict.kind !== 'attention' && ev.kind === 'record' && ev.status === inv.status;
  if (agrees && inv.needsAttention) {
    await resolveAttention(
      m,
      { object: 'invoice', id: inv.id, shopId: inv.shopOrderId, status: inv.status },
      { action: 'recheck', gatewayStatus: record.status },
      'admin',
    );
    return undefined;
  }
  await keepWatched(ctx, m, inv);
  return undefined;
}

/** An open invoice within its watch always has a next check (a recheck never drops it). */
async function keepWatched(ctx: InvoiceDeps, m: EntityManager, inv: InvoiceEntity): Promise<void> {
  if (isFinal(inv.status) || inv.nextCheckAt !== null) return;
  const next = nextInvoiceCheck({
    now: clock.date(),
    attempts: inv.checkAttempts,
    deadline: inv.checkDeadline,
    graceS: ctx.config.invoices.reconcileGraceS,
    createdAt: inv.createdAt,
    watch: ctx.config.watch,
  });
  if (next.nextAt === null) return;
  await m.update(InvoiceEntity, { id: inv.id }, { nextCheckAt: next.nextAt });
  inv.nextCheckAt = next.nextAt;
}
