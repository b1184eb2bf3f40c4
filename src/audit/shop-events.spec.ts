import { SHOP_EVENT_TYPES, shopEventTypeOf } from './shop-events';

describe('shopEventTypeOf', () => {
  it.each([
    [
      { entityType: 'invoice', fromStatus: 'awaiting_payer', toStatus: 'succeeded' },
      'invoice.succeeded',
    ],
    [{ entityType: 'refund', fromStatus: null, toStatus: 'WAITING' }, 'refund.waiting'],
    [{ entityType: 'refund', fromStatus: 'WAITING', toStatus: 'FAILED' }, 'refund.failed'],
    [
      { entityType: 'payout', fromStatus: 'processing', toStatus: 'needs_attention' },
      'payout.needs_attention',
    ],
    [{ entityType: 'invoice', fromStatus: 'held', toStatus: 'held' }, null],
    [{ entityType: 'notification', fromStatus: null, toStatus: 'applied' }, null],
    [{ entityType: 'dispute', fromStatus: null, toStatus: 'open' }, 'dispute.opened'],
    [{ entityType: 'dispute', fromStatus: 'open', toStatus: 'lost' }, 'dispute.lost'],
    [{ entityType: 'dispute', fromStatus: 'open', toStatus: 'accepted' }, 'dispute.accepted'],
    [
      {
        entityType: 'refund',
        fromStatus: 'WAITING',
        toStatus: 'WAITING',
        attention: 'attention_raised' as const,
      },
      'refund.attention_raised',
    ],
    [
      {
        entityType: 'payout',
        fromStatus: 'needs_attention',
        toStatus: 'succeeded',
        attention: 'attention_resolved' as const,
      },
      'payout.attention_resolved',
    ],
  ])('%o -> %s', (entry, type) => {
    expect(shopEventTypeOf(entry)).toBe(type);
    if (type !== null) expect(SHOP_EVENT_TYPES).toContain(type);
  });
});
