import { Amount } from '../common/money';

/** Amount bounds of a payway, compared exactly; a missing bound does not limit. */
export function checkAmountBounds(
  amount: Amount,
  payway: { min_amount?: unknown; max_amount?: unknown },
): string | null {
  const min = boundOf(payway.min_amount);
  const max = boundOf(payway.max_amount);
  if (min !== null && amount.lt(min)) return `must be at least ${min.toString()}`;
  if (max !== null && amount.gt(max)) return `must be at most ${max.toString()}`;
  return null;
}

function boundOf(v: unknown): Amount | null {
  if (typeof v === 'string' && v.trim() !== '') return Amount.fromText(v);
  // The gateway client parses money exactly into strings; a bigint/number only from hand-made config.
  if (typeof v === 'bigint') return Amount.fromText(v.toString());
  return null;
}
