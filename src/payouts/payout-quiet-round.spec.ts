import type { PayoutRecord } from '../gateway/gateway.types';
import { mayBeQuiet, quietRoundNext, toPolledRow, type PolledRow } from './payout-quiet-round';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const S = 1000;
const at = (offsetS: number): Date => new Date(NOW.getTime() + offsetS * S);
const CTX = {
  now: NOW,
  pollIntervalS: 30,
  watch: { intervalS: 300, maxS: 86_400 },
  status: { success: [5], rejected: [6], failed: [8] },
};

/** A `processing` payout as the create's answer left it, an hour before its deadline. */
function row(over: Partial<PolledRow> = {}): PolledRow {
  return {
    id: '6c0e3f3e-4a52-4c1e-9c64-0d7c2f1d9a10',
    xmin: '4242',
    status: 'processing',
    shopPaymentId: 'po-1',
    withdrawId: '77',
    gatewayStatus: 3,
    amount: '100.00',
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway: 'card_rub',
    accountMasked: '411111******1111',
    psCurrency: 643,
    payeeReceive: '100.00',
    shopWriteOff: '103.50',
    errorCode: null,
    gatewayMessage: null,
    lastError: null,
    needsAttention: false,
    attentionReason: null,
    callLeaseUntil: null,
    createdAt: at(-600),
    sentAt: at(-600),
    pollDeadline: at(3600),
    ...over,
  };
}

/** The gateway's record of that payout, saying what the row says. */
function record(over: Record<string, unknown> = {}): PayoutRecord {
  return {
    id: 77,
    status: 3,
    ps_currency: 643,
    shop_currency: 643,
    payee_receive: '100.00',
    shop_write_off: '103.50',
    shop_payment_id: 'po-1',
    error_code: 0,
    rrn: '',
    bank_transaction_id: '',
    ...over,
  } as PayoutRecord;
}

const DEADLINE_FLAG =
  'deadline: no final status by the poll deadline; still polled until the watch ends';

describe('quietRoundNext: which rounds the batch statement may finish', () => {
  it('the same non-final status and data: quiet, next poll one interval on', () => {
    expect(quietRoundNext(row(), record(), CTX)).toEqual(at(30));
  });

  it('a deadline within the interval: quiet, the next poll lands on the deadline', () => {
    expect(quietRoundNext(row({ pollDeadline: at(10) }), record(), CTX)).toEqual(at(10));
  });

  it('a record that leaves out amounts and currency says nothing against the row: quiet', () => {
    const r = record({
      payee_receive: undefined,
      shop_write_off: undefined,
      ps_currency: undefined,
    });
    expect(quietRoundNext(row(), r, CTX)).toEqual(at(30));
  });

  it('flagged at its deadline already: the watch asks every WATCH_INTERVAL_S, quiet', () => {
    const flagged = row({
      status: 'needs_attention',
      needsAttention: true,
      attentionReason: DEADLINE_FLAG,
      pollDeadline: at(-60),
    });
    expect(quietRoundNext(flagged, record(), CTX)).toEqual(at(300));
  });

  it('the watch runs from the send: created long ago, approved and sent just now, quiet', () => {
    expect(quietRoundNext(row({ createdAt: at(-86_400 * 3) }), record(), CTX)).toEqual(at(30));
  });

  it('flagged for a disagreement before its deadline: the flag stays, quiet', () => {
    const flagged = row({
      status: 'needs_attention',
      needsAttention: true,
      attentionReason: 'idempotency-conflicts: 3 conflicting repeats',
    });
    expect(quietRoundNext(flagged, record(), CTX)).toEqual(at(30));
  });

  it.each<[string, Partial<PolledRow>, Record<string, unknown>]>([
    ['reaches its deadline this round (the flag is raised)', { pollDeadline: at(0) }, {}],
    ['past its deadline, not flagged yet', { pollDeadline: at(-1) }, {}],
    [
      'needs_attention without the flag (the watch raises it)',
      { status: 'needs_attention', pollDeadline: at(-60) },
      {},
    ],
    [
      'flagged, status not needs_attention, past the deadline',
      { needsAttention: true, attentionReason: 'mismatch: x', pollDeadline: at(-60) },
      {},
    ],
    ['the watch has ended', { createdAt: at(-86_400), sentAt: at(-86_400) }, {}],
    ['a final answer', {}, { status: 5 }],
    [
      'a final answer on a flagged row',
      { status: 'needs_attention', needsAttention: true },
      { status: 8 },
    ],
    ['a status change (pending -> processing)', { status: 'pending' }, {}],
    ['a status change (unknown -> processing)', { status: 'unknown' }, {}],
    ['another non-final gateway status (audited)', {}, { status: 1 }],
    ['a status number nobody documented (logged)', { gatewayStatus: 42 }, { status: 42 }],
    ['a record that is not ours: shop_payment_id', {}, { shop_payment_id: 'po-2' }],
    ['a record that is not ours: amount', {}, { payee_receive: '99.00' }],
    ['a record that is not ours: payway', {}, { payway: 'qiwi_rub' }],
    ['another withdraw id', {}, { id: 78 }],
    ['an amount the row does not have yet', { payeeReceive: null }, {}],
    ['the same amount at another scale', {}, { shop_write_off: '103.5' }],
    ['a currency the row does not have yet', { psCurrency: null }, {}],
    ['an error code', {}, { error_code: 11 }],
    ['a gateway message the record no longer backs', { gatewayMessage: 'old' }, {}],
    ['an error of an earlier poll to clear', { lastError: 'withdraw/status: timeout' }, {}],
    ['no withdraw id yet', { withdrawId: null }, {}],
    ['a call of its own in flight', { callLeaseUntil: at(5) }, {}],
    ['awaiting approval', { status: 'awaiting_approval' }, {}],
    ['final already', { status: 'succeeded' }, {}],
    ['an amount that cannot be read', {}, { shop_write_off: 'abc' }],
  ])('per-row path: %s', (_name, rowOver, recordOver) => {
    expect(quietRoundNext(row(rowOver), record(recordOver), CTX)).toBeNull();
  });
});

describe('mayBeQuiet: which rows ask withdraw/status in the batch', () => {
  it.each<[string, Partial<PolledRow>, boolean]>([
    ['processing with a withdraw id', {}, true],
    ['unknown with a withdraw id', { status: 'unknown' }, true],
    ['flagged needs_attention', { status: 'needs_attention', needsAttention: true }, true],
    ['an expired call lease', { callLeaseUntil: at(-1) }, true],
    [
      'no withdraw id (asked by shop_payment_id, may be created again)',
      { withdrawId: null },
      false,
    ],
    ['a call in flight', { callLeaseUntil: at(1) }, false],
    ['awaiting approval', { status: 'awaiting_approval' }, false],
    ['final', { status: 'failed' }, false],
  ])('%s', (_name, over, expected) => {
    expect(mayBeQuiet(row(over), NOW)).toBe(expected);
  });
});

describe('toPolledRow', () => {
  it('maps the claim columns by their SQL names', () => {
    const r = row();
    expect(
      toPolledRow({
        id: r.id,
        xmin: r.xmin,
        status: r.status,
        shop_payment_id: r.shopPaymentId,
        withdraw_id: r.withdrawId,
        gateway_status: r.gatewayStatus,
        amount: r.amount,
        amount_type: r.amountType,
        shop_currency: r.shopCurrency,
        payway: r.payway,
        account_masked: r.accountMasked,
        ps_currency: r.psCurrency,
        payee_receive: r.payeeReceive,
        shop_write_off: r.shopWriteOff,
        error_code: r.errorCode,
        gateway_message: r.gatewayMessage,
        last_error: r.lastError,
        needs_attention: r.needsAttention,
        attention_reason: r.attentionReason,
        call_lease_until: r.callLeaseUntil,
        created_at: r.createdAt,
        sent_at: r.sentAt,
        poll_deadline: r.pollDeadline,
      }),
    ).toEqual(r);
  });
});
