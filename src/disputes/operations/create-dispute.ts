/**
 * Recording a dispute (POST /admin/invoices/{shopOrderId}/disputes): an operator writes down a
 * chargeback the gateway's manager reported. Checked whole before anything is written; then, under
 * the invoice's row lock (the lock the refund cap takes, so a refund and a dispute at once never
 * together exceed what was paid), the invoice must be succeeded and the amount must fit what is
 * left to dispute. Idempotent by the operator's `Idempotency-Key` (per admin key) and by the
 * gateway's reference (per shop), both unique indexes: the same facts replay the dispute as it is
 * now, other facts are a 409 naming them. No gateway call: the gateway's interface has no disputes.
 */
import type { EntityManager } from 'typeorm';
import { actingKeyOf, transactionFor, type By } from '../../common/actor';
import { clock } from '../../common/clock';
import { minorUnitsProblem } from '../../common/currency';
import { IdempotencyConflict, InvalidState, NotFound, ValidationFailed } from '../../common/errors';
import { differingFields, differs } from '../../common/idempotency';
import { Amount, moneyText } from '../../common/money';
import { randomToken } from '../../common/random-token';
import { entityFromRow } from '../../common/sql';
import { instantOf } from '../../common/date-time';
import { lockInvoice } from '../../invoices/invoice-transitions';
import { parseIdempotencyKey } from '../../ledger/ledger.chart';
import { COUNTED_REFUNDS_SQL, countedRefundsParams } from '../../refunds/refund-sql';
import { DisputeEntity, type DisputeNote } from '../dispute.entity';
import { COUNTED_DISPUTE_STATUSES } from '../dispute.state';
import {
  COUNTED_DISPUTES_SQL,
  DISPUTE_BY_CREATE_KEY_SQL,
  INSERT_DISPUTE_SQL,
} from '../dispute-sql';
import { syncDisputedAmount } from '../dispute-transitions';
import {
  disputableAmountOf,
  disputeFacts,
  disputeTimesProblems,
  fitsDisputable,
} from '../disputes.rules';
import type { CreateDisputeDto } from '../dto/create-dispute.dto';
import { toDisputeView } from '../dto/dispute.view';
import type { DisputeCreated, DisputeDeps } from './dispute-deps';

/** The request as it will be stored, read once from the DTO and the header. */
interface Request {
  shopOrderId: string;
  amount: Amount;
  reason: string;
  reportedAt: Date;
  respondBy: Date | null;
  gatewayReference: string | null;
  note: string;
  idempotencyKey: string | null;
}

export async function createDispute(
  d: DisputeDeps,
  shopOrderId: string,
  dto: CreateDisputeDto,
  idempotencyHeader: unknown,
  by: By,
): Promise<DisputeCreated> {
  const header = parseIdempotencyKey(idempotencyHeader);
  const amount = Amount.parse(dto.amount);
  const reportedAt = instantOf(dto.reportedAt, 'time')!;
  const respondBy = instantOf(dto.respondBy, 'time') ?? null;
  const errors = [...header.errors, ...disputeTimesProblems(reportedAt, respondBy, clock.date())];
  if (!amount.isPositive()) errors.push({ field: 'amount', message: 'must be above zero' });
  if (errors.length > 0) throw new ValidationFailed(errors);
  const req: Request = {
    shopOrderId,
    amount,
    reason: dto.reason,
    reportedAt,
    respondBy,
    gatewayReference: dto.gatewayReference ?? null,
    note: dto.note,
    idempotencyKey: header.key ?? null,
  };
  return transactionFor(d.dataSource, by, async (m) => {
    const invoice = await lockInvoice(m, { shopId: d.shopId, shopOrderId });
    if (!invoice) throw new NotFound('Invoice', shopOrderId);
    const keyId = actingKeyOf(m);
    const earlier = await sameCreate(m, d, req, keyId);
    if (earlier) return earlier;
    if (invoice.status !== 'succeeded')
      throw new InvalidState('Invoice', shopOrderId, invoice.status, 'dispute');
    const tooFine = minorUnitsProblem(dto.amount, invoice.currency);
    if (tooFine) throw new ValidationFailed([{ field: 'amount', message: tooFine }]);
    const refunds = await amounts(m, COUNTED_REFUNDS_SQL, countedRefundsParams(invoice.id));
    const disputes = await amounts(m, COUNTED_DISPUTES_SQL, [invoice.id, COUNTED_DISPUTE_STATUSES]);
    if (!fitsDisputable(invoice, refunds, disputes, amount)) {
      const left = moneyText(disputableAmountOf(invoice, refunds, disputes), invoice.currency);
      const of = (xs: Amount[]): string => moneyText(Amount.sum(xs), invoice.currency);
      throw new ValidationFailed([
        {
          field: 'amount',
          message: `must be at most ${left}, what is left to dispute: paid ${moneyText(invoice.amount, invoice.currency)} − refunds not FAILED ${of(refunds)} − other disputes open, lost or accepted ${of(disputes)}`,
        },
      ]);
    }
    const note: DisputeNote = {
      at: clock.date().toISOString(),
      action: 'opened',
      keyId,
      note: req.note,
    };
    const rows = (await m.query(INSERT_DISPUTE_SQL, [
      `dp_${randomToken(18)}`,
      d.shopId,
      invoice.id,
      shopOrderId,
      amount.toString(),
      invoice.currency,
      req.reason,
      reportedAt,
      respondBy,
      req.gatewayReference,
      JSON.stringify([note]),
      keyId,
      req.idempotencyKey,
    ])) as Record<string, unknown>[];
    if (rows.length === 0) {
      // The key or the reference was committed by another invoice's create meanwhile.
      const raced = await sameCreate(m, d, req, keyId);
      if (raced) return raced;
      throw new Error('createDispute: a conflicting dispute vanished');
    }
    const dispute = entityFromRow(m.connection, DisputeEntity, rows[0]);
    const view = toDisputeView(dispute);
    await d.audit.record(m, {
      entityType: 'dispute',
      entityId: dispute.publicId,
      rowId: dispute.id,
      fromStatus: null,
      toStatus: 'open',
      cause: 'admin',
      details: {
        shopOrderId,
        amount: view.amount,
        reason: req.reason,
        gatewayReference: req.gatewayReference,
        note: req.note,
      },
      committedView: { ...view },
    });
    // Its amount leaves the invoice's refundable room from this commit on.
    await syncDisputedAmount(m, invoice.id, dispute.publicId, 'admin');
    return { code: 201, body: view };
  });
}

async function amounts(m: EntityManager, sql: string, params: unknown[]): Promise<Amount[]> {
  const rows = (await m.query(sql, params)) as Array<{ amount: string }>;
  return rows.map((r) => Amount.fromText(r.amount));
}

/**
 * The dispute an earlier create recorded under this request's idempotency key or gateway
 * reference: the same facts replay it as it is now; other facts are a conflict naming them.
 * Null when there is none.
 */
async function sameCreate(
  m: EntityManager,
  d: DisputeDeps,
  req: Request,
  keyId: string | null,
): Promise<DisputeCreated | null> {
  if (req.idempotencyKey === null && req.gatewayReference === null) return null;
  const rows = (await m.query(DISPUTE_BY_CREATE_KEY_SQL, [
    d.shopId,
    req.idempotencyKey,
    keyId,
    req.gatewayReference,
  ])) as Record<string, unknown>[];
  if (rows.length === 0) return null;
  const first = entityFromRow(m.connection, DisputeEntity, rows[0]);
  const opened = first.notes.find((n) => n.action === 'opened');
  const fields = differingFields(
    disputeFacts({ ...first, note: opened?.note ?? '' }),
    disputeFacts(req),
  );
  if (fields.length > 0) {
    const byKey = req.idempotencyKey !== null && first.idempotencyKey === req.idempotencyKey;
    throw new IdempotencyConflict(
      byKey ? 'Idempotency-Key' : 'gatewayReference',
      byKey ? req.idempotencyKey! : req.gatewayReference!,
      differs(fields),
    );
  }
  return { code: 201, body: toDisputeView(first), replayed: true };
}
