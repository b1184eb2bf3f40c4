/**
 * Pure mapping of the shop's create request: its idempotency fingerprint (card data excluded)
 * and the gateway's invoice/create body.
 */
import { createHash } from 'node:crypto';
import type { ClientInfo, InvoiceCreateRequest } from '../gateway/gateway.types';
import type { ClientInfoDto, CreateInvoiceDto } from './dto/create-invoice.dto';

/** JSON with object keys sorted at every level, so key order never changes the fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * SHA-256 of the request as the shop sent it, without `card`: card data is never stored, not
 * even hashed (a 16-digit number is cheap to brute-force from its hash).
 */
export function requestFingerprint(dto: CreateInvoiceDto): string {
  const { card: _card, ...rest } = dto;
  void _card;
  // With paymentTokenFrom the token was looked up, not sent: the request is what the shop sent.
  if (rest.paymentTokenFrom !== undefined) delete rest.paymentToken;
  return createHash('sha256').update(canonicalJson(rest)).digest('hex');
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
