import { Amount } from '../common/money';
import type { PayoutStatusConfig } from '../config/config';
import type { PayoutRecord } from '../gateway/gateway.types';
import { GatewayError, GatewayTransportError } from '../gateway/gateway.errors';
import {
  acceptBlocked,
  decideAccept,
  invoiceView,
  payoutView as viewOfPayout,
  refundView,
  viewOfFailure,
} from './accept-guard';

const PAYOUT_CFG: PayoutStatusConfig = { success: [5], rejected: [6], failed: [8] };
const STORED = {
  shopPaymentId: 'po-1',
  amount: Amount.parse('250.00'),
  amountType: 'ps_amount' as const,
  shopCurrency: 643,
  payway: 'card_rub',
  accountMasked: '411111******1111',
};
/** The gateway's record of payout po-1 with `status`, or of another payout under its id. */
const rec = (status: number, payeeReceive = '250.00'): PayoutRecord =>
  ({
    id: 7,
    status,
    shop_payment_id: 'po-1',
    shop_currency: 643,
    ps_currency: 643,
    payee_receive: payeeReceive,
    shop_write_off: payeeReceive,
  }) as unknown as PayoutRecord;
const payoutView = (status: number, payeeReceive?: string) =>
  viewOfPayout(STORED, rec(status, payeeReceive), PAYOUT_CFG);

function gatewayError(isAbsent: boolean): GatewayError {
  return new GatewayError({
    call: 'invoice/check',
    errorCode: isAbsent ? 11 : 10,
    gatewayMessage: 'x',
    fatal: true,
    httpStatus: 200,
    isDuplicate: false,
    isAbsent,
  });
}

describe('accept guard', () => {
  it('accepts only flagged objects with no gateway call in flight', () => {
    const now = new Date('2026-01-01T10:00:00Z');
    const later = new Date(now.getTime() + 1000);
    const earlier = new Date(now.getTime() - 1000);
    expect(acceptBlocked({ needsAttention: false, callLeaseUntil: null }, now)).toBe('not_flagged');
    expect(acceptBlocked({ needsAttention: true, callLeaseUntil: later }, now)).toBe('in_flight');
    expect(acceptBlocked({ needsAttention: true, callLeaseUntil: earlier }, now)).toBeNull();
    expect(acceptBlocked({ needsAttention: true, callLeaseUntil: null }, now)).toBeNull();
  });

  it.each([
    // object, chosen, current, gateway view, decision
    ['invoice', 'succeeded', 'held', invoiceView(8), 'refuse:held (8)'],
    ['invoice', 'unheld', 'held', invoiceView(8), 'refuse:held (8)'],
    ['invoice', 'unheld', 'held', invoiceView(6), 'apply:agrees'],
    ['invoice', 'unheld', 'awaiting_payer', invoiceView(6), 'refuse:rejected (6)'],
    ['invoice', 'rejected', 'awaiting_payer', invoiceView(4), 'refuse:succeeded (4)'],
    ['invoice', 'succeeded', 'rejected', invoiceView(4), 'apply:agrees'],
    ['invoice', 'rejected', 'pending', invoiceView(99), 'refuse:an unknown status (99)'],
    ['refund', 'FAILED', 'WAITING', refundView('WAITING'), 'refuse:WAITING'],
    ['refund', 'FAILED', 'WAITING', refundView('SUCCESS'), 'refuse:SUCCESS'],
    ['refund', 'SUCCESS', 'WAITING', refundView('SUCCESS'), 'apply:agrees'],
    ['payout', 'failed', 'needs_attention', payoutView(3), 'refuse:processing (3)'],
    ['payout', 'failed', 'needs_attention', payoutView(5), 'refuse:succeeded (5)'],
    ['payout', 'rejected', 'needs_attention', payoutView(6), 'apply:agrees'],
    ['payout', 'failed', 'unknown', { kind: 'absent' }, 'apply:absent'],
    ['payout', 'succeeded', 'unknown', { kind: 'absent' }, 'refuse:no record of it'],
    ['invoice', 'rejected', 'unknown', { kind: 'absent' }, 'refuse:no record of it'],
    ['refund', 'FAILED', 'WAITING', { kind: 'absent' }, 'refuse:no record of it'],
    ['refund', 'FAILED', 'WAITING', { kind: 'never_sent' }, 'apply:never_sent'],
    ['refund', 'SUCCESS', 'WAITING', { kind: 'never_sent' }, 'refuse:no record of it (never sent)'],
    ['invoice', 'succeeded', 'unknown', { kind: 'foreign', text: 'x' }, 'refuse:x'],
    ['payout', 'failed', 'unknown', { kind: 'unreachable', detail: 'reset' }, 'refuse:no answer (reset)'],
    ['payout', 'rejected', 'succeeded', payoutView(6), 'apply:agrees'],
    ['payout', 'failed', 'succeeded', payoutView(5), 'refuse:succeeded (5)'],
    // Another payout's record under our id (100.00, succeeded): ours was never created there.
    ['payout', 'succeeded', 'needs_attention', payoutView(5, '100.00'), "refuse:a record that is not this payout's (amount 100.00 is not 250.00)"],
    ['payout', 'failed', 'needs_attention', payoutView(5, '100.00'), 'apply:foreign'],
    ['payout', 'rejected', 'needs_attention', payoutView(6, '100.00'), 'apply:foreign'],
    ['refund', 'FAILED', 'WAITING', { kind: 'unreachable', detail: 'x' }, 'refuse:no answer (x)'],
  ] as const)('%s: accept %s while %s, gateway %j -> %s', (object, chosen, current, view, out) => {
    const d = decideAccept(object, chosen, current, view);
    expect(d.kind === 'apply' ? `apply:${d.gatewayAnswer}` : `refuse:${d.gatewaySays}`).toBe(out);
  });

  it('reads "no such object" as absent and any other gateway failure as unreachable', () => {
    expect(viewOfFailure(gatewayError(true))).toEqual({ kind: 'absent' });
    expect(viewOfFailure(gatewayError(false)).kind).toBe('unreachable');
    expect(
      viewOfFailure(new GatewayTransportError('invoice/check', 'connect', 'refused')).kind,
    ).toBe('unreachable');
    expect(() => viewOfFailure(new TypeError('bug'))).toThrow(TypeError);
  });
});
