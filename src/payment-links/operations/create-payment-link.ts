import { transactionFor, type By } from '../../common/actor';
import { clock } from '../../common/clock';
import { IdempotencyConflict, ValidationFailed, type FieldError } from '../../common/errors';
import { differingFields, differs } from '../../common/idempotency';
import { instantOf } from '../../common/date-time';
import { metadataOf } from '../../common/metadata';
import { Amount, moneyText } from '../../common/money';
import type { InputPayway, PaywayGroup } from '../../gateway/gateway.types';
import type { CreatePaymentLinkDto } from '../dto/create-payment-link.dto';
import type { PaymentLinkView } from '../dto/payment-link.view';
import { checkNamedPayways, defaultPayways, expiryProblem, publicIdOf } from '../payment-link.rules';
import { linkFromRow, viewsOf, type PaymentLinkDeps } from './payment-link-deps';

/** A create's answer: the link, and whether an earlier create with the same key made it. */
export interface LinkCreated {
  link: PaymentLinkView;
  replayed: boolean;
}

/** The fields a repeat is compared on (amounts by value, the expiry as an instant). */
function requestFacts(dto: CreatePaymentLinkDto, amount: Amount, expiresAt: Date | null): Record<string, unknown> {
  return {
    // By value: "150.0" and "150.00" are one amount.
    amount: moneyText(amount, dto.currency),
    currency: dto.currency,
    description: dto.description,
    payways: dto.payways ?? null,
    expiresAt: expiresAt?.toISOString() ?? null,
    reusable: dto.reusable ?? false,
    metadata: metadataOf(dto.metadata),
  };
}

/**
 * `POST /payment-links` (and the console's form): the body's fields checked by the invoice
 * create's validators (the DTO), its payways as an invoice create checks its payway (known,
 * active, the amount within its bounds), the expiry in the future; then one row and its
 * `payment_link.created` event in one transaction. Nothing is written on a refusal. With an
 * `Idempotency-Key` the link is made once (a unique index): a repeat with the same fields gets the
 * link as it is now, one with other fields is 409 naming them.
 */
export async function createPaymentLink(
  deps: PaymentLinkDeps,
  dto: CreatePaymentLinkDto,
  by: By,
  idempotencyKey?: string,
): Promise<LinkCreated> {
  const amount = Amount.parse(dto.amount);
  const expiresAt = dto.expiresAt !== undefined ? (instantOf(dto.expiresAt, 'time') ?? null) : null;
  const facts = requestFacts(dto, amount, expiresAt);
  if (idempotencyKey !== undefined) {
    const earlier = await repeatOf(deps, idempotencyKey, facts);
    if (earlier !== null) return earlier;
  }
  const errors: FieldError[] = [];
  const expiry = expiryProblem(expiresAt, clock.now());
  if (expiry) errors.push(expiry);
  const payways = await offeredPayways(deps, dto, amount, errors);
  if (errors.length > 0) throw new ValidationFailed(errors);
  const made = await transactionFor(deps.dataSource, by, async (m) => {
    const rows = (await m.query(
      `INSERT INTO payment_links (shop_id, amount, currency, description, payways, reusable, expires_at, metadata, created_by, idempotency_key, request_facts)
       VALUES ($1, $2::numeric, $3, $4, $5::jsonb, $6, $7, $8::jsonb, $9, $10, $11::jsonb)
       ON CONFLICT DO NOTHING RETURNING *`,
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
        idempotencyKey ?? null,
        JSON.stringify(facts),
      ],
    )) as Record<string, unknown>[];
    // Another create with this key committed first: its link is the answer.
    if (rows.length === 0) return null;
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
  if (made !== null) return { link: made, replayed: false };
  const earlier = await repeatOf(deps, idempotencyKey!, facts);
  if (earlier === null) throw new Error('payment link: the key conflicted, yet no link holds it');
  return earlier;
}

/** The link an earlier create with this key made (as it is now), or a 409 when its fields differ. */
async function repeatOf(
  deps: PaymentLinkDeps,
  key: string,
  facts: Record<string, unknown>,
): Promise<LinkCreated | null> {
  const m = deps.dataSource.manager;
  const rows = (await m.query(
    `SELECT * FROM payment_links WHERE shop_id = $1 AND idempotency_key = $2`,
    [deps.shopId, key],
  )) as Record<string, unknown>[];
  if (rows.length === 0) return null;
  const link = linkFromRow(m, rows[0]);
  const differing = differingFields(link.requestFacts ?? {}, facts);
  if (differing.length > 0) throw new IdempotencyConflict('Idempotency-Key', key, differs(differing));
  return { link: (await viewsOf(m, [link], deps.shopId, deps.config.publicBaseUrl))[0], replayed: true };
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
