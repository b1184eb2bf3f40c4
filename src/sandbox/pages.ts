import { currencyAlpha } from './payway-catalogue';
import { MONEY_SCALE } from './decimal';
import { INVOICE_STATUS, Invoice } from './sandbox.state';

/** The HTML the payer sees: payer page, 3-D Secure page, browser-information step, results. */

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function layout(title: string, body: string, script = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem}dt{color:#555}
button{font-size:1rem;padding:.5rem 1.5rem;margin-right:.5rem}.note{color:#777;font-size:.85rem}</style>
</head><body>
<p class="note">Gateway sandbox: no money moves.</p>
${body}
${script === '' ? '' : `<script>${script}</script>`}
</body></html>`;
}

function orderDetails(invoice: Invoice): string {
  const currency = currencyAlpha(invoice.currency);
  return `<dl>
<dt>Shop order</dt><dd id="order">${esc(invoice.shopOrderId)}</dd>
<dt>Description</dt><dd id="description">${esc(invoice.description)}</dd>
<dt>Amount</dt><dd id="amount">${invoice.amount.toFixed(MONEY_SCALE)} ${currency}</dd>
<dt>To pay</dt><dd id="price">${invoice.clientPrice.toFixed(MONEY_SCALE)} ${currency}</dd>
<dt>Payment method</dt><dd>${esc(invoice.paywayConfig.paymethod_name)}</dd>
</dl>`;
}

export function payerPage(invoice: Invoice): string {
  return layout(
    `Payment ${invoice.id}`,
    `<h1>Payment</h1>
${orderDetails(invoice)}
<form method="post" action="/sandbox/pay/${invoice.id}/complete">
<button id="pay" type="submit" name="action" value="pay">Pay</button>
<button id="decline" type="submit" name="action" value="decline">Decline</button>
</form>`,
  );
}

export function threeDsPage(invoice: Invoice): string {
  return layout(
    `3-D Secure ${invoice.id}`,
    `<h1>3-D Secure check</h1>
<p>Card ${esc(invoice.cardMask ?? '')}. Confirm the payment as your bank would ask you to.</p>
${orderDetails(invoice)}
<form method="post" action="/sandbox/3ds/${invoice.id}/complete">
<button id="confirm" type="submit" name="action" value="confirm">Confirm</button>
<button id="cancel" type="submit" name="action" value="cancel">Cancel</button>
</form>`,
  );
}

/** Browser fields of `client_info` a page can read (all but browser_accept_header). */
export const BROWSER_FIELDS = [
  'browser_java_enabled',
  'browser_javascript_enabled',
  'browser_language',
  'browser_color_depth',
  'browser_screen_height',
  'browser_screen_width',
  'browser_tz',
  'browser_user_agent',
  'challenge_window_size',
] as const;

/** Collects browser information with a script and posts it on; without a script, a button. */
export function browserInfoPage(invoice: Invoice): string {
  const inputs = BROWSER_FIELDS.map(
    (f) => `<input type="hidden" name="${f}" id="${f}" value="">`,
  ).join('\n');
  const script = `var v={browser_java_enabled:'false',browser_javascript_enabled:'true',
browser_language:navigator.language||'',browser_color_depth:String(screen.colorDepth),
browser_screen_height:String(screen.height),browser_screen_width:String(screen.width),
browser_tz:String(new Date().getTimezoneOffset()),browser_user_agent:navigator.userAgent,
challenge_window_size:'05'};
for(var k in v){document.getElementById(k).value=v[k];}
document.getElementById('collect').submit();`;
  return layout(
    `Checking your browser`,
    `<h1>Checking your browser…</h1>
<form id="collect" method="post" action="/sandbox/browser-info/${invoice.id}/submit">
${inputs}
<noscript><button id="continue" type="submit">Continue</button></noscript>
</form>`,
    script,
  );
}

/** The outcome, with a link back to the shop when it gave one. */
export function resultPage(invoice: Invoice): string {
  const paid = invoice.status === INVOICE_STATUS.PAID || invoice.status === INVOICE_STATUS.HELD;
  const declined = invoice.status === INVOICE_STATUS.REJECTED;
  const heading = paid
    ? invoice.status === INVOICE_STATUS.HELD
      ? 'Payment authorised: funds held'
      : 'Payment successful'
    : declined
      ? 'Payment declined'
      : 'Payment is being processed';
  const back = paid ? invoice.urls.success : declined ? invoice.urls.failed : undefined;
  const link =
    back === undefined ? '' : `<p><a id="return" href="${esc(back)}">Return to the shop</a></p>`;
  return layout(
    heading,
    `<h1 id="result" data-status="${invoice.status}">${heading}</h1>
${orderDetails(invoice)}
${link}`,
  );
}

export function messagePage(title: string, text: string): string {
  return layout(title, `<h1>${esc(title)}</h1><p>${esc(text)}</p>`);
}

/** What a proxy in front of the gateway shows on a crash (the http500 fault). */
export function serverErrorPage(): string {
  return '<html><head><title>500 Internal Server Error</title></head><body><center><h1>500 Internal Server Error</h1></center><hr><center>nginx</center></body></html>';
}

/** What a proxy shows when the gateway did not answer in time (the timeout_not_done fault). */
export function gatewayTimeoutPage(): string {
  return '<html><head><title>504 Gateway Time-out</title></head><body><center><h1>504 Gateway Time-out</h1></center><hr><center>nginx</center></body></html>';
}
