import { Amount } from '../common/money';
import { balanceCovers, capRemaining, capShare, normalizedAccount } from './payout-controls';

const a = (t: string): Amount => Amount.parse(t);

describe('capShare: what a payout counts toward a daily cap, in the shop currency', () => {
  it.each([
    ['shop_amount, write-off known', 'shop_amount', '100.00', '100.00', '100.00'],
    ['shop_amount: the amount is the write-off, whatever is recorded', 'shop_amount', '100.00', '100.01', '100.00'],
    ['shop_amount, write-off unknown', 'shop_amount', '100.00', null, '100.00'],
    ['ps_amount, write-off known (fee or conversion)', 'ps_amount', '100.00', '103.50', '103.50'],
    // A stored row sent while no control weighed it, its create answer not in: all that is known.
    ['ps_amount row, write-off not recorded', 'ps_amount', '100.00', null, '100.00'],
  ] as const)('%s', (_name, amountType, amount, writeOff, counted) => {
    const share = capShare({
      amount: a(amount),
      amountType,
      shopWriteOff: writeOff === null ? null : a(writeOff),
    });
    expect(share.toString()).toBe(counted);
  });
});

describe('capRemaining: null when the payout fits, else what is left', () => {
  it.each([
    ['fits below', '1000.00', '400.00', '599.99', null],
    ['fits exactly, to the cent', '1000.00', '400.00', '600.00', null],
    ['one cent over', '1000.00', '400.00', '600.01', '600.00'],
    ['nothing left', '1000.00', '1000.00', '0.01', '0.00'],
    ['already past (lowered cap): never negative', '1000.00', '1500.00', '1.00', '0.00'],
    ['scale of the cap kept', '50000', '0.5', '49999.6', '49999.5'],
  ])('%s', (_name, limit, used, wanted, left) => {
    const r = capRemaining(a(limit), a(used), a(wanted));
    expect(r === null ? null : r.toString()).toBe(left);
  });
});

describe('balanceCovers: available less in flight must cover the write-off', () => {
  it.each([
    ['covers', '1000.00', '0', '1000.00', true],
    ['in flight takes it', '1000.00', '0.01', '1000.00', false],
    ['exact after in flight', '1000.00', '400.00', '600.00', true],
    ['short by a cent', '1000.00', '400.00', '600.01', false],
    ['negative available', '-5.00', '0', '0.01', false],
  ])('%s', (_name, available, inFlight, needed, ok) => {
    expect(
      balanceCovers(Amount.fromText(available), Amount.fromText(inFlight), Amount.fromText(needed)),
    ).toBe(ok);
  });
});

describe('normalizedAccount: one recipient however it is spelled', () => {
  it.each([
    ['4111111111111111', '4111111111111111'],
    ['4111 1111 1111 1111', '4111111111111111'],
    ['4111-1111-1111-1111', '4111111111111111'],
    ['\u00a04111\u200b111111111111\t', '4111111111111111'],
    ['４１１１１１１１１１１１１１１１', '4111111111111111'],
    ['+7 (999) 123-45-67', '79991234567'],
    ['Wallet@Example.COM', 'wallet@example.com'],
    ['john.doe@example.com', 'john.doe@example.com'],
  ])('%j → %j', (given, normal) => {
    expect(normalizedAccount(given)).toBe(normal);
  });

  it('keeps different recipients apart', () => {
    expect(normalizedAccount('john.doe@example.com')).not.toBe(
      normalizedAccount('johndoe@example.com'),
    );
    expect(normalizedAccount('4111111111111111')).not.toBe(normalizedAccount('4111111111111112'));
  });
});
