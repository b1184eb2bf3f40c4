import { raiseAttention } from '../../common/attention';
import { NotFound } from '../../common/errors';
import { sameSecret } from '../../common/sha256';
import { InvoiceEntity } from '../invoice.entity';
import { isFinal } from '../invoice.state';
import { payerStep as stepOf, statusPage, type PayerStep } from '../redirect-page';
import type { InvoiceDeps } from './invoice-deps';

/**
 * The step of `/pay/{shopOrderId}?t=`: 404 for a wrong token, no invoice or no redirect; a
 * status page once the invoice is final (or held); the redirect otherwise. A redirect address
 * that is not http(s) is never sent to the browser: the invoice is flagged for an operator.
 */
export async function payerStep(
  ctx: InvoiceDeps,
  shopOrderId: string,
  token: string | undefined,
  nonce: string,
): Promise<PayerStep> {
  const inv = await ctx.dataSource
    .getRepository(InvoiceEntity)
    .findOneBy({ shopId: ctx.shopId, shopOrderId });
  // The same answer for every miss, so the page says nothing about which invoices exist.
  const notFound = new NotFound('Payment page', shopOrderId);
  if (!inv || token === undefined || !sameSecret(token, inv.payToken)) throw notFound;
  if (isFinal(inv.status) || inv.status === 'held') {
    return {
      kind: 'status',
      html: statusPage(inv.status === 'succeeded' || inv.status === 'held'),
    };
  }
  if (!inv.redirect) throw notFound;
  const step = stepOf(inv.redirect, nonce);
  if (step.kind === 'blocked') await flagUnsafeRedirect(ctx, inv);
  return step;
}

async function flagUnsafeRedirect(ctx: InvoiceDeps, inv: InvoiceEntity): Promise<void> {
  const scheme = inv.redirect?.url.split(':')[0].slice(0, 20) ?? '';
  await ctx.dataSource.transaction((m) =>
    raiseAttention(
      m,
      { object: 'invoice', id: inv.id, shopId: inv.shopOrderId, status: inv.status },
      'unsafe_redirect',
      `the payer redirect address is not http(s) (scheme ${scheme})`,
      'gateway',
      { scheme },
    ),
  );
}
