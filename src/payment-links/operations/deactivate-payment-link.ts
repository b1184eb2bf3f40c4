import { transactionFor, type By } from '../../common/actor';
import { clock } from '../../common/clock';
import { InvalidState } from '../../common/errors';
import type { PaymentLinkView } from '../dto/payment-link.view';
import { isDue, publicIdOf } from '../payment-link.rules';
import { findLink, moveLink, viewsOf, type PaymentLinkDeps } from './payment-link-deps';

/**
 * `POST /payment-links/{id}/deactivate`: an active link is `deactivated` (event
 * `payment_link.deactivated`); a repeat answers the link as it is, with no second event. A paid
 * or expired link is final: 409. An invoice already begun may still be paid (its payment is not
 * undone); no new attempt starts.
 */
export async function deactivatePaymentLink(
  deps: PaymentLinkDeps,
  publicId: string,
  by: By,
): Promise<PaymentLinkView> {
  return transactionFor(deps.dataSource, by, async (m) => {
    const link = await findLink(deps, m, publicId, true);
    const cause = by?.role === 'admin' ? 'admin' : 'api';
    if (isDue(link, clock.now()))
      await moveLink(deps, m, link, 'expired', 'reconciliation', { expiresAt: link.expiresAt });
    if (link.status === 'active') await moveLink(deps, m, link, 'deactivated', cause);
    else if (link.status !== 'deactivated')
      throw new InvalidState('Payment link', publicIdOf(link.id), link.status, 'deactivate');
    return (await viewsOf(m, [link], deps.shopId, deps.config.publicBaseUrl))[0];
  });
}
