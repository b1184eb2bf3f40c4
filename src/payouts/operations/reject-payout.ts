import { ValidationFailed } from '../../common/errors';
import { transactionFor, type By } from '../../common/actor';
import { toPayoutView, type PayoutView } from '../dto/payout.view';
import { write } from '../payout-transitions';
import { approverKeyId, lockAwaiting } from './approve-payout';
import type { PayoutDeps } from './payout-deps';

/** An operator's rejection of a payout awaiting approval: final, never sent. */

/**
 * An admin key rejects a payout awaiting approval: `rejected` (final, never sent), the event
 * `payout.rejected` with `rejectedBy: 'operator'` and the reason in its details (a gateway's
 * rejection has `call` and `gatewayStatus` instead).
 */
export async function rejectPayout(
  d: PayoutDeps,
  shopPaymentId: string,
  reason: string,
  by: By,
): Promise<PayoutView> {
  const keyId = approverKeyId(by);
  const why = reason.trim();
  if (why === '') throw new ValidationFailed([{ field: 'reason', message: 'must not be blank' }]);
  return transactionFor(d.dataSource, by, async (m) => {
    const p = await lockAwaiting(d, m, shopPaymentId, 'reject');
    await m.query(
      `INSERT INTO payout_approvals (payout_id, key_id, decision, note) VALUES ($1, $2, 'reject', $3)
       ON CONFLICT (payout_id, key_id) DO UPDATE SET decision = 'reject', note = EXCLUDED.note, created_at = clock_now()`,
      [p.id, keyId, why],
    );
    await write(m, p, 'rejected', 'admin', {
      call: 'reject',
      rejectedBy: 'operator',
      reason: why,
    });
    return toPayoutView(p);
  });
}
