import { Amount } from '../common/money';
import { approvalsNeeded } from './payout-approval';

const a = (t: string): Amount => Amount.parse(t);
const THRESHOLDS = {
  single: new Map([
    [643, a('50000.00')],
    [840, a('1000')],
  ]),
  dual: new Map([[643, a('200000')]]),
};

describe('approvalsNeeded', () => {
  it.each([
    ['below the single threshold', '49999.99', 643, 0],
    ['exactly at the single threshold', '50000', 643, 1],
    ['at it with more zeros', '50000.000000', 643, 1],
    ['between the thresholds', '199999.99999999', 643, 1],
    ['exactly at the dual threshold', '200000.00', 643, 2],
    ['above the dual threshold', '1000000', 643, 2],
    ['another currency, below', '999.99', 840, 0],
    ['another currency, at', '1000.00', 840, 1],
    ['another currency without a dual threshold, far above', '99999999', 840, 1],
    ['a currency with no threshold', '99999999', 978, 0],
  ])('%s: %s in %i needs %i', (_name, amount, currency, expected) => {
    expect(approvalsNeeded(THRESHOLDS, a(amount), currency)).toBe(expected);
  });

  it('a dual threshold alone (no single one) asks two approvals at or above it, none below', () => {
    const t = { single: new Map<number, Amount>(), dual: new Map([[643, a('10')]]) };
    expect(approvalsNeeded(t, a('9.99'), 643)).toBe(0);
    expect(approvalsNeeded(t, a('10'), 643)).toBe(2);
  });

  it('no thresholds: never', () => {
    expect(approvalsNeeded({ single: new Map(), dual: new Map() }, a('1000000000'), 643)).toBe(0);
  });
});
