import { ValidationFailed } from '../../common/errors';
import { Amount } from '../../common/money';
import type { InputPayway, InvoiceTryRequest } from '../../gateway/gateway.types';
import { boundsCheckFor, checkConvertedBounds } from '../../payway-config/currency-conversion';
import { checkPaymentAgainstPayway } from '../../payway-config/payway-validation';
import type { CreateInvoiceDto, QuoteInvoiceDto } from '../dto/create-invoice.dto';
import { InvoiceEntity } from '../invoice.entity';
import { pricingFailure } from './gateway-failure';
import type { InvoiceDeps } from './invoice-deps';

/**
 * Quote (`POST /invoices/quote`, invoice/try) and the checks a create shares with it: the payway
 * known and active, the amount within its bounds and the extras its add-on fields
 * (checkPaymentAgainstPayway), and, for an order in another currency than its payway's, the
 * gateway's price held against the payway's bounds (checkConvertedBounds). A refusal of the
 * pricing is the caller's currency choice (pricingFailure). Nothing here writes a row.
 */

export interface QuoteField {
  name: string;
  label: Record<string, string> | null;
  hint: Record<string, string> | null;
  example: string | null;
  regex: string | null;
  prefix: string | null;
}

export interface QuoteView {
  payerPrice: string;
  psCurrency: number;
  paymethodId: number;
  paymethodName: string;
  fields: QuoteField[];
  manual: Record<string, string>;
  warning: Record<string, string>;
  info: Record<string, unknown>;
}

/** An order in another currency than its payway's, priced by the gateway in the payway's. */
export type PaywayPrice = { payerPrice: Amount; psCurrency: number } | null;

/** The invoice/try body: the request builder of a quote and of a create's pricing. */
export function tryRequest(dto: QuoteInvoiceDto): InvoiceTryRequest {
  return {
    shop_order_id: dto.shopOrderId,
    amount: dto.amount,
    currency: dto.currency,
    payway: dto.payway,
    description: dto.description,
  };
}

export async function quoteInvoice(ctx: InvoiceDeps, dto: QuoteInvoiceDto): Promise<QuoteView> {
  const payway = await validateAgainstPayway(ctx, dto, false);
  let r;
  try {
    r = await ctx.gateway.tryInvoice(tryRequest(dto));
  } catch (err) {
    throw pricingFailure(err, dto, payway);
  }
  if (boundsCheckFor(dto.currency, payway.currency) === 'gateway') {
    const errors = checkConvertedBounds({ amount: r.payer_price, currency: r.ps_currency }, payway);
    if (errors.length > 0) throw new ValidationFailed(errors);
  }
  return {
    payerPrice: String(r.payer_price),
    psCurrency: r.ps_currency,
    paymethodId: r.paymethod_id,
    paymethodName: r.paymethod_name,
    fields: Object.entries(r.add_ons_config ?? {}).map(([name, f]) => ({
      name,
      label: f.label ?? null,
      hint: f.comment ?? null,
      example: f.example ?? null,
      regex: f.regex ?? null,
      prefix: f.prefix ?? null,
    })),
    manual: r.manual ?? {},
    warning: r.warning ?? {},
    info: r.info ?? {},
  };
}

/** Payway known and active, amount bounds (exact, same currency) and, on create, the extras. */
export async function validateAgainstPayway(
  ctx: InvoiceDeps,
  dto: QuoteInvoiceDto & { extras?: Record<string, unknown> },
  withExtras: boolean,
): Promise<InputPayway> {
  const payway = (await ctx.payways.findPayway('payment', dto.payway)) as InputPayway | undefined;
  const errors = checkPaymentAgainstPayway(
    {
      payway: dto.payway,
      amount: Amount.parse(dto.amount),
      currency: dto.currency,
      extras: dto.extras,
      checkExtras: withExtras,
      suggestions:
        payway === undefined ? await ctx.payways.closestAliases('payment', dto.payway) : undefined,
    },
    payway,
  );
  if (errors.length > 0) throw new ValidationFailed(errors);
  return payway as InputPayway;
}

/**
 * An order in another currency than its payway's: `invoice/try` prices it in the payway's
 * currency and the payway's bounds are held against that `payer_price` (400 on `amount`, no row
 * written). Null for an order in the payway's own currency, and for a repeat of a create whose
 * row exists (its stored answer or a conflict follows, without another gateway call).
 */
export async function priceInPaywayCurrency(
  ctx: InvoiceDeps,
  dto: CreateInvoiceDto,
  payway: InputPayway,
): Promise<PaywayPrice> {
  if (boundsCheckFor(dto.currency, payway.currency) === 'local') return null;
  const exists = await ctx.dataSource
    .getRepository(InvoiceEntity)
    .existsBy({ shopId: ctx.shopId, shopOrderId: dto.shopOrderId });
  if (exists) return null;
  let r;
  try {
    r = await ctx.gateway.tryInvoice(tryRequest(dto));
  } catch (err) {
    throw pricingFailure(err, dto, payway);
  }
  const errors = checkConvertedBounds({ amount: r.payer_price, currency: r.ps_currency }, payway);
  if (errors.length > 0) throw new ValidationFailed(errors);
  return {
    payerPrice: Amount.fromText(String(r.payer_price)),
    psCurrency: Number(r.ps_currency),
  };
}
