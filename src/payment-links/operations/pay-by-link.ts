import { clock } from '../../common/clock';
import { alphabeticCurrency } from '../../common/currency';
import {
  DomainError,
  IdempotencyConflict,
  NotFound,
  RequestInProgress,
  ValidationFailed,
  type FieldError,
} from '../../common/errors';
import { moneyText } from '../../common/money';
import { randomToken } from '../../common/random-token';
import { createValidationPipe } from '../../common/validation';
import type { AddOnField, InputPayway } from '../../gateway/gateway.types';
import { CreateInvoiceDto } from '../../invoices/dto/create-invoice.dto';
import { payUrlOf, type InvoiceView } from '../../invoices/invoice.view';
import { PaymentLinkSlotTaken } from '../../invoices/invoices.service';
import type { PaymentLinkEntity } from '../payment-link.entity';
import {
  attemptOrderId,
  linkUrl,
  payRefusal,
  publicIdOf,
  rowIdOf,
} from '../payment-link.rules';
import {
  ATTEMPT_BY_TOKEN,
  LOCK_LINK_BY_ID,
  NEW_ATTEMPT,
  PAID_INVOICE,
  SLOT_HOLDER,
} from '../payment-link-sql';
import { expireIfDue } from './expire-payment-links';
import { findLink, linkFromRow, log, type PaymentLinkDeps } from './payment-link-deps';

/**
 * The payer's page of a link (`/pay/l/{id}`, no key): what it shows, and what a sent form does.
 * The form's fields are checked exactly as `POST /invoices` checks a body (the same pipe, then
 * the payway's rules), then one attempt is numbered under the link's row lock (its token makes a
 * double submit the same attempt) and the invoice `<link id>-<n>` is made by the invoice create
 * itself. A single-use link's invoice takes the link's slot: a second attempt while one may still
 * be paid is refused by the database, not by a check made before.
 */

/** What the page shows of the link: never its metadata, its invoices or anything of another link. */
export interface LinkSummary {
  id: string;
  description: string;
  amount: string;
  currencyCode: string | null;
  currency: number;
}

export interface FieldView {
  name: string;
  label: string;
  hint: string | null;
  example: string | null;
  value: string;
}

export type LinkPage =
  | { kind: 'not_found' }
  | { kind: 'choose'; link: LinkSummary; payways: string[]; errors: FieldError[] }
  | {
      kind: 'fields';
      link: LinkSummary;
      payway: string;
      fields: FieldView[];
      token: string;
      errors: FieldError[];
      canChoose: boolean;
    }
  | {
      kind: 'receipt';
      link: LinkSummary;
      paid: { shopOrderId: string; amount: string; paidAt: string | null };
    }
  | { kind: 'gone'; link: LinkSummary; status: 'expired' | 'deactivated' }
  | { kind: 'in_progress'; link: LinkSummary; continueUrl: string | null }
  | { kind: 'failed'; link: LinkSummary; status: number; message: string }
  | { kind: 'go'; location: string };

/** What the payer's form sends. */
export interface PayForm {
  payway: string;
  token: string;
  extras: Record<string, string>;
}

const TOKEN = /^[A-Za-z0-9_-]{16,64}$/;
const pipe = createValidationPipe();

function summaryOf(link: PaymentLinkEntity): LinkSummary {
  return {
    id: publicIdOf(link.id),
    description: link.description,
    amount: moneyText(link.amount, link.currency),
    currency: link.currency,
    currencyCode: alphabeticCurrency(link.currency),
  };
}

/** The link, expired first when its time has come; null for anything that is no link of ours. */
async function linkOf(deps: PaymentLinkDeps, publicId: string): Promise<PaymentLinkEntity | null> {
  if (rowIdOf(publicId) === null) return null;
  try {
    const link = await findLink(deps, deps.dataSource.manager, publicId);
    return (await expireIfDue(deps, link)) ?? link;
  } catch (e) {
    if (e instanceof NotFound) return null;
    throw e;
  }
}

/** The page of a link that cannot take a payment now (paid, expired, deactivated, one in progress). */
async function refusedPage(
  deps: PaymentLinkDeps,
  link: PaymentLinkEntity,
): Promise<LinkPage | null> {
  const refusal = payRefusal(link, clock.now());
  const summary = summaryOf(link);
  if (refusal === 'paid') {
    const rows = (await deps.dataSource.query(PAID_INVOICE, [link.id])) as Array<{
      shop_order_id: string;
      amount: string;
      currency: number;
      processed_at: Date | null;
    }>;
    const r = rows[0];
    return {
      kind: 'receipt',
      link: summary,
      paid: {
        shopOrderId: r?.shop_order_id ?? '',
        amount: r ? moneyText(r.amount, r.currency) : summary.amount,
        paidAt: r?.processed_at ? r.processed_at.toISOString() : null,
      },
    };
  }
  if (refusal !== null) return { kind: 'gone', link: summary, status: refusal };
  if (link.reusable) return null;
  const holder = (await deps.dataSource.query(SLOT_HOLDER, [link.id])) as Array<{
    shop_order_id: string;
    status: string;
    pay_token: string;
    has_redirect: boolean;
  }>;
  if (holder.length === 0) return null;
  const h = holder[0];
  return {
    kind: 'in_progress',
    link: summary,
    // The same payer coming back (a closed tab) goes on with the payment already begun.
    continueUrl:
      h.has_redirect && h.status !== 'succeeded'
        ? payUrlOf(deps.config.publicBaseUrl, h.shop_order_id, h.pay_token)
        : null,
  };
}

/** `GET /pay/l/{id}[?payway=]`: the link's page. */
export async function showLink(
  deps: PaymentLinkDeps,
  publicId: string,
  payway: string | undefined,
): Promise<LinkPage> {
  const link = await linkOf(deps, publicId);
  if (link === null) return { kind: 'not_found' };
  const refused = await refusedPage(deps, link);
  if (refused !== null) return refused;
  const chosen = payway !== undefined && link.payways.includes(payway) ? payway : onlyPayway(link);
  if (chosen === null)
    return { kind: 'choose', link: summaryOf(link), payways: link.payways, errors: [] };
  return fieldsPage(deps, link, chosen, {}, [], randomToken(24));
}

function onlyPayway(link: PaymentLinkEntity): string | null {
  return link.payways.length === 1 ? link.payways[0] : null;
}

async function fieldsPage(
  deps: PaymentLinkDeps,
  link: PaymentLinkEntity,
  payway: string,
  values: Record<string, string>,
  errors: FieldError[],
  token: string,
): Promise<LinkPage> {
  const config = (await deps.payways.findPayway('payment', payway)) as InputPayway | undefined;
  const addOns: Record<string, AddOnField> = config?.add_ons_config ?? {};
  return {
    kind: 'fields',
    link: summaryOf(link),
    payway,
    fields: Object.entries(addOns).map(([name, f]) => ({
      name,
      label: textOf(f.label) ?? name,
      hint: textOf(f.comment),
      example: typeof f.example === 'string' ? f.example : null,
      value: values[name] ?? '',
    })),
    token,
    errors,
    canChoose: link.payways.length > 1,
  };
}

/** A configuration text (language → text): English, else Russian, else the first. */
function textOf(m: Record<string, string> | undefined): string | null {
  if (!m || typeof m !== 'object') return null;
  const v = m.en ?? m.ru ?? Object.values(m)[0];
  return typeof v === 'string' ? v : null;
}

/** `POST /pay/l/{id}`: the payer's form, checked, numbered, made into an invoice. */
export async function payByLink(
  deps: PaymentLinkDeps,
  publicId: string,
  form: PayForm,
): Promise<LinkPage> {
  const link = await linkOf(deps, publicId);
  if (link === null) return { kind: 'not_found' };
  const refused = await refusedPage(deps, link);
  if (refused !== null) return refused;
  const summary = summaryOf(link);
  if (!link.payways.includes(form.payway))
    return {
      kind: 'choose',
      link: summary,
      payways: link.payways,
      errors: [{ field: 'payway', message: 'is not offered by this link: choose one below' }],
    };
  if (!TOKEN.test(form.token))
    return { kind: 'failed', link: summary, status: 400, message: 'This form is out of date. Reload the page and try again.' };
  // Empty inputs are fields not given: a required one is then "is required", as on the API.
  const extras = Object.fromEntries(Object.entries(form.extras).filter(([, v]) => v !== ''));
  const plain = {
    shopOrderId: attemptOrderId(summary.id, 0),
    amount: summary.amount,
    currency: link.currency,
    payway: form.payway,
    description: link.description,
    ...(Object.keys(extras).length > 0 ? { extras } : {}),
    ...(Object.keys(link.metadata ?? {}).length > 0 ? { metadata: link.metadata } : {}),
    successUrl: linkUrl(deps.config.publicBaseUrl, summary.id),
    failedUrl: linkUrl(deps.config.publicBaseUrl, summary.id),
  };
  let dto: CreateInvoiceDto;
  try {
    dto = (await pipe.transform(plain, { type: 'body', metatype: CreateInvoiceDto, data: '' })) as CreateInvoiceDto;
    await deps.invoices.checkCreate(dto);
  } catch (e) {
    if (!(e instanceof ValidationFailed)) throw e;
    return fieldsPage(deps, link, form.payway, form.extras, e.errors, form.token);
  }
  const n = await numberAttempt(deps, link.id, form.token);
  if (n === null) return (await refusedPage(deps, (await linkOf(deps, publicId))!)) ?? { kind: 'not_found' };
  dto.shopOrderId = attemptOrderId(summary.id, n);
  try {
    const answer = await deps.invoices.create(dto, undefined, {
      paymentLinkId: link.id,
      singleUse: !link.reusable,
    });
    const invoice = answer.body as InvoiceView;
    log.info({ link: summary.id, shopOrderId: dto.shopOrderId, status: invoice.status }, 'payment link attempt');
    return { kind: 'go', location: invoice.payUrl ?? linkUrl(deps.config.publicBaseUrl, summary.id) };
  } catch (e) {
    if (e instanceof PaymentLinkSlotTaken)
      return (await refusedPage(deps, link)) ?? { kind: 'in_progress', link: summary, continueUrl: null };
    if (e instanceof RequestInProgress) return { kind: 'in_progress', link: summary, continueUrl: null };
    if (e instanceof ValidationFailed)
      return fieldsPage(deps, link, form.payway, form.extras, e.errors, form.token);
    if (e instanceof IdempotencyConflict)
      return { kind: 'failed', link: summary, status: 409, message: 'This form was already sent with other values. Reload the page and try again.' };
    if (e instanceof DomainError)
      return { kind: 'failed', link: summary, status: e.status >= 500 ? 502 : 409, message: 'The payment could not be started. Please try again later.' };
    throw e;
  }
}

/**
 * The attempt's number: the one its token already has (a double submit), or the next one, under
 * the link's row lock and only while the link is active. Null when the link cannot be paid now.
 */
async function numberAttempt(deps: PaymentLinkDeps, linkId: string, token: string): Promise<number | null> {
  return deps.dataSource.transaction(async (m) => {
    const rows = (await m.query(LOCK_LINK_BY_ID, [linkId, deps.shopId])) as Record<string, unknown>[];
    const link = linkFromRow(m, rows[0]);
    if (payRefusal(link, clock.now()) !== null) return null;
    const known = (await m.query(ATTEMPT_BY_TOKEN, [linkId, token])) as Array<{ n: number }>;
    if (known.length > 0) return known[0].n;
    const made = (await m.query(NEW_ATTEMPT, [linkId, token])) as Array<{ n: number }>;
    return made[0].n;
  });
}
