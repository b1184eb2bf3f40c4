import { randomBytes } from 'node:crypto';
import { clock } from '../common/clock';
import {
  addOnsJson,
  Catalogue,
  convert,
  PaymentPayway,
  payerPrice,
  requestedPaymentPayway,
  withinBounds,
} from './payway-catalogue';
import type { Decimal } from './decimal';
import type { OutcomeScenario } from './faults';
import { JsonObject, JsonOut, moneyJson } from './json-text';
import {
  absent,
  invalid,
  maskAccount,
  notUnique,
  refused,
  RequestFields,
} from './protocol';
import { lapseIfExpired, scheduleLapse } from './holds';
import { invoiceRecord, notifyInvoice } from './invoice-record';
import type { CallContext, CallHandler, SandboxRuntime } from './runtime';
import { DELAYS_MS } from './runtime';
import {
  awaitsPayment,
  INVOICE_STATUS,
  Invoice,
  PaymentToken,
} from './sandbox.state';

/**
 * Payments: invoice/try, invoice/create, invoice/hold, invoice/check, invoice/charge,
 * invoice/unhold, and the completion of a payment by the payer, a scenario or a token.
 */

/** Card shown for payments made on the payer page (no card data reaches the sandbox there). */
const PAYER_PAGE_CARD_MASK = '411111******1111';
const INVOICE_LIFETIME_MS = 24 * 3_600_000;
const TOKEN_LIFETIME_MS = 365 * 24 * 3_600_000;

/**
 * Amount and currency of an order, and the amount in the payway's currency: an order in another
 * currency is converted at the catalogue's fixed rate (the real server priced USD on a RUB
 * payway in roubles); the payway's bounds apply to the amount in its own currency.
 */
function orderAmount(
  catalogue: Catalogue,
  fields: RequestFields,
  config: PaymentPayway,
): { amount: Decimal; currency: number; converted: Decimal } {
  const currency = fields.int('currency');
  const amount = fields.amount('amount');
  const converted = withinBounds(convert(catalogue, amount, currency, config.currency), config);
  return { amount, currency, converted };
}

export const invoiceTry: CallHandler = (ctx) => {
  ctx.fields.text('shop_order_id', { max: 255 });
  ctx.fields.optionalText('description', { max: 255 });
  const { config } = requestedPaymentPayway(ctx.rt.catalogue, ctx.fields);
  const { converted } = orderAmount(ctx.rt.catalogue, ctx.fields, config);
  return {
    add_ons_config: addOnsJson(config.add_ons_config),
    payer_price: moneyJson(payerPrice(config, converted)),
    paymethod_id: config.paymethod_id,
    paymethod_name: config.paymethod_name,
    ps_currency: config.currency,
    info: { ...config.info },
    manual: { ...config.manual },
    warning: { ...config.warning },
  };
};

/** Payway add-on fields: each required and matching its pattern. */
function checkAddOns(fields: RequestFields, config: PaymentPayway): void {
  for (const [name, addOn] of Object.entries(config.add_ons_config)) {
    fields.text(name, { max: 255, pattern: new RegExp(addOn.regex) });
  }
}

/** Request fields that are not echoed in `addons`. */
const NOT_ADDONS = new Set([
  'shop_id',
  'shop_order_id',
  'amount',
  'currency',
  'payway',
  'sign',
  'payment_token',
]);

function addonsOf(body: JsonObject): Record<string, string> {
  const addons: Record<string, string> = {};
  for (const [k, v] of Object.entries(body))
    if (typeof v === 'string' && !NOT_ADDONS.has(k)) addons[k] = v;
  return addons;
}

function luhnValid(digits: string): boolean {
  let sum = 0;
  [...digits].reverse().forEach((ch, i) => {
    let d = Number(ch);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  });
  return sum % 10 === 0;
}

/** Checks card data and returns its masked number; the number and CVV go no further. */
function cardMask(fields: RequestFields, config: PaymentPayway): string | undefined {
  const card = fields.optionalObject('card');
  if (card === undefined) return undefined;
  if (!config.card_data) throw invalid(`payway ${config.alias} does not accept card data`);
  const c = new RequestFields(card);
  const number = c.text('number', { pattern: /^\d{12,19}$/ });
  if (!luhnValid(number)) throw invalid('card.number is not a valid card number');
  c.optionalText('cardholder', { max: 100 });
  c.text('expiry_month', { pattern: /^(0[1-9]|1[0-2])$/ });
  c.text('expiry_year', { pattern: /^\d{2}$/ });
  c.text('cvv', { pattern: /^\d{3,4}$/ });
  return maskAccount(number);
}

function usableToken(ctx: CallContext, text: string): PaymentToken {
  const token = ctx.rt.state.tokens.get(text);
  if (
    token === undefined ||
    token.shopId !== ctx.shopId ||
    token.expiresAt.getTime() < clock.now()
  ) {
    throw invalid('payment_token is not valid');
  }
  return token;
}

function createInvoice(ctx: CallContext, twoStep: boolean): JsonOut {
  const { fields, rt } = ctx;
  const shopOrderId = fields.text('shop_order_id', { max: 255 });
  const { choice, config } = requestedPaymentPayway(rt.catalogue, fields);
  const { amount, currency, converted } = orderAmount(rt.catalogue, fields, config);
  const description = fields.optionalText('description', { max: 255 }) ?? '';
  const urls = {
    success: fields.optionalUrl('success_url'),
    failed: fields.optionalUrl('failed_url'),
    callback: fields.optionalUrl('callback_url'),
    callbackRejected: fields.optionalUrl('callback_rejected_url'),
  };
  fields.optionalText('client_ip', { max: 64 });
  checkAddOns(fields, config);
  const mask = cardMask(fields, config);
  const clientInfo = fields.optionalObject('client_info');
  const issueToken = fields.optionalBool('issue_payment_token') ?? false;
  const tokenText = fields.optionalText('payment_token', { max: 255 });
  if (twoStep && !config.two_step)
    throw invalid(`payway ${config.alias} does not support two-step payment`);
  if ((issueToken || tokenText !== undefined) && !config.tokens) {
    throw invalid(`payway ${config.alias} does not support payment tokens`);
  }
  const token = tokenText === undefined ? undefined : usableToken(ctx, tokenText);
  if (rt.state.findInvoiceByOrder(ctx.shopId, shopOrderId) !== undefined)
    throw notUnique('shop_order_id', shopOrderId);

  const now = clock.date();
  const invoice: Invoice = {
    id: rt.state.newId(),
    shopId: ctx.shopId,
    shopOrderId,
    payway: choice,
    paywayConfig: config,
    amount,
    currency,
    clientPrice: payerPrice(config, converted),
    description,
    twoStep,
    status: INVOICE_STATUS.CREATED,
    errorCode: 0,
    urls,
    addons: addonsOf(fields.body),
    cardMask: mask ?? token?.accountMask,
    clientInfo,
    issueToken,
    chargedWithToken: token?.token,
    needs3ds: mask !== undefined,
    created: now,
    updated: now,
    expiresAt: new Date(now.getTime() + INVOICE_LIFETIME_MS),
  };
  rt.state.invoices.set(invoice.id, invoice);
  return startPayment(ctx, invoice);
}

/** Scenarios that complete a payment at creation, without the payer, and how. */
const AT_ONCE: Partial<Record<OutcomeScenario, PayerAction>> = {
  success: 'pay',
  refund_failed: 'pay',
  rejected: 'decline',
  rejected_with_callback: 'decline',
  create_declined_with_callback: 'decline',
};

/**
 * What follows creation: a payer-less completion (at once for the scenarios of AT_ONCE; a little
 * later for a token charge or after a nonfatal answer; never with pending) or a redirect of the
 * payer. create_declined_with_callback records and notifies the rejection, then refuses the call.
 */
function startPayment(ctx: CallContext, invoice: Invoice): JsonOut {
  const { rt } = ctx;
  const scenarios = invoice.payway.scenarios;
  const atOnce = [...scenarios].map((s) => AT_ONCE[s]).find((a) => a !== undefined);
  if (atOnce !== undefined) {
    completePayment(rt, invoice, atOnce);
    if (scenarios.has('create_declined_with_callback'))
      throw refused('the payment system declined to create the payment');
    return creationResult(invoice, null);
  }
  if (invoice.chargedWithToken !== undefined || ctx.fault === 'nonfatal') {
    if (!scenarios.has('pending')) {
      const realMs = DELAYS_MS.autoComplete * rt.state.settings.timeScale;
      invoice.completesAt = new Date(clock.now() + realMs);
      scheduleCompletion(rt, invoice);
    }
    return creationResult(invoice, null);
  }
  invoice.status = INVOICE_STATUS.AWAITING_PAYER;
  return creationResult(invoice, payerRedirect(rt, invoice));
}

/** Schedules the payer-less completion due at `completesAt` (at once when overdue, after a restart). */
export function scheduleCompletion(rt: SandboxRuntime, invoice: Invoice): void {
  if (invoice.completesAt === undefined) return;
  rt.scheduler.afterReal(invoice.completesAt.getTime() - clock.now(), () => {
    completePayment(rt, invoice, 'pay');
  });
}

export interface Redirect {
  method: 'GET' | 'POST';
  url: string;
  data: Record<string, string>;
}

/**
 * The redirect in the create answer. A card payway answers like the real one: `GET` to a checkout
 * URL with `data.session_id`; the checkout URL forwards the payer to the step below. A wallet
 * sends the payer to the payer page by GET; `post_redirect` by a POST form.
 */
function payerRedirect(rt: SandboxRuntime, invoice: Invoice): Redirect {
  if (invoice.paywayConfig.kind === 'card' && !invoice.payway.scenarios.has('post_redirect')) {
    invoice.sessionId ??= `cs_${randomBytes(12).toString('hex')}`;
    return {
      method: 'GET',
      url: `${rt.origin}/sandbox/checkout`,
      data: { session_id: invoice.sessionId },
    };
  }
  return payerStep(rt, invoice);
}

/**
 * Where the payer goes next: card payments collect browser information first when the shop sent
 * no `client_info` (spec rule 7), then the 3-D Secure page when card data was sent, then the
 * payer page. Card payways post the step (POST), wallets redirect by GET.
 */
export function payerStep(rt: SandboxRuntime, invoice: Invoice): Redirect {
  const data = { invoice: String(invoice.id), lang: 'en' };
  if (invoice.paywayConfig.kind === 'wallet') {
    return { method: 'GET', url: `${rt.origin}/sandbox/pay/${invoice.id}`, data };
  }
  const step = invoice.clientInfo === undefined ? 'browser-info' : invoice.needs3ds ? '3ds' : 'pay';
  return { method: 'POST', url: `${rt.origin}/sandbox/${step}/${invoice.id}`, data };
}

function creationResult(invoice: Invoice, redirect: Redirect | null): JsonOut {
  return {
    id: invoice.id,
    method: redirect?.method ?? null,
    url: redirect?.url ?? null,
    data: redirect?.data ?? {},
  };
}

/** Browser information collected on the payer's way (spec rule 7). */
export function recordBrowserInfo(invoice: Invoice, info: Record<string, string>): void {
  invoice.clientInfo = {
    ...info,
    browser_javascript_enabled: info.browser_javascript_enabled === 'true',
  };
}

export type PayerAction = 'pay' | 'decline';

/**
 * Completes a payment that still awaits it: paid (held for two-step) or declined. Credits or
 * holds the funds, issues a token when asked, and notifies. False when it had completed before.
 */
export function completePayment(
  rt: SandboxRuntime,
  invoice: Invoice,
  action: PayerAction,
): boolean {
  if (!awaitsPayment(invoice.status)) return false;
  const now = clock.date();
  if (action === 'pay') {
    invoice.status = invoice.twoStep ? INVOICE_STATUS.HELD : INVOICE_STATUS.PAID;
    if (invoice.paywayConfig.kind === 'card') invoice.cardMask ??= PAYER_PAGE_CARD_MASK;
    if (invoice.issueToken && invoice.chargedWithToken === undefined) issueToken(rt, invoice, now);
    if (invoice.twoStep) {
      rt.state.hold(invoice.shopId, invoice.currency, invoice.amount);
      invoice.expiresAt = new Date(now.getTime() + rt.state.settings.holdLifetimeS * 1000);
      scheduleLapse(rt, invoice);
    }
    else rt.state.credit(invoice.shopId, invoice.currency, invoice.amount);
  } else {
    invoice.status = INVOICE_STATUS.REJECTED;
  }
  invoice.needs3ds = false;
  invoice.updated = now;
  invoice.processed = now;
  notifyInvoice(rt, invoice);
  return true;
}

function issueToken(rt: SandboxRuntime, invoice: Invoice, now: Date): void {
  const token: PaymentToken = {
    token: `tok_${randomBytes(16).toString('hex')}`,
    shopId: invoice.shopId,
    paywayAlias: invoice.paywayConfig.alias,
    accountMask: invoice.cardMask ?? PAYER_PAGE_CARD_MASK,
    expiresAt: new Date(now.getTime() + TOKEN_LIFETIME_MS),
    cardInfo: {
      issuing_country: 'RU',
      issuing_bank: 'Sandbox Bank',
      payment_system: 'VISA',
      funding_source: 'CREDIT',
      payment_system_product: 'Visa Classic',
    },
  };
  rt.state.tokens.set(token.token, token);
  invoice.issuedToken = token.token;
}

export const invoiceCreate: CallHandler = (ctx) => createInvoice(ctx, false);
export const invoiceHold: CallHandler = (ctx) => createInvoice(ctx, true);

export const invoiceCheck: CallHandler = (ctx) => {
  const shopOrderId = ctx.fields.text('shop_order_id', { max: 255 });
  ctx.fields.now();
  const invoice = ctx.rt.state.findInvoiceByOrder(ctx.shopId, shopOrderId);
  if (invoice === undefined) throw absent('Invoice');
  lapseIfExpired(ctx.rt, invoice);
  return invoiceRecord(ctx.rt, invoice, true);
};
