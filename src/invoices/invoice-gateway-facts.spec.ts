import { priceFactsOf } from './invoice-gateway-facts';

/** What a record or notification teaches of the payer's price: exact text only, never a float. */
describe('priceFactsOf', () => {
  const shown = (r: { client_price?: unknown; ps_currency?: unknown }) => {
    const f = priceFactsOf(r);
    return {
      payerPrice: f.payerPrice?.toString(),
      clientPrice: f.clientPrice?.toString(),
      psCurrency: f.psCurrency,
    };
  };

  it.each([
    // [client_price, ps_currency, payerPrice, psCurrency]
    ['1281.76', 643, '1281.76', 643], // a record (lossless parse: text and number)
    ['1281.76', '643', '1281.76', 643], // a notification (form fields)
    ['1281.8', '643', '1281.8', 643], // the gateway's own digits, not re-scaled
    [' 1281.76 ', '840', '1281.76', 840],
    ['92233720368547758.07', 643, '92233720368547758.07', 643], // beyond a double's precision
  ])('takes %j in %j', (price, currency, payerPrice, psCurrency) => {
    expect(shown({ client_price: price, ps_currency: currency })).toEqual({
      payerPrice,
      clientPrice: payerPrice,
      psCurrency,
    });
  });

  it.each([
    [1281.76], // a JSON number that bypassed the lossless parse: never read through a float
    ['1e3'],
    ['1281,76'],
    ['-5.00'],
    ['0'],
    ['0.00'],
    [''],
    ['NaN'],
    ['Infinity'],
    ['0x10'],
    ['１２８１.７６'], // full-width digits
    [null],
    [undefined],
    [{ value: '1281.76' }],
  ])('leaves the price out for %j', (price) => {
    expect(shown({ client_price: price, ps_currency: 643 })).toEqual({
      payerPrice: undefined,
      clientPrice: undefined,
      psCurrency: 643,
    });
  });

  it.each([
    ['RUB'],
    ['0643'],
    ['6.43'],
    [64.3],
    [0],
    [-643],
    ['643 '],
    [1000],
    ['1000'],
    [null],
    [''],
  ])('leaves the currency out for %j', (currency) => {
    expect(shown({ client_price: '10.00', ps_currency: currency }).psCurrency).toBeUndefined();
  });
});
