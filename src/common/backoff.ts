/**
 * Rule "how long to wait before asking again": `baseS` doubled `doublings` times, at most `maxS`
 * (an hour unless told). The one backoff of the reconcilers: a refund waits its grace × 2^attempts
 * (its first question comes one grace after the submit); an invoice waits grace × 2^(attempts+1)
 * (its create already waited one grace before the first check). The exponent is held at 30 so
 * the figure stays finite for any attempt count; the cap decides long before.
 */
export function backoffSeconds(baseS: number, doublings: number, maxS = 3600): number {
  return Math.min(baseS * 2 ** Math.min(Math.max(0, doublings), 30), maxS);
}
