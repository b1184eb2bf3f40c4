import {
  absoluteDifference,
  agentBooks,
  chargebackHint,
  compareBalances,
  compareObject,
  openingBalance,
} from './reconciliation.rules';

describe('compareBalances', () => {
  it('agrees when available and frozen + hold match, in the currency’s digits', () => {
    const r = compareBalances(
      new Map([[643, { available: '100', frozen: '50.5' }]]),
      new Map([[643, { available: '100.00', hold: '0.50', frozen: '50.00' }]]),
    );
    expect(r.items).toEqual([]);
    expect(r.balances).toEqual([
      {
        currency: 643,
        ours: { available: '100.00', frozen: '50.50' },
        gateway: { available: '100.00', hold: '0.50', frozen: '50.00' },
        differences: { available: '0.00', frozen: '0.00' },
      },
    ]);
  });

  it('a drift is one item per account that differs; a currency only one side has counts', () => {
    const r = compareBalances(
      new Map([[643, { available: '100.00', frozen: '0' }]]),
      new Map([
        [643, { available: '105.00', hold: '0', frozen: '0' }],
        [840, { available: '1.00', hold: '0', frozen: '0' }],
      ]),
    );
    expect(r.items).toEqual([
      {
        kind: 'balance',
        account: 'agent_available',
        currency: 643,
        ours: '100.00',
        gateway: '105.00',
        amount: '5.00',
      },
      {
        kind: 'balance',
        account: 'agent_available',
        currency: 840,
        ours: '0.00',
        gateway: '1.00',
        amount: '1.00',
      },
    ]);
    expect(absoluteDifference(r.items, 643)).toBe('5');
  });

  it('a move from available to frozen with the same total still shows both items', () => {
    const r = compareBalances(
      new Map([[643, { available: '100.00', frozen: '0' }]]),
      new Map([[643, { available: '90.00', hold: '0', frozen: '10.00' }]]),
    );
    expect(r.items.map((i) => [i.account, i.amount])).toEqual([
      ['agent_available', '-10.00'],
      ['agent_frozen', '10.00'],
    ]);
    // Apart, never netted: +10.00 and -10.00 do not read 0.00.
    expect(r.balances[0].differences).toEqual({ available: '-10.00', frozen: '10.00' });
  });
});

describe('compareObject', () => {
  const base = { objectType: 'payout' as const, objectId: 'p-1', currency: 643 };
  it('a status of ours not final yet is the watch still to run, never a contradiction; a final one of ours must match', () => {
    expect(
      compareObject({
        ...base,
        ours: { status: 'processing', final: false, amount: '1' },
        gateway: { status: 'pending', final: false, amount: '1' },
      }),
    ).toEqual([]);
    expect(
      compareObject({
        ...base,
        ours: { status: 'processing', final: false, amount: '1' },
        gateway: { status: 'succeeded', final: true, amount: '1' },
      }),
    ).toEqual([]);
    expect(
      compareObject({
        ...base,
        ours: { status: 'succeeded', final: true, amount: '1' },
        gateway: { status: 'processing', final: false, amount: '1' },
      }),
    ).toEqual([{ ...base, kind: 'status', ours: 'succeeded', gateway: 'processing' }]);
    expect(
      compareObject({
        ...base,
        ours: { status: 'failed', final: true, amount: '1' },
        gateway: { status: 'succeeded', final: true, amount: '1' },
      }),
    ).toEqual([{ ...base, kind: 'status', ours: 'failed', gateway: 'succeeded' }]);
  });
  it('an amount that differs, and a record the gateway lacks', () => {
    expect(
      compareObject({
        ...base,
        ours: { status: 'succeeded', final: true, amount: '10.00' },
        gateway: { status: 'succeeded', final: true, amount: '10.5' },
      }),
    ).toEqual([{ ...base, kind: 'amount', ours: '10.00', gateway: '10.50', amount: '0.50' }]);
    expect(
      compareObject({
        ...base,
        ours: { status: 'succeeded', final: true, amount: '10.00' },
        gateway: null,
      }),
    ).toEqual([{ ...base, kind: 'missing_gateway', ours: 'succeeded', gateway: null }]);
  });
});

describe('single-shop setups: sales land in the gateway available of the one shop', () => {
  const books = [
    { account: 'agent_available', currency: 643, balance: '1000.00' },
    { account: 'agent_frozen', currency: 643, balance: '40.00' },
    { account: 'gateway_payment_shop', currency: 643, balance: '250.10' },
    { account: 'sales', currency: 643, balance: '-250.10' },
    { account: 'gateway_payment_shop', currency: 840, balance: '0.30' },
  ];
  it('two shops: the agent shop is agent_available and agent_frozen only', () => {
    expect([...agentBooks(books, false)]).toEqual([[643, { available: '1000', frozen: '40' }]]);
  });
  it('one shop: available is agent_available + gateway_payment_shop, exactly', () => {
    expect([...agentBooks(books, true)]).toEqual([
      [643, { available: '1250.1', frozen: '40' }],
      [840, { available: '0.3', frozen: '0' }],
    ]);
  });
  it('the opening leaves out what the books hold already: payouts, and the sales of a single shop', () => {
    const gw = { available: '1250.10', hold: '0.50', frozen: '40.00' };
    expect(openingBalance(gw, 643, books, false)).toEqual({ available: '250.10', frozen: '0.50' });
    expect(openingBalance(gw, 643, books, true)).toEqual({ available: '0.00', frozen: '0.50' });
    expect(openingBalance(gw, 978, books, true)).toEqual({ available: '1250.10', frozen: '40.50' });
  });
  it('one shop: a payer’s held funds explain the gateway’s hold; with two shops they are not the agent shop’s', () => {
    const holds = new Map([
      [643, '0.50'],
      [978, '7.25'],
    ]);
    expect([...agentBooks(books, true, holds)]).toEqual([
      [643, { available: '1250.1', frozen: '40.5' }],
      [840, { available: '0.3', frozen: '0' }],
      [978, { available: '0', frozen: '7.25' }],
    ]);
    expect([...agentBooks(books, false, holds)]).toEqual([
      [643, { available: '1000', frozen: '40' }],
    ]);
    const gw = { available: '1250.10', hold: '0.50', frozen: '40.00' };
    expect(openingBalance(gw, 643, books, true, holds)).toEqual({
      available: '0.00',
      frozen: '0.00',
    });
  });
});

describe('chargebackHint', () => {
  const item = (amount: string, account: 'agent_available' | 'agent_frozen' = 'agent_available') => ({
    kind: 'balance' as const,
    account,
    currency: 643,
    amount,
  });
  it('a gateway balance below ours is explained by disputes open, or by a chargeback not yet recorded', () => {
    expect(chargebackHint(item('-30.00'), new Map([[643, '30']]))).toBe(
      'disputes open in 643: 30.00; a chargeback the gateway took is booked when its dispute is resolved lost or accepted',
    );
    expect(chargebackHint(item('-30.00'), new Map())).toBe(
      'a chargeback the gateway took (30.00) is booked once its dispute is recorded and resolved lost or accepted',
    );
  });
  it('says nothing of a balance above ours, of frozen, or of another kind', () => {
    expect(chargebackHint(item('30.00'), new Map([[643, '30']]))).toBeNull();
    expect(chargebackHint(item('-30.00', 'agent_frozen'), new Map([[643, '30']]))).toBeNull();
    expect(chargebackHint({ kind: 'status', currency: 643, amount: '-1.00' }, new Map())).toBeNull();
  });
});
