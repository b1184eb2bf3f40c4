import { currencyCodeOf } from './currency';

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
