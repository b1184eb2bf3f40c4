import {
  REFUND_COUNTED_STATUSES,
  REFUND_PENDING,
  REFUND_REFUNDED,
  REFUND_STATUSES,
} from './statuses';

describe('which refunds count toward what was paid', () => {
  it('is every refund status but FAILED: refunded (SUCCESS) and pending (WAITING), nothing else', () => {
    expect([...REFUND_COUNTED_STATUSES].sort()).toEqual(REFUND_STATUSES.filter((s) => s !== 'FAILED').sort());
    expect(REFUND_COUNTED_STATUSES).toEqual([REFUND_REFUNDED, REFUND_PENDING]);
  });
});
