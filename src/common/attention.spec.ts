import { attentionCode, clearsOnFinal, watchMayFlag } from './attention';

describe('clearsOnFinal: which flags a final gateway status answers', () => {
  it.each<[string | null, boolean]>([
    ['deadline: no final status by the poll deadline', true],
    ['absent: absent at the poll deadline', true],
    ['create_cap: absent after 3 creates', true],
    ['poll_failing: every poll fails', true],
    ['unknown_status: status 42', true],
    ['watch_ended: watch ended: an operator decides', true],
    ['unsettled_recreate: a repeated create was refused', true],
    ['mismatch: withdraw/status record is not ours', false],
    ['contradiction: the gateway says failed, the payout is succeeded', false],
    ['unsafe_redirect: javascript:', false],
    ['charge_on_unhold: charged', false],
    ['missing_invoice_id: held without an invoice id', false],
    ['idempotency-conflicts: shopPaymentId p-1 was repeated with another body 3 times', false],
    ['deadlines: not a code', false],
    [null, false],
  ])('%s -> %s', (text, expected) => {
    expect(clearsOnFinal(text)).toBe(expected);
  });

  it('the watch never replaces an idempotency-conflicts flag', () => {
    expect(watchMayFlag({ needsAttention: true, attentionReason: 'idempotency-conflicts: x' }, 'watch_ended')).toBe(false);
    expect(watchMayFlag({ needsAttention: true, attentionReason: 'idempotency-conflicts: x' }, 'poll_failing')).toBe(false);
  });

  it('reads the code before the first colon', () => {
    expect(attentionCode('mismatch: deadline: x')).toBe('mismatch');
    expect(attentionCode('deadline')).toBe('deadline');
  });
});

describe('watchMayFlag: the watch never hides a flag that says more', () => {
  const flagged = (attentionReason: string) => ({ needsAttention: true, attentionReason });
  it.each<
    [
      string,
      { needsAttention: boolean; attentionReason: string | null },
      'deadline' | 'poll_failing' | 'watch_ended',
      boolean,
    ]
  >([
    [
      'deadline on an unflagged row',
      { needsAttention: false, attentionReason: null },
      'deadline',
      true,
    ],
    ['deadline over another flag', flagged('absent: x'), 'deadline', false],
    ['watch end over deadline', flagged('deadline: x'), 'watch_ended', true],
    ['watch end over a mismatch', flagged('mismatch: x'), 'watch_ended', false],
    ['watch end again', flagged('watch_ended: x'), 'watch_ended', false],
    ['failing polls over deadline', flagged('deadline: x'), 'poll_failing', true],
    ['failing polls over a contradiction', flagged('contradiction: x'), 'poll_failing', false],
  ])('%s', (_n, row, reason, expected) => {
    expect(watchMayFlag(row, reason)).toBe(expected);
  });
});
