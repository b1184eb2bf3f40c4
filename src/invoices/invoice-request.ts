/**
 * Pure mapping of the shop's create request: its idempotency fingerprint (card data excluded)
 * and the gateway's invoice/create body.
 */
import type { ClientInfo, InvoiceCreateRequest } from '../gateway/gateway.types';
import type { ClientInfoDto, CreateInvoiceDto } from './dto/create-invoice.dto';
import { canonicalJson } from '../common/idempotency';
import { sha256Hex } from '../common/sha256';
import { Amount } from '../common/money';

export { canonicalJson };

/**
 * SHA-256 of the request as the shop sent it, without `card`: card data is never stored, not
 * even hashed (a 16-digit number is cheap to brute-force from its hash). The form rows written
 * before fingerprints were keyed hold (amount as spelled); only ever compared with.
 */
export function requestFingerprint(dto: CreateInvoiceDto): string {
  const { card: _card, metadata: _metadata, ...rest } = dto;
  void _card;
  void _metadata;
  // With paymentTokenFrom the token was looked up, not sent: the request is what the shop sent.
  if (rest.paymentTokenFrom !== undefined) delete rest.paymentToken;
  return sha256Hex(canonicalJson(rest));
}

/** Fields a conflict answer never compares one by one (see secretFieldsEntry). */
export const INVOICE_SECRET_FIELDS = ['card', 'paymentToken', 'paymentTokenFrom'] as const;

/**
 * The request's secret fields as the shop sent them, for its conflict answer (secretFieldsSent):
 * `paymentToken` looked up from `paymentTokenFrom` was not sent.
 */
export function invoiceSecretFieldsSent(dto: CreateInvoiceDto): Partial<CreateInvoiceDto> {
  return dto.paymentTokenFrom !== undefined ? { ...dto, paymentToken: undefined } : dto;
}

/**
 * The create's non-secret fields, canonical (the amount by value, the currency as its number,
 * empty extras and metadata as none), stored on the row so a conflicting repeat can be told
 * which fields differ.
 */
export function invoiceRequestFacts(dto: CreateInvoiceDto): Record<string, unknown> {
  return JSON.parse(canonicalFactsText(dto)) as Record<string, unknown>;
}

/** invoiceRequestFacts as its canonical JSON text (keys sorted at every level). */
function canonicalFactsText(dto: CreateInvoiceDto): string {
  const hasExtras =
    dto.extras !== undefined && dto.extras !== null && Object.keys(dto.extras).length > 0;
  const hasMetadata =
    dto.metadata !== undefined && dto.metadata !== null && Object.keys(dto.metadata).length > 0;
  return canonicalJson({
    amount: Amount.isValid(dto.amount) ? Amount.parse(dto.amount).canonicalText() : dto.amount,
    currency: dto.currency,
    payway: dto.payway,
    description: dto.description ?? null,
    twoStep: dto.twoStep ?? false,
    extras: hasExtras ? dto.extras : null,
    clientIp: dto.clientIp ?? null,
    clientInfo: dto.clientInfo ?? null,
    savePaymentToken: dto.savePaymentToken ?? false,
    successUrl: dto.successUrl ?? null,
    failedUrl: dto.failedUrl ?? null,
    metadata: hasMetadata ? dto.metadata : null,
    // Only when sent: the facts (and fingerprints) of creates without it stay as they were.
    ...(dto.holdPolicy !== undefined ? { holdPolicy: dto.holdPolicy } : {}),
  });
}

/**
 * What a create stores of its request, in one canonical pass: the facts' canonical text (the
 * row's request_facts) and the fingerprint of rows written since the facts: SHA-256 of
 * `{v: 2, facts, secret}` canonical, where `secret` is what a repeat must match too (the token,
 * or the invoice it was taken from; card excluded as before) and `v: 2` keeps it apart from the
 * older form. Canonical text is its own canonical form once parsed (keys sorted, numbers and
 * strings as JSON.stringify writes them), so the fingerprint's text is the facts' text put in its
 * sorted place (facts, secret, v) instead of being made again: the spec holds it to the object's
 * canonical JSON, as the fingerprint was first made.
 */
export function invoiceRequestIdentity(dto: CreateInvoiceDto): {
  factsJson: string;
  fingerprint: string;
} {
  const factsJson = canonicalFactsText(dto);
  const secret =
    dto.paymentTokenFrom !== undefined
      ? { paymentTokenFrom: dto.paymentTokenFrom }
      : { paymentToken: dto.paymentToken ?? null };
  const fingerprint = sha256Hex(`{"facts":${factsJson},"secret":${canonicalJson(secret)},"v":2}`);
  return { factsJson, fingerprint };
}

function clientInfoBody(ci: ClientInfoDto | undefined): ClientInfo | undefined {
  if (!ci) return undefined;
  return {
    browser_accept_header: ci.browserAcceptHeader,
    browser_java_enabled: ci.browserJavaEnabled,
    browser_javascript_enabled: ci.browserJavascriptEnabled,
    browser_language: ci.browserLanguage,
    browser_color_depth: ci.browserColorDepth,
    browser_screen_height: ci.browserScreenHeight,
    browser_screen_width: ci.browserScreenWidth,
    browser_tz: ci.browserTz,
    browser_user_agent: ci.browserUserAgent,
    challenge_window_size: ci.challengeWindowSize,
  };
}

/**
 * The invoice/create (or invoice/hold) body. Both callbacks point at this service's webhook (the
 * gateway adds `?type=`). Without `clientInfo` a card payment is sent as is: the gateway's
 * redirect collects the browser data (spec rule 7).
 */
export function gatewayCreateRequest(
  dto: CreateInvoiceDto,
  webhookUrl: string,
): InvoiceCreateRequest {
  return {
    shop_order_id: dto.shopOrderId,
    amount: dto.amount,
    currency: dto.currency,
    payway: dto.payway,
    description: dto.description,
    client_ip: dto.clientIp,
    success_url: dto.successUrl,
    failed_url: dto.failedUrl,
    callback_url: webhookUrl,
    callback_rejected_url: webhookUrl,
    card: dto.card
      ? {
          number: dto.card.number,
          // Omitted when not given (JSON drops undefined); the gateway treats it as optional.
          cardholder: dto.card.cardholder as string,
          expiry_month: dto.card.expiryMonth,
          expiry_year: dto.card.expiryYear,
          cvv: dto.card.cvv,
        }
      : undefined,
    issue_payment_token: dto.savePaymentToken ? true : undefined,
    payment_token: dto.paymentToken,
    client_info: clientInfoBody(dto.clientInfo),
    extras: dto.extras && Object.keys(dto.extras).length > 0 ? dto.extras : undefined,
  };
}
