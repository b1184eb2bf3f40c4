import { transactionFor, type By } from '../../common/actor';
import { DataSource } from 'typeorm';
import { raiseAttention, resolveAttention } from '../../common/attention';
import { GatewayError } from '../../gateway';
import { PayoutEntity } from '../payout.entity';
import { readPayoutRecord } from '../payout.rules';
import { isFinal } from '../payout.state';
import { NotFound } from '../../common/errors';
import { toPayoutView, type PayoutView } from '../dto/payout.view';
import { askStatus, findPayout, lockPayout, type PayoutDeps } from './payout-deps';
import { applyStatus, checkOnce } from './poll-payout';

/**
 * Recheck: an admin's reconcile and the attention `recheck` ask the gateway now and apply the
 * answer through the same rules as the poller (the record read by payout.rules.ts
 * readPayoutRecord).
 */

/**
 * Admin recheck of a final payout, flagged or not (as an invoice's and a refund's): its status
 * asked now and applied through the record rule (applyRecord, through readPayoutRecord): a
 * record that is not ours is a mismatch, another status (final or not) a contradiction, and a
 * succeeded payout the gateway has no record of is one too; each is flagged, the money state
 * kept. The flag is cleared only when the gateway's record is ours and says the same status.
 */
export async function recheckFinal(
  d: PayoutDeps,
  dataSource: DataSource,
  id: string,
  by: By,
): Promise<void> {
  const p = await dataSource.getRepository(PayoutEntity).findOneBy({ id });
  // Never sent (rejected or cancelled while awaiting approval): the gateway cannot hold it.
  if (p === null || !isFinal(p.status) || p.createAttempts === 0) return;
  const { via, answer } = await askStatus(d, p);
  await transactionFor(dataSource, by, async (m) => {
    const row = await lockPayout(m, { id });
    if (row === null || !isFinal(row.status)) return;
    const reading = answer.ok ? readPayoutRecord(row, answer.value, d.config.payouts.status) : null;
    const agrees = reading !== null && reading.ours && reading.mapped.status === row.status;
    if (reading !== null && reading.ours && !isFinal(reading.mapped.status)) {
      // Asked after it was final here, our own record says it is not final there: a
      // contradiction as much as another final status is (applyRecord's write raises that one).
      // Only here: a poll's answer read before the payout went final is merely late.
      await raiseAttention(
        m,
        { object: 'payout', id: row.id, shopId: row.shopPaymentId, status: row.status },
        'contradiction',
        `${via} says ${reading.mapped.status} (status ${answer.ok ? answer.value.status : '?'}), the payout is ${row.status}`,
        'admin',
      );
      return;
    }
    if (!answer.ok && answer.err instanceof GatewayError && answer.err.isAbsent) {
      // No record at all: consistent with a payout that never moved money, not with a paid one.
      if (row.status === 'succeeded')
        await raiseAttention(
          m,
          { object: 'payout', id: row.id, shopId: row.shopPaymentId, status: row.status },
          'contradiction',
          `${via} has no record of it, the payout is ${row.status}`,
          'admin',
        );
      return;
    }
    await applyStatus(d, m, row, via, answer, 'admin', false);
    if (agrees && row.needsAttention)
      await resolveAttention(
        m,
        { object: 'payout', id: row.id, shopId: row.shopPaymentId, status: row.status },
        { action: 'recheck', gatewayStatus: answer.ok ? answer.value.status : null },
        'admin',
      );
  });
}

/**
 * Admin (and the attention recheck): ask the gateway now, in the same phases as the poller. A
 * flagged payout is not created again after "absent" (the operator decides that), but a found
 * final status settles it and clears a "not final yet" flag; otherwise it stays flagged and
 * keeps its next poll. A final flagged payout is cleared only when the gateway
 * confirms its status.
 */
export async function reconcile(d: PayoutDeps, shopPaymentId: string, by: By): Promise<PayoutView> {
  const p = await findPayout(d, shopPaymentId);
  if (p === null) throw new NotFound('Payout', shopPaymentId);
  if (!isFinal(p.status)) {
    await checkOnce(d, d.dataSource, p.id, 'admin', {
      mayCreate: !p.needsAttention && p.status !== 'needs_attention',
      force: true,
      by,
    });
  } else {
    await recheckFinal(d, d.dataSource, p.id, by);
  }
  const now = await findPayout(d, shopPaymentId);
  if (now === null) throw new NotFound('Payout', shopPaymentId);
  return toPayoutView(now);
}
