import { currencyCodeOf, currencyName } from '../../common/currency';
import { DomainError, GatewayFailure, ValidationFailed } from '../../common/errors';
import { GatewayError, GatewayTransportError } from '../../gateway/gateway.errors';
import type { InputPayway } from '../../gateway/gateway.types';
import { boundsCheckFor } from '../../payway-config/currency-conversion';
import type { QuoteInvoiceDto } from '../dto/create-invoice.dto';

/** A failed call in a word or two, for logs and audit details (never the gateway's message). */
export function describe(err: unknown): string {
  if (err instanceof GatewayError) return `gateway error ${err.errorCode}`;
  if (err instanceof GatewayTransportError) return `transport ${err.kind}`;
  return err instanceof Error ? err.name : 'error';
}

/** A gateway failure as the shop sees it: 502 with the gateway's code, message and fatality. */
export function gatewayFailure(err: unknown, call: string): DomainError {
  if (err instanceof DomainError) return err;
  if (err instanceof GatewayError) {
    return new GatewayFailure(
      `${call} failed: ${err.gatewayMessage}`,
      err.errorCode,
      err.gatewayMessage,
      err.fatal,
    );
  }
  if (err instanceof GatewayTransportError) {
    const status = err.kind === 'timeout' ? 504 : 502;
    return new GatewayFailure(
      `${call}: no answer from the gateway (${err.kind})`,
      null,
      null,
      null,
      status,
    );
  }
  throw err;
}

/**
 * invoice/try refused an order in another currency than its payway's: the gateway cannot price
 * it in the payway's currency (no rate, or the price falls outside the payway's bounds). That is
 * the caller's currency choice, answered as a 400 naming `currency`, never a gateway 5xx; a
 * transport failure or an unclassified code stays a gateway failure.
 */
export function pricingFailure(
  err: unknown,
  dto: QuoteInvoiceDto,
  payway: InputPayway,
): DomainError {
  if (
    err instanceof GatewayError &&
    err.fatal === true &&
    boundsCheckFor(dto.currency, payway.currency) === 'gateway'
  ) {
    const paywayCurrency = currencyCodeOf(payway.currency);
    const theirs = paywayCurrency === null ? 'its own currency' : currencyName(paywayCurrency);
    return new ValidationFailed(
      [
        {
          field: 'currency',
          message:
            `${currencyName(dto.currency)}: the gateway would not price this order in the currency of payway ` +
            `${dto.payway}, ${theirs} (gateway error ${err.errorCode}: no rate, or a price outside the payway's ` +
            `limits); send the amount in ${theirs}, or check it first with POST /api/v1/invoices/quote`,
        },
      ],
      { gatewayErrorCode: err.errorCode, fatal: true },
    );
  }
  return gatewayFailure(err, 'invoice/try');
}
