import { scrubText } from '../common/logger';
import type { GatewayCall } from '../config/config';

/**
 * The two ways a gateway call fails. `GatewayError`: the gateway answered `result: false`.
 * `GatewayTransportError`: no usable answer. On both, `outcomeUnknown` says whether money may
 * have moved: settle it with a status call before anything is repeated.
 */

/** Calls that move money: an error on them that is not known to be fatal leaves the outcome open. */
const MONEY_MOVING: ReadonlySet<GatewayCall> = new Set<GatewayCall>([
  'invoice/create',
  'invoice/hold',
  'invoice/charge',
  'invoice/unhold',
  'invoice/create-refund',
  'withdraw/create',
]);

export interface GatewayErrorInit {
  call: GatewayCall;
  errorCode: number;
  gatewayMessage: string;
  fatal: boolean | null;
  httpStatus: number;
  isDuplicate: boolean;
  isAbsent: boolean;
  /** The envelope's `data`, parsed exactly (a refund may come back FAILED with result: false). */
  data?: unknown;
}

export class GatewayError extends Error {
  readonly call: GatewayCall;
  readonly errorCode: number;
  /** The gateway's message, scrubbed of anything that looks like a sign string or secret. */
  readonly gatewayMessage: string;
  /** From configuration: true fatal, false non-fatal, null not known. */
  readonly fatal: boolean | null;
  readonly httpStatus: number;
  /** The shop's id was already used: the object exists. */
  readonly isDuplicate: boolean;
  /** A status call found no such object: a create may be repeated. */
  readonly isAbsent: boolean;
  /**
   * True for a money-moving call whose code is not known to be fatal (non-fatal: wait for the
   * notification; unknown: check the status). Read-only calls never leave an outcome open.
   */
  readonly outcomeUnknown: boolean;
  readonly data: unknown;

  constructor(init: GatewayErrorInit) {
    super(`Gateway ${init.call} failed with error ${init.errorCode}: ${init.gatewayMessage}`);
    this.name = 'GatewayError';
    this.call = init.call;
    this.errorCode = init.errorCode;
    this.gatewayMessage = init.gatewayMessage;
    this.fatal = init.fatal;
    this.httpStatus = init.httpStatus;
    this.isDuplicate = init.isDuplicate;
    this.isAbsent = init.isAbsent;
    this.outcomeUnknown = MONEY_MOVING.has(init.call) && init.fatal !== true;
    this.data = init.data;
  }
}

export type TransportErrorKind = 'connect' | 'timeout' | 'reset' | 'bad_response';

export class GatewayTransportError extends Error {
  /** True when the gateway may have processed the request. */
  readonly outcomeUnknown: boolean;

  constructor(
    readonly call: GatewayCall,
    readonly kind: TransportErrorKind,
    detail: string,
    /** The system error code (ECONNREFUSED, ...) or HTTP status text, when there is one. */
    readonly code?: string,
    readonly httpStatus?: number,
  ) {
    super(`Gateway ${call} ${kind}: ${detail}`);
    this.name = 'GatewayTransportError';
    this.outcomeUnknown = kind !== 'connect';
  }
}

/** True when the request may have been processed: check its status before acting again. */
export function isOutcomeUnknown(err: unknown): boolean {
  return (
    (err instanceof GatewayTransportError || err instanceof GatewayError) && err.outcomeUnknown
  );
}

const HEX64 = /\b[0-9a-f]{64}\b/gi;
/** Colon-joined runs such as `100.00:643:card:1001:order-1`: the shape of a string-to-sign. */
const JOINED = /\S+:\S+/g;

/** Removes the secret, 64-hex digests, colon-joined value runs and card numbers from gateway text. */
export function scrubGatewayText(text: string, secret: string): string {
  const withoutSecret = secret.length > 0 ? text.split(secret).join('[redacted]') : text;
  return scrubText(withoutSecret.replace(HEX64, '[redacted]').replace(JOINED, '[redacted]'));
}
