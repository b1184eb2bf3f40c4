import { number as currencyByNumber } from 'currency-codes';
import { moneyText } from '../common/money';

/**
 * Pure formatting for the operators' console: amounts exact (never through a float), with their
 * currency's minor-unit digits and letter code, times in UTC with the offset written out, and the
 * payments-per-hour chart as inline SVG built on the server.
 */

/** ISO 4217 letter code of a numeric currency ("643" → "RUB"); the number itself when unknown. */
export function currencyCode(currency: number | string | null | undefined): string {
  if (currency === null || currency === undefined || currency === '') return '';
  const text = String(currency).padStart(3, '0');
  return currencyByNumber(text)?.code ?? String(currency);
}

/**
 * "1,080.22 USD": the amount written as the service writes it (its currency's minor-unit digits,
 * never rounded), its whole part grouped by thousands, and its letter code once.
 */
export function money(
  amount: string | null | undefined,
  currency: number | string | null | undefined,
): string {
  if (amount === null || amount === undefined || amount === '') return '—';
  const code = currencyCode(currency);
  const text = grouped(moneyText(amount, currency));
  return code ? `${text} ${code}` : text;
}

/** The amount alone, as money() writes it, without the currency ("1,080.22"). */
export function amount(
  value: string | null | undefined,
  currency: number | string | null | undefined,
): string {
  if (value === null || value === undefined || value === '') return '—';
  return grouped(moneyText(value, currency));
}

/** "-1234567.50" → "-1,234,567.50"; text that is not a plain decimal stays as it is. */
function grouped(text: string): string {
  const m = /^(-?)(\d+)(\.\d+)?$/.exec(text);
  if (!m) return text;
  return `${m[1]}${m[2].replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${m[3] ?? ''}`;
}

/** Where the console shows an object of an event or a queue, or null when it has no page. */
export function objectHref(type: string | null | undefined, id: string | null | undefined): string | null {
  if (!type || id === null || id === undefined) return null;
  const at = encodeURIComponent(id);
  switch (type) {
    case 'invoice':
    case 'refund':
    case 'payout':
      return `/admin/ui/${type}s/${at}`;
    case 'reconciliation':
      return `/admin/ui/reconciliations/${at}`;
    case 'payout_batch':
      return `/admin/ui/batches/${at}`;
    case 'payment_token':
      return '/admin/ui/payment-tokens';
    case 'payment_link':
      return `/admin/ui/payment-links/${at}`;
    default:
      return null;
  }
}

/** An object type in words ("payout_batch" → "payout batch"). */
export function objectLabel(type: string | null | undefined): string {
  return type ? type.replace(/_/g, ' ') : '';
}

/** "2026-11-22 05:15:51 +00:00": UTC, seconds precision, offset shown. */
export function utc(value: Date | string | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime())) return '—';
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} +00:00`;
}

/** "2 d 5 h 3 min" from whole seconds (an age; under a minute: "45 s"). */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '—';
  if (seconds < 60) return `${Math.floor(seconds)} s`;
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return [d ? `${d} d` : '', d || h ? `${h} h` : '', `${m} min`].filter(Boolean).join(' ');
}

export interface HourBucket {
  /** Start of the hour. */
  hour: Date;
  total: number;
  succeeded: number;
}

/**
 * Payments per hour as an accessible inline SVG bar chart (a title, a description, one bar per
 * hour: all payments, and the succeeded part drawn over it). Counts only, so plain numbers.
 */
export function hourlyChart(buckets: HourBucket[], width = 720, height = 160): string {
  const max = Math.max(1, ...buckets.map((b) => b.total));
  const pad = 24;
  const slot = buckets.length > 0 ? (width - pad) / buckets.length : width;
  const bar = Math.max(1, slot - 4);
  const scale = (n: number): number => Math.round(((height - pad) * n) / max);
  const bars = buckets
    .map((b, i) => {
      const x = Math.round(pad + i * slot);
      const hAll = scale(b.total);
      const hOk = scale(b.succeeded);
      const label = `${hourLabel(b.hour)} UTC: ${b.total} payments, ${b.succeeded} succeeded`;
      return (
        `<g><title>${label}</title>` +
        `<rect class="bar-all" x="${x}" y="${height - pad - hAll}" width="${bar}" height="${hAll}"/>` +
        `<rect class="bar-ok" x="${x}" y="${height - pad - hOk}" width="${bar}" height="${hOk}"/></g>`
      );
    })
    .join('');
  // Every axis label carries its day, so 23:00 then 00:00 never reads as time running backwards.
  const first = buckets[0] ? hourLabel(buckets[0].hour) : '';
  const last = buckets.length > 0 ? hourLabel(buckets[buckets.length - 1].hour) : '';
  const midnights = buckets
    .map((b, i) => ({ b, i }))
    .filter(({ b, i }) => b.hour.getUTCHours() === 0 && i >= 4 && i <= buckets.length - 5)
    .map(
      ({ b, i }) =>
        `<text class="axis" x="${Math.round(pad + i * slot)}" y="${height - 6}">${hourLabel(b.hour)}</text>`,
    )
    .join('');
  const total = buckets.reduce((s, b) => s + b.total, 0);
  return (
    `<svg class="chart" role="img" aria-labelledby="chart-title chart-desc" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">` +
    `<title id="chart-title">Payments per hour, last ${buckets.length} hours</title>` +
    `<desc id="chart-desc">${total} payments in all; darker bars are the succeeded ones.</desc>` +
    `<text class="axis" x="0" y="12">${max}</text>` +
    `<line class="axis-line" x1="${pad}" y1="${height - pad}" x2="${width}" y2="${height - pad}"/>` +
    bars +
    `<text class="axis" x="${pad}" y="${height - 6}">${first}</text>` +
    midnights +
    `<text class="axis" x="${width}" y="${height - 6}" text-anchor="end">${last}</text>` +
    `</svg>`
  );
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "24 Nov 13:00": an hour on the chart's axis, in UTC, with its day. */
export function hourLabel(hour: Date): string {
  const hh = String(hour.getUTCHours()).padStart(2, '0');
  const mm = String(hour.getUTCMinutes()).padStart(2, '0');
  return `${hour.getUTCDate()} ${MONTHS[hour.getUTCMonth()]} ${hh}:${mm}`;
}

/** The last `hours` whole hours ending with the current one, filled with zeros where empty. */
export function fillHours(
  rows: Array<{ hour: Date; total: number; succeeded: number }>,
  now: Date,
  hours = 24,
): HourBucket[] {
  const end = new Date(now);
  end.setUTCMinutes(0, 0, 0);
  const byHour = new Map(rows.map((r) => [r.hour.getTime(), r]));
  const out: HourBucket[] = [];
  for (let i = hours - 1; i >= 0; i--) {
    const hour = new Date(end.getTime() - i * 3_600_000);
    const r = byHour.get(hour.getTime());
    out.push({ hour, total: r?.total ?? 0, succeeded: r?.succeeded ?? 0 });
  }
  return out;
}
