import type { RedirectData } from './invoice.entity';

/**
 * The payer's way to the gateway (spec rule 6): POST → an HTML form posted to `url` with one
 * hidden input per parameter, submitted by a script carrying the response's CSP nonce (a button
 * when script is off); GET → a 302 to `url?query`, percent-encoded. Only http(s) addresses are
 * followed; a final invoice gets a status page instead.
 */
export type PayerStep =
  | { kind: 'form'; html: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'status'; html: string }
  | { kind: 'blocked'; html: string };

export function payerStep(redirect: RedirectData, nonce: string): PayerStep {
  if (!isHttpUrl(redirect.url))
    return {
      kind: 'blocked',
      html: messagePage(
        'Payment unavailable',
        'This payment cannot continue. Please contact the shop.',
      ),
    };
  if (redirect.method === 'GET')
    return { kind: 'redirect', location: redirectLocation(redirect.url, redirect.params) };
  return { kind: 'form', html: autoSubmitForm(redirect.url, redirect.params, nonce) };
}

/** Whether an address from the gateway may be sent to a browser: absolute http or https only. */
export function isHttpUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/** What the payer sees on the link of a final invoice. */
export function statusPage(paid: boolean): string {
  return paid
    ? messagePage('Payment received', 'This order is paid. You can close this page.')
    : messagePage('Payment not completed', 'This order was not paid. Please return to the shop.');
}

function messagePage(title: string, text: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="referrer" content="no-referrer">
  <title>${escapeHtml(title)}</title>
</head>
<body>
  <h1>${escapeHtml(title)}</h1>
  <p>${escapeHtml(text)}</p>
</body>
</html>
`;
}

/** `url?query`; a url that already has a query gets the parameters appended with `&`. */
export function redirectLocation(url: string, params: Record<string, string>): string {
  const query = new URLSearchParams(params).toString();
  if (query === '') return url;
  return `${url}${url.includes('?') ? '&' : '?'}${query}`;
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export function autoSubmitForm(url: string, params: Record<string, string>, nonce: string): string {
  const inputs = Object.entries(params)
    .map(
      ([name, value]) =>
        `    <input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`,
    )
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="referrer" content="no-referrer">
  <title>Redirecting to payment</title>
</head>
<body>
  <form method="post" action="${escapeHtml(url)}">
${inputs}
    <noscript><button type="submit">Continue to payment</button></noscript>
  </form>
  <script nonce="${escapeHtml(nonce)}">document.forms[0].submit();</script>
</body>
</html>
`;
}

/** Redirect parameters as text: the gateway's `data` holds strings, numbers sent as text. */
export function redirectParams(
  data: Record<string, unknown> | null | undefined,
): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(data ?? {})) {
    if (v === null || v === undefined) continue;
    params[k] =
      typeof v === 'string'
        ? v
        : typeof v === 'object'
          ? JSON.stringify(v)
          : String(v as number | boolean | bigint);
  }
  return params;
}
