import type { EntityManager } from 'typeorm';
import { managerFor, type By } from '../../common/actor';
import { RowChanged } from '../../audit/event-write';
import type { DomainError } from '../../common/errors';
import { toProblem } from '../../common/problem.filter';
import { JsonText } from '../../common/json-text';
import { storedAnswer, storedAnswerOf, storedAnswerText } from '../../common/stored-answer';
import { GatewayError, isOutcomeUnknown } from '../../gateway/gateway.errors';
import type { InvoiceCreateResult } from '../../gateway/gateway.types';
import { InvoiceEntity, type RedirectData } from '../invoice.entity';
import { decideTransition, gatewayNumberOf, type InvoiceStatus } from '../invoice.state';
import { transitionInvoice } from '../invoice-transitions';
import type { InvoiceViewSource } from '../invoice.view';
import { redirectParams } from '../redirect-page';
import { describe, gatewayFailure } from './gateway-failure';
import {
  NO_CALL,
  type InvoiceDeps,
  type StoredResponse,
  invoiceView,
  log,
  reloadInvoice,
} from './invoice-deps';
import { clock } from '../../common/clock';

/**
 * Phase 3 of a create (create-invoice.ts): what the gateway's answer to invoice/create or
 * invoice/hold makes of the row, through the invoice state machine (decideTransition, in
 * transitionInvoice), with the stored answer a repeat replays.
 */

const CREATE_PATH = '/api/v1/invoices';

/** A row this request inserted and claimed (phase 1), with its version for phase 3. */
export interface Claimed {
  /** The row's CLAIMED_COLUMNS (invoice-sql.ts) only: what the usual answer reads of it. */
  inv: InvoiceEntity;
  /** The row's `xmin` as phase 1 wrote it. */
  version: string;
}

/** What a create's answer makes of the invoice: the payer's redirect, if any, and the status. */
function createOutcome(result: InvoiceCreateResult): {
  redirect: RedirectData | null;
  to: InvoiceStatus;
} {
  const redirect: RedirectData | null =
    (result.method === 'POST' || result.method === 'GET') &&
    typeof result.url === 'string' &&
    result.url !== ''
      ? { method: result.method, url: result.url, params: redirectParams(result.data) }
      : null;
  // With redirect data the payer acts next; without (token charge, payer-less payway) the
  // notification brings the outcome.
  return { redirect, to: redirect ? 'awaiting_payer' : 'created' };
}

/** The facts a create's answer writes on the row (its redirect: createOutcome's), its call claim released. */
function createFacts(result: InvoiceCreateResult, redirect: RedirectData | null) {
  return { invoiceId: String(result.id), redirect, ...NO_CALL };
}

/**
 * Phase 3 without the row lock: the usual answer (answerUsual) written only if the row is still
 * the version phase 1 inserted. Null when it changed since (a notification, a repeat, an
 * operator) or its event's sequence was taken meanwhile (the unique index refused it): nothing
 * was written, and the caller writes the answer under the row lock.
 */
export async function answerUnchanged(
  ctx: InvoiceDeps,
  claimed: Claimed,
  call: string,
  result: InvoiceCreateResult,
  by: By,
): Promise<StoredResponse | null> {
  try {
    return await answerUsual(
      ctx,
      managerFor(ctx.dataSource, by),
      claimed.inv,
      call,
      result,
      claimed.version,
    );
  } catch (err) {
    if (err instanceof RowChanged || (err as { code?: string }).code === '23505') return null;
    throw err;
  }
}

/**
 * The usual answer in one statement: status, facts, released claim, the stored answer and its
 * event, built from what is written (updated_at included) instead of read back; the answer is
 * also the view the event carries. Null when it is not the usual case (an answer stored
 * already, a status the state machine does not allow from here). `version`: see answerUnchanged.
 */
async function answerUsual(
  ctx: InvoiceDeps,
  m: EntityManager,
  inv: InvoiceEntity,
  call: string,
  result: InvoiceCreateResult,
  version?: string,
): Promise<StoredResponse | null> {
  const { to, redirect } = createOutcome(result);
  if (inv.responseCode !== null || !decideTransition(inv.status, to).allowed) return null;
  const facts = createFacts(result, redirect);
  const updatedAt = clock.date();
  const gatewayStatus = gatewayNumberOf(to) ?? inv.gatewayStatus;
  // A plain copy: the view reads fields only (a spread copies a row's 50-odd fields several
  // times faster than Object.assign onto an entity prototype; profiled under P1).
  const after: InvoiceViewSource = { ...inv, ...facts, status: to, gatewayStatus, updatedAt };
  // The view's JSON, made once: the reply sends it, the row stores it, and the event's data is
  // written from the stored column (event-write's dataIs).
  const view = new JsonText(invoiceView(ctx, after) as unknown as Record<string, unknown>);
  const stored = storedAnswerText(201, view);
  await transitionInvoice(
    m,
    inv,
    to,
    'gateway',
    { call, invoiceId: facts.invoiceId },
    { ...facts, gatewayStatus, ...stored.columns, updatedAt },
    view.value,
    version,
  );
  return stored.answer as StoredResponse;
}

/** Phase 3 of a create the gateway answered (the row is locked by the caller). */
export async function createAnswered(
  ctx: InvoiceDeps,
  m: EntityManager,
  inv: InvoiceEntity,
  call: string,
  result: InvoiceCreateResult,
): Promise<StoredResponse> {
  const usual = await answerUsual(ctx, m, inv, call, result);
  if (usual !== null) return usual;
  const { to, redirect } = createOutcome(result);
  const details = { call, invoiceId: String(result.id) };
  const facts = createFacts(result, redirect);
  await m.update(InvoiceEntity, { id: inv.id }, facts);
  Object.assign(inv, facts);
  await transitionInvoice(m, inv, to, 'gateway', details);
  return finishCreate(ctx, m, inv);
}

/** The answer of a create: the one stored first, else the invoice as it is now. */
export async function finishCreate(
  ctx: InvoiceDeps,
  m: EntityManager,
  inv: InvoiceEntity,
): Promise<StoredResponse> {
  return (
    storedAnswerOf(inv) ?? storeResponse(m, inv, 201, invoiceView(ctx, await reloadInvoice(m, inv)))
  );
}

/**
 * Fatal: rejected, 502. Non-fatal: the gateway took it and will notify, 201 `created`.
 * Unknown outcome (time-out, unclassified code): `unknown`, checked soon, never re-sent.
 * Not sent at all (connection refused): the claim is dropped, a repeat may call again.
 */
export async function createFailed(
  ctx: InvoiceDeps,
  m: EntityManager,
  inv: InvoiceEntity,
  call: string,
  err: unknown,
): Promise<StoredResponse | DomainError> {
  await m.update(InvoiceEntity, { id: inv.id }, NO_CALL);
  if (err instanceof GatewayError && err.fatal === true) {
    await transitionInvoice(
      m,
      inv,
      'rejected',
      'gateway',
      { call, errorCode: err.errorCode },
      { errorCode: err.errorCode, gatewayMessage: err.gatewayMessage },
    );
    const first = storedAnswerOf(inv);
    if (first !== null) return first;
    const problem = { ...toProblem(gatewayFailure(err, call)), instance: CREATE_PATH };
    return storeResponse(m, inv, problem.status, problem);
  }
  if (err instanceof GatewayError && err.fatal === false) {
    await transitionInvoice(
      m,
      inv,
      'created',
      'gateway',
      { call, errorCode: err.errorCode, nonFatal: true },
      { errorCode: err.errorCode, gatewayMessage: err.gatewayMessage, gatewayStatus: null },
    );
    return finishCreate(ctx, m, inv);
  }
  if (isOutcomeUnknown(err)) {
    const errorCode = err instanceof GatewayError ? err.errorCode : null;
    await transitionInvoice(
      m,
      inv,
      'unknown',
      'gateway',
      { call, reason: describe(err) },
      errorCode !== null ? { errorCode } : {},
    );
    await m.update(InvoiceEntity, { id: inv.id }, { nextCheckAt: clock.date() });
    log.warn(
      { shopOrderId: inv.shopOrderId, call, reason: describe(err) },
      'invoice outcome unknown; reconciliation will check it',
    );
    return finishCreate(ctx, m, inv);
  }
  // Never sent: no claim left behind, so a repeat sends it (callStartedAt null marks "never sent").
  if (inv.status === 'pending')
    await m.update(InvoiceEntity, { id: inv.id }, { callStartedAt: null });
  return gatewayFailure(err, call);
}

/** The answer stored on the row under its lock (storedAnswer): what an identical repeat is given. */
export async function storeResponse(
  m: EntityManager,
  inv: InvoiceEntity,
  code: number,
  body: unknown,
): Promise<StoredResponse> {
  const stored = storedAnswer(code, body as object);
  await m.update(InvoiceEntity, { id: inv.id }, stored.columns);
  return stored.answer;
}
