import { escapeHtml as e } from '../invoices/redirect-page';
import type { LinkPage, LinkSummary } from './operations/pay-by-link';

/**
 * The payer's page of a payment link as HTML: every text from the link, the payway
 * configuration or the payer is escaped here, at the boundary; no script; the form posts to the
 * page itself. The status code goes with the page (410 for an expired or deactivated link).
 */
export interface RenderedPage {
  status: number;
  html: string;
  location?: string;
}

export function renderLinkPage(page: LinkPage, nonce: string): RenderedPage {
  switch (page.kind) {
    case 'go':
      return { status: 303, html: '', location: page.location };
    case 'not_found':
      return {
        status: 404,
        html: layout('Payment link not found', nonce, null, '<p>There is no payment at this address. Please check the link the shop sent you.</p>'),
      };
    case 'receipt':
      return {
        status: 200,
        html: layout(
          'Payment received',
          nonce,
          page.link,
          `<section id="receipt"><p>This payment is complete. Thank you.</p>
<dl><dt>Reference</dt><dd id="receipt-order">${e(page.paid.shopOrderId)}</dd>
<dt>Paid</dt><dd id="receipt-amount">${e(amountText(page.paid.amount, page.link))}</dd>
${page.paid.paidAt ? `<dt>Date</dt><dd id="receipt-date">${e(page.paid.paidAt)}</dd>` : ''}</dl></section>`,
        ),
      };
    case 'gone':
      return {
        status: 410,
        html: layout(
          page.status === 'expired' ? 'Payment link expired' : 'Payment link no longer active',
          nonce,
          page.link,
          `<p id="gone" data-status="${e(page.status)}">${
            page.status === 'expired'
              ? 'This payment link has expired and takes no payment.'
              : 'The shop has deactivated this payment link; it takes no payment.'
          } Please contact the shop.</p>`,
        ),
      };
    case 'in_progress':
      return {
        status: 409,
        html: layout(
          'Payment in progress',
          nonce,
          page.link,
          `<p id="in-progress">A payment of this link is already in progress. Wait for it to finish, then reload this page.</p>${
            page.continueUrl ? `<p><a id="continue" href="${e(page.continueUrl)}">Continue the payment in progress</a></p>` : ''
          }`,
        ),
      };
    case 'failed':
      return { status: page.status, html: layout('Payment not started', nonce, page.link, `<p id="failed">${e(page.message)}</p>`) };
    case 'choose':
      return {
        status: page.errors.length > 0 ? 400 : 200,
        html: layout(
          'Choose how to pay',
          nonce,
          page.link,
          `${errorList(page.errors)}<form id="choose" method="get" action="/pay/l/${e(page.link.id)}">
<fieldset><legend>Payment method</legend>
${page.payways
  .map(
    (p, i) =>
      `<div><input type="radio" name="payway" id="payway-${i}" value="${e(p)}"${i === 0 ? ' checked' : ''}><label for="payway-${i}">${e(p)}</label></div>`,
  )
  .join('\n')}
</fieldset><button type="submit" id="next">Continue</button></form>`,
        ),
      };
    case 'fields':
      return {
        status: page.errors.length > 0 ? 400 : 200,
        html: layout(
          'Pay',
          nonce,
          page.link,
          `${errorList(page.errors)}<form id="pay" method="post" action="/pay/l/${e(page.link.id)}">
<p>Payment method: <strong id="chosen">${e(page.payway)}</strong>${
            page.canChoose ? ` (<a href="/pay/l/${e(page.link.id)}">change</a>)` : ''
          }</p>
<input type="hidden" name="payway" value="${e(page.payway)}">
<input type="hidden" name="attempt" value="${e(page.token)}">
${page.fields
  .map(
    (f) => `<div class="field"><label for="f-${e(f.name)}">${e(f.label)}</label>
<input id="f-${e(f.name)}" name="extras.${e(f.name)}" value="${e(f.value)}"${f.example ? ` placeholder="${e(f.example)}"` : ''}>
${f.hint ? `<small>${e(f.hint)}</small>` : ''}</div>`,
  )
  .join('\n')}
<button type="submit" id="submit">Pay ${e(amountText(page.link.amount, page.link))}</button></form>`,
        ),
      };
  }
}

function amountText(amount: string, link: LinkSummary): string {
  return `${amount} ${link.currencyCode ?? String(link.currency)}`;
}

function errorList(errors: ReadonlyArray<{ field: string; message: string }>): string {
  if (errors.length === 0) return '';
  return `<ul id="errors" role="alert">${errors
    .map((x) => `<li data-field="${e(x.field)}">${e(x.field)}: ${e(x.message)}</li>`)
    .join('')}</ul>`;
}

function layout(title: string, nonce: string, link: LinkSummary | null, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="referrer" content="no-referrer">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${e(title)}</title>
  <style nonce="${e(nonce)}">body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}
#errors{color:#a00}.field{margin:.75rem 0}.field input{display:block;width:100%;padding:.4rem}
button{padding:.5rem 1rem;margin-top:1rem}dt{font-weight:bold}</style>
</head>
<body>
  <h1>${e(title)}</h1>
${
  link
    ? `  <section id="what"><p id="description">${e(link.description)}</p><p id="amount">${e(amountText(link.amount, link))}</p></section>\n`
    : ''
}${body}
</body>
</html>
`;
}
