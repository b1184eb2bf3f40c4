import type { RedirectData } from './invoice.entity';

/**
 * The payer's way to the gateway (spec rule 6): POST → an HTML form posted to `url` with one
 * hidden input per parameter, submitted by script (a button when script is off); GET → a 302
 * to `url?query`, percent-encoded.
 */
export type PayerStep = { kind: 'form'; html: string } | { kind: 'redirect'; location: string };

export function payerStep(redirect: RedirectData): PayerStep {
  if (redirect.method === 'GET')
    return { kind: 'redirect', location: redirectLocation(redirect.url, redirect.params) };
  return { kind: 'form', html: autoSubmitForm(redirect.url, redirect.params) };
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

export function autoSubmitForm(url: string, params: Record<string, string>): string {
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
<body onload="document.forms[0].submit()">
  <form method="post" action="${escapeHtml(url)}">
${inputs}
    <noscript><button type="submit">Continue to payment</button></noscript>
  </form>
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
