import { transactionFor, type By } from '../../common/actor';
import { clock } from '../../common/clock';
import { ValidationFailed, type FieldError } from '../../common/errors';
import { instantOf } from '../../common/date-time';
import { metadataOf } from '../../common/metadata';
import { Amount } from '../../common/money';
import type { InputPayway, PaywayGroup } from '../../gateway/gateway.types';
import type { CreatePaymentLinkDto } from '../dto/create-payment-link.dto';
import type { PaymentLinkView } from '../dto/payment-link.view';
import { checkNamedPayways, defaultPayways, expiryProblem, publicIdOf } from '../payment-link.rules';
import { linkFromRow, viewsOf, type PaymentLinkDeps } from './payment-link-deps';

/**
 * `POST /payment-links` (and the console's form): the body's fields checked by the invoice
 * create's validators (the DTO), its payways as an invoice create checks its payway (known,
 * active, the amount within its bounds), the expiry in the future; then one row and its
 * `payment_link.created` event in one transaction. Nothing is written on a refusal.
 */
export async function createPaymentLink(
  deps: PaymentLinkDeps,
  dto: CreatePaymentLinkDto,
  by: By,
): Promise<PaymentLinkView> {
  const amount = Amount.parse(dto.amount);
  const expiresAt = dto.expiresAt !== undefined ? (instantOf(dto.expiresAt, 'time') ?? null) : null;
  const errors: FieldError[] = [];
  const expiry = expiryProblem(expiresAt, clock.now());
  if (expiry) errors.push(expiry);
  const payways = await offeredPayways(deps, dto, amount, errors);
  if (errors.length > 0) throw new ValidationFailed(errors);
  return transactionFor(deps.dataSource, by, async (m) => {
    const rows = (await m.query(
      `INSERT INTO payment_links (shop_id, amount, currency, description, payways, reusable, expires_at, metadata, created_by)
       VALUES ($1, $2::numeric, $3, $4, $5::jsonb, $6, $7, $8::jsonb, $9) RETURNING *`,
      [
        deps.shopId,
        amount.toString(),
        dto.currency,
        dto.description,
        JSON.stringify(payways),
        dto.reusable ?? false,
        expiresAt,
        JSON.stringify(metadataOf(dto.metadata)),
        by?.keyId ?? null,
      ],
    )) as Record<string, unknown>[];
    const link = linkFromRow(m, rows[0]);
    await deps.audit.record(m, {
      entityType: 'payment_link',
      entityId: publicIdOf(link.id),
      rowId: link.id,
      fromStatus: null,
      toStatus: 'active',
      cause: by?.role === 'admin' ? 'admin' : 'api',
      notice: 'created',
    });
    return (await viewsOf(m, [link], deps.shopId, deps.config.publicBaseUrl))[0];
  });
}

/** The payways named (each checked), or by default the active ones of the currency that take the amount. */
async function offeredPayways(
  deps: PaymentLinkDeps,
  dto: CreatePaymentLinkDto,
  amount: Amount,
  errors: FieldError[],
): Promise<string[]> {
  if (dto.payways !== undefined) {
    const found = await Promise.all(
      dto.payways.map((p) => deps.payways.findPayway('payment', p) as Promise<InputPayway | undefined>),
    );
    const suggestions = await Promise.all(
      dto.payways.map((p, i) =>
        found[i] === undefined ? deps.payways.closestAliases('payment', p) : undefined,
      ),
    );
    errors.push(...checkNamedPayways(dto.payways, found, amount, dto.currency, suggestions));
    return [...dto.payways];
  }
  const { groups } = await deps.payways.list('payment');
  const offered = defaultPayways(groups as PaywayGroup<InputPayway>[], amount, dto.currency);
  if (offered.length === 0)
    errors.push({
      field: 'amount',
      message: `no active payway of currency ${dto.currency} takes this amount; GET /api/v1/payways?direction=payment lists them`,
    });
  return offered;
}
