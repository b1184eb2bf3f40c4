import { Decimal } from './decimal';

describe('Decimal', () => {
  it.each([
    ['100.10', '0.25', '100.35', '99.85'],
    ['0.1', '0.2', '0.3', '-0.1'],
    ['999999999999999.99', '0.01', '1000000000000000.00', '999999999999999.98'],
    ['5', '2.50', '7.50', '2.50'],
  ])('%s and %s: sum %s, difference %s, exactly', (a, b, sum, diff) => {
    expect(Decimal.parse(a).plus(Decimal.parse(b)).toString()).toBe(sum);
    expect(Decimal.parse(a).minus(Decimal.parse(b)).toString()).toBe(diff);
  });

  it.each([
    ['2.5', '100.10', '2.5025'],
    ['1', '333.33', '3.3333'],
    ['3.5', '1.30', '0.0455'],
  ])('%s%% of %s is exactly %s', (percent, base, fee) => {
    expect(Decimal.parse(percent).percentOf(Decimal.parse(base)).compare(Decimal.parse(fee))).toBe(
      0,
    );
  });

  it.each([
    ['102.6025', '102.60'],
    ['1.645', '1.65'],
    ['1.644999', '1.64'],
    ['-1.645', '-1.65'],
    ['0.005', '0.01'],
    ['0.004', '0.00'],
    ['7', '7.00'],
  ])('rounds %s half-up to %s', (value, rounded) => {
    expect(Decimal.parse(value).toFixed(2)).toBe(rounded);
  });

  it('compares across scales', () => {
    expect(Decimal.parse('10').compare(Decimal.parse('10.00'))).toBe(0);
    expect(Decimal.parse('9.99').compare(Decimal.parse('10'))).toBe(-1);
    expect(Decimal.parse('10.01').compare(Decimal.parse('10'))).toBe(1);
  });

  it.each(['1e3', '+1', '1.', '.5', '', ' 1', '1,5', 'NaN'])('refuses %j', (text) => {
    expect(Decimal.isDecimalText(text)).toBe(false);
    expect(() => Decimal.parse(text)).toThrow();
  });
});
