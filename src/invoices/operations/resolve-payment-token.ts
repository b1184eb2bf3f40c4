import { In } from 'typeorm';
import { SealedValueUnreadable, ValidationFailed } from '../../common/errors';
import { SealError } from '../../common/key-ring';
import type { CreateInvoiceDto } from '../dto/create-invoice.dto';
import { InvoiceEntity, type PaymentTokenInfo } from '../invoice.entity';
import { PAYMENT_TOKEN_INDEX, revealPaymentToken } from '../payment-token';
import { log, type InvoiceDeps } from './invoice-deps';

/**
 * `paymentTokenFrom`: the token the named earlier invoice of this shop was issued, taken from
 * that invoice's row (the caller never sees it). A separate step before create, so create sees
 * a request with `paymentToken` as before; the fingerprint keeps `paymentTokenFrom`.
 */
export async function resolvePaymentTokenFrom(
  ctx: InvoiceDeps,
  dto: CreateInvoiceDto,
): Promise<CreateInvoiceDto> {
  if (dto.paymentTokenFrom === undefined) return dto;
  const field = 'paymentTokenFrom';
  if (dto.paymentToken !== undefined) {
    throw new ValidationFailed([{ field, message: 'cannot be combined with paymentToken' }]);
  }
  const source = await ctx.dataSource
    .getRepository(InvoiceEntity)
    .findOneBy({ shopId: ctx.shopId, shopOrderId: dto.paymentTokenFrom });
  let token: string | null;
  try {
    token = source ? revealPaymentToken(ctx.keys, source) : null;
  } catch (e) {
    if (!(e instanceof SealError)) throw e;
    log.error({ invoiceRowId: source?.id }, 'stored payment token cannot be opened');
    throw new SealedValueUnreadable(field, 'payment token of that invoice');
  }
  if (!token) {
    throw new ValidationFailed([
      { field, message: 'names no invoice of this shop that was issued a payment token' },
    ]);
  }
  return Object.assign(
    Object.create(Object.getPrototypeOf(dto) as object) as CreateInvoiceDto,
    dto,
    {
      paymentToken: token,
    },
  );
}

/** The shown facts (masked account, expiry) of a token an earlier invoice of ours received. */
export async function shownInfoOfToken(
  ctx: InvoiceDeps,
  token: string,
): Promise<PaymentTokenInfo | null> {
  // By blind index under every key of the ring: a rotation in progress holds both.
  const source = await ctx.dataSource.getRepository(InvoiceEntity).findOne({
    where: {
      shopId: ctx.shopId,
      paymentTokenHash: In(ctx.keys.blindIndexes(token, PAYMENT_TOKEN_INDEX)),
    },
    order: { createdAt: 'DESC' },
  });
  return source?.paymentTokenInfo ?? null;
}
