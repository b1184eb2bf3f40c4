import currencyCodes from 'currency-codes';
import {
  alphabeticCurrency,
  currencyCodeOf,
  currencyName,
  currencyProblem,
  minorUnits,
  minorUnitsProblem,
  parseCurrencyInput,
} from './currency';

/** ISO 4217 codes that name no currency a payment is made in: refused as a currency. */
const NOT_CURRENCIES = ['XXX', 'XTS', 'XAU', 'XAG', 'XPD', 'XPT', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XSU', 'XUA'];

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
          n: entry && !NOT_CURRENCIES.includes(entry.code) ? parseInt(entry.number, 10) : null,
        });
      }
    }
    for (let n = 1; n <= 999; n++) {
      const entry = currencyCodes.number(String(n).padStart(3, '0'));
      const taken = entry !== undefined && !NOT_CURRENCIES.includes(entry.code);
      expect({ n, parsed: parseCurrencyInput(n), text: parseCurrencyInput(String(n).padStart(3, '0')) }).toEqual({
        n,
        parsed: taken ? n : null,
        text: taken ? n : null,
      });
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

  it.each([undefined, null, '', 'RUR', 'XYZ', 'RUBL', 'R B', '643.0', '0643', '000', 0, 1000, -643, 643.5, '١٢٣', {}, [], 123, '123', 999, '999', 'XXX', 'xts', 963, 959, 'XAU'])(
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

describe('currencies named both ways', () => {
  it.each([
    [392, 'JPY (392)'],
    [643, 'RUB (643)'],
    [123, '123'],
  ])('%p is %p', (code, name) => {
    expect(currencyName(code)).toBe(name);
  });

  it('the minor-unit problem names the currency both ways', () => {
    expect(minorUnitsProblem('100.5', 392)).toBe('must be a whole number in JPY (392)');
    expect(minorUnitsProblem('1.001', 643)).toBe(
      'has more than 2 fraction digits, the minor unit of RUB (643)',
    );
  });

  it.each([
    [123, '123 is not an ISO 4217 currency'],
    ['123', '"123" is not an ISO 4217 currency'],
    [999, 'XXX (999) names no currency a payment can be made in'],
    ['xts', 'XTS (963) names no currency a payment can be made in'],
    ['RUR', '"RUR" is not an ISO 4217 currency'],
  ])('a refused %p says why, with the codes taken', (value, why) => {
    const message = currencyProblem(value);
    expect(message.startsWith(why)).toBe(true);
    expect(message).toContain('643 or "RUB"');
  });

  it('a long or odd value is not echoed', () => {
    for (const value of ['4111111111111111', 'x'.repeat(50), 64.3, true, {}])
      expect(currencyProblem(value).startsWith('must be an ISO 4217')).toBe(true);
  });
});
