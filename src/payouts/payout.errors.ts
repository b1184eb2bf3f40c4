import { GatewayFailure } from '../common/errors';
import { GatewayError, GatewayTransportError } from '../gateway';

/** A read-only gateway call (quote, account check, balance) that failed, as a problem. */
export function gatewayFailure(call: string, err: unknown): unknown {
  if (err instanceof GatewayError) {
    return new GatewayFailure(
      `${call} was refused by the gateway`,
      err.errorCode,
      err.gatewayMessage,
      err.fatal,
      err.fatal === true ? 422 : 502,
    );
  }
  if (err instanceof GatewayTransportError) {
    return new GatewayFailure(
      `${call} got no usable answer (${err.kind})`,
      null,
      null,
      null,
      err.kind === 'timeout' ? 504 : 502,
    );
  }
  return err;
}
