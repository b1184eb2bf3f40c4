import {
  currencyCode,
  duration,
  fillHours,
  hourLabel,
  hourlyChart,
  money,
  utc,
} from './console-format';
import { fieldLabel, fmtField } from './console-fields';

describe('console formatting', () => {
  it.each([
    ['100.10', 643, '100.10 RUB'],
    ['150000', 643, '150,000.00 RUB'],
    ['1080.22', 840, '1,080.22 USD'],
    ['0', 840, '0.00 USD'],
    ['-1000000', 643, '-1,000,000.00 RUB'],
    ['1000', 392, '1,000 JPY'],
    ['500.00', 392, '500 JPY'],
    ['12345678901234567.12345678', 978, '12,345,678,901,234,567.12345678 EUR'],
    ['5.5', 999999, '5.5 999999'],
    ['7', null, '7'],
    [null, 643, '—'],
  ])('shows %s in currency %s with its minor-unit digits, grouped, the code once: %s', (amount, currency, shown) => {
    expect(money(amount, currency)).toBe(shown);
  });

  it.each([
    [643, 'RUB'],
    ['840', 'USD'],
    [36, 'AUD'],
    [1, '1'],
  ])('currency %s is %s', (n, code) => expect(currencyCode(n)).toBe(code));

  it.each([
    ['2026-11-22T05:15:51.123Z', '2026-11-22 05:15:51 +00:00'],
    ['2026-11-22T08:15:51+03:00', '2026-11-22 05:15:51 +00:00'],
    ['not a date', '—'],
    [null, '—'],
  ])('time %s is shown in UTC with its offset: %s', (t, shown) => expect(utc(t)).toBe(shown));

  it('formats view fields: amounts with their currency, times in UTC, objects as JSON', () => {
    const payout = {
      amount: '10.00',
      shopCurrency: 643,
      psCurrency: 840,
      payeeReceive: '0.13',
      createdAt: '2026-01-01T00:00:00.000Z',
    };
    expect(fmtField('amount', payout.amount, payout)).toEqual({ text: '10.00 RUB', num: true });
    expect(fmtField('payeeReceive', payout.payeeReceive, payout)).toEqual({
      text: '0.13 USD',
      num: true,
    });
    expect(fmtField('createdAt', payout.createdAt, payout)).toEqual({
      text: '2026-01-01 00:00:00 +00:00',
      num: false,
    });
    expect(fmtField('redirect', { method: 'GET', url: 'https://pay.example/x', params: {} }, payout).text).toBe(
      'GET https://pay.example/x',
    );
    expect(fmtField('metadata', { a: '1' }, payout).text).toBe('{"a":"1"}');
    expect(fmtField('gatewayStatus', 4, payout, (n) => (n === 4 ? 'succeeded' : null)).text).toBe('4 (succeeded)');
    expect(fmtField('psCurrency', 840, payout).text).toBe('USD (840)');
    expect(fieldLabel('refundableAmount')).toBe('Refundable amount');
    expect(fmtField('processedAt', null, payout).text).toBe('—');
  });

  it("shows an invoice's refund sums with its currency", () => {
    const invoice = {
      currency: 643,
      refundedAmount: '30.00',
      refundPendingAmount: '20.00',
      refundableAmount: '50.00',
    };
    expect(fmtField('refundedAmount', invoice.refundedAmount, invoice)).toEqual({
      text: '30.00 RUB',
      num: true,
    });
    expect(fmtField('refundPendingAmount', invoice.refundPendingAmount, invoice)).toEqual({
      text: '20.00 RUB',
      num: true,
    });
    expect(fmtField('refundableAmount', invoice.refundableAmount, invoice)).toEqual({
      text: '50.00 RUB',
      num: true,
    });
  });

  it('fills the last 24 hours with zeros and keeps the counts of the hours it has', () => {
    const now = new Date('2026-11-22T05:40:00Z');
    const rows = [{ hour: new Date('2026-11-22T03:00:00Z'), total: 4, succeeded: 3 }];
    const hours = fillHours(rows, now);
    expect(hours).toHaveLength(24);
    expect(hours[23].hour.toISOString()).toBe('2026-11-22T05:00:00.000Z');
    expect(hours[0].hour.toISOString()).toBe('2026-11-21T06:00:00.000Z');
    expect(hours.find((h) => h.total > 0)).toEqual({ hour: rows[0].hour, total: 4, succeeded: 3 });
    expect(hours.reduce((s, h) => s + h.total, 0)).toBe(4);
  });

  it('draws one labelled bar pair per hour, the tallest at full height', () => {
    const now = new Date('2026-11-22T05:40:00Z');
    const svg = hourlyChart(
      fillHours([{ hour: new Date('2026-11-22T05:00:00Z'), total: 10, succeeded: 5 }], now),
      720,
      160,
    );
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('role="img"');
    expect(svg.match(/class="bar-all"/g)).toHaveLength(24);
    expect(svg).toContain('22 Nov 05:00 UTC: 10 payments, 5 succeeded');
    expect(svg).toContain('height="136"'); // 160 - 24 of padding: the maximum
    expect(svg).toContain('height="68"'); // half of it succeeded
    expect(svg).toContain('10 payments in all');
  });

  it('dates every axis label, so the hours never read as reversed around midnight', () => {
    // 24 Nov 13:00 … 25 Nov 12:00: the axis crosses midnight.
    const svg = hourlyChart(fillHours([], new Date('2026-11-25T12:10:00Z')));
    const axis = [...svg.matchAll(/<text class="axis"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(axis).toEqual(['1', '24 Nov 13:00', '25 Nov 00:00', '25 Nov 12:00']);
    expect(svg).toContain('<title>24 Nov 23:00 UTC: 0 payments, 0 succeeded</title>');
    expect(svg).toContain('<title>25 Nov 00:00 UTC: 0 payments, 0 succeeded</title>');
  });

  it.each([
    ['2026-01-01T00:00:00Z', '1 Jan 00:00'],
    ['2026-12-31T23:00:00Z', '31 Dec 23:00'],
    ['2024-02-29T09:00:00Z', '29 Feb 09:00'],
  ])('hour %s is labelled %s (UTC, whatever the local zone)', (t, shown) => {
    expect(hourLabel(new Date(t))).toBe(shown);
  });
});

describe('duration', () => {
  it.each([
    [0, '0 s'],
    [59, '59 s'],
    [60, '1 min'],
    [3600, '1 h 0 min'],
    [90061, '1 d 1 h 1 min'],
    [86400 * 3 + 120, '3 d 0 h 2 min'],
    [-1, '—'],
  ])('%d s → %s', (s, text) => {
    expect(duration(s)).toBe(text);
  });
});
