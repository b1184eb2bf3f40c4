import {
  autoSubmitForm,
  escapeHtml,
  payerStep,
  redirectLocation,
  redirectParams,
} from './redirect-page';
import { canonicalJson, requestFingerprint } from './invoice-request';
import type { CreateInvoiceDto } from './dto/create-invoice.dto';
import { PAYMENT } from '../../test/support/payways';

describe('escapeHtml', () => {
  it('escapes every character that could leave an attribute or open a tag', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&amp;</a>`)).toBe(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;',
    );
  });
});

describe('autoSubmitForm', () => {
  const html = autoSubmitForm(
    'https://pay.example/3ds?a=1&b=2',
    {
      invoice: '42',
      'x"><script>': '"><script>alert(1)</script>',
    },
    'bm9uY2U',
  );

  it('posts to the url with one hidden input per parameter, all escaped', () => {
    expect(html).toContain('<form method="post" action="https://pay.example/3ds?a=1&amp;b=2">');
    expect(html).toContain('<input type="hidden" name="invoice" value="42">');
    expect(html).toContain(
      '<input type="hidden" name="x&quot;&gt;&lt;script&gt;" value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">',
    );
    expect(html).not.toContain('<script>alert');
    expect((html.match(/type="hidden"/g) ?? []).length).toBe(2);
  });

  it('submits itself by a script with the CSP nonce (no inline handler), with a button when scripts are off', () => {
    expect(html).toContain('<script nonce="bm9uY2U">document.forms[0].submit();</script>');
    expect(html).not.toContain('onload');
    expect(html).toContain('<noscript><button type="submit">');
  });
});

describe('redirectLocation', () => {
  it.each([
    [
      'https://w.example/pay',
      { invoice: '1', lang: 'en' },
      'https://w.example/pay?invoice=1&lang=en',
    ],
    ['https://w.example/pay', { q: 'a b&c=d/é' }, 'https://w.example/pay?q=a+b%26c%3Dd%2F%C3%A9'],
    ['https://w.example/pay?x=1', { y: '2' }, 'https://w.example/pay?x=1&y=2'],
    ['https://w.example/pay', {}, 'https://w.example/pay'],
  ])('%s + %j → %s', (url, params, expected) =>
    expect(redirectLocation(url, params)).toBe(expected),
  );
});

describe('payerStep (spec rule 6)', () => {
  it('POST → form', () =>
    expect(payerStep({ method: 'POST', url: 'https://a', params: {} }, 'n').kind).toBe('form'));
  it.each([
    'javascript:alert(1)',
    'data:text/html,x',
    'ftp://a/b',
    'file:///etc/passwd',
    '//a',
    'not a url',
  ])('any other scheme (%s) → blocked, for POST and GET', (url) => {
    expect(payerStep({ method: 'POST', url, params: {} }, 'n').kind).toBe('blocked');
    expect(payerStep({ method: 'GET', url, params: {} }, 'n').kind).toBe('blocked');
  });
  it('GET → redirect', () =>
    expect(payerStep({ method: 'GET', url: 'https://a', params: { i: '1' } }, 'n')).toEqual({
      kind: 'redirect',
      location: 'https://a?i=1',
    }));
});

describe('redirectParams', () => {
  it('keeps strings, writes numbers and booleans as text, objects as JSON, drops null', () => {
    expect(redirectParams({ a: 'x', b: 12, c: true, d: null, e: { k: 1 } })).toEqual({
      a: 'x',
      b: '12',
      c: 'true',
      e: '{"k":1}',
    });
    expect(redirectParams(undefined)).toEqual({});
  });
});

describe('request fingerprint', () => {
  const dto = (o: Partial<CreateInvoiceDto> = {}): CreateInvoiceDto =>
    ({
      shopOrderId: 'o1',
      amount: '100.10',
      currency: 643,
      payway: PAYMENT.card,
      ...o,
    }) as CreateInvoiceDto;

  it('ignores key order and absent fields', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: undefined } })).toBe('{"a":{"d":2},"b":1}');
    expect(requestFingerprint(dto())).toBe(
      requestFingerprint({
        payway: PAYMENT.card,
        currency: 643,
        amount: '100.10',
        shopOrderId: 'o1',
      } as CreateInvoiceDto),
    );
  });

  it('changes with any field, but never depends on card data', () => {
    expect(requestFingerprint(dto({ amount: '100.1' }))).not.toBe(requestFingerprint(dto()));
    const card = { number: '4111111111111111', expiryMonth: '12', expiryYear: '30', cvv: '123' };
    expect(requestFingerprint(dto({ card }))).toBe(requestFingerprint(dto()));
  });
});
