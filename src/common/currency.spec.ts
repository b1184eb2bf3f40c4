import currencyCodes from 'currency-codes';
import { alphabeticCurrency, currencyCodeOf, minorUnits, parseCurrencyInput } from './currency';

describe("lookups made once agree with the package's own search", () => {
  it('every numeric code 1-999 and every alphabetic code, in any case', () => {
    for (let n = 1; n <= 999; n++) {
      const entry = currencyCodes.number(String(n).padStart(3, '0'));
      expect({ n, digits: minorUnits(n), code: alphabeticCurrency(n) }).toEqual({
        n,
        digits: entry ? entry.digits : null,
        code: entry?.code ?? null,
      });
    }
    for (const { code } of currencyCodes.data) {
      for (const spelling of [code, code.toLowerCase()]) {
        const entry = currencyCodes.code(spelling);
        expect({ spelling, n: parseCurrencyInput(spelling) }).toEqual({
          spelling,
          n: entry ? parseInt(entry.number, 10) : null,
        });
      }
    }
    expect(minorUnits(643)).toBe(2);
    expect(minorUnits(392)).toBe(0);
    expect(alphabeticCurrency(643)).toBe('RUB');
    expect(parseCurrencyInput('rub')).toBe(643);
  });
});

describe('currencyCodeOf', () => {
  it.each([
    [643, 643],
    ['643', 643],
    ['0840', 840],
    [978, 978],
  ] as const)('reads %p as %p', (value, code) => {
    expect(currencyCodeOf(value)).toBe(code);
  });

  it.each([undefined, null, '', 'RUB', '643.0', '64 3', '-643', 643.5, '1e3', '0x283', {}, []])(
    'refuses %p',
    (value) => {
      expect(currencyCodeOf(value)).toBeNull();
    },
  );
});

describe('parseCurrencyInput (what a shop may send)', () => {
  it.each([
    [643, 643],
    ['643', 643],
    ['RUB', 643],
    ['rub', 643],
    ['Usd', 840],
    ['EUR', 978],
    [392, 392],
  ] as const)('reads %p as %p', (value, code) => {
    expect(parseCurrencyInput(value)).toBe(code);
  });

  it.each([undefined, null, '', 'RUR', 'XYZ', 'RUBL', 'R B', '643.0', '0643', '000', 0, 1000, -643, 643.5, '١٢٣', {}, []])(
    'refuses %p',
    (value) => {
      expect(parseCurrencyInput(value)).toBeNull();
    },
  );

  it('names the alphabetic code of a numeric one', () => {
    expect(alphabeticCurrency(643)).toBe('RUB');
    expect(alphabeticCurrency(840)).toBe('USD');
    expect(alphabeticCurrency(1)).toBeNull();
    expect(alphabeticCurrency(null)).toBeNull();
  });
});
