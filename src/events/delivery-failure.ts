import { withoutAddressSecrets } from '../common/redact';

/**
 * Why a webhook POST failed, in words an operator acts on: `ECONNREFUSED
 * (connection refused)`, `HTTP 500`, `time-out: no answer within 10000 ms`. Node's fetch reports
 * every network failure as `TypeError: fetch failed` and keeps the reason in `cause` (undici's
 * code, e.g. ECONNREFUSED, ENOTFOUND, a TLS certificate code): that reason is what is said. Any
 * address in the text is shown without user information or query (withoutAddressSecrets).
 */
const MEANING: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed while sending',
  UND_ERR_SOCKET: 'connection closed by the receiver',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer headers in time',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate chain self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not verifiable',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate for another host',
};

export function describeDeliveryFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: unknown };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError')
    return `time-out: no answer within ${timeoutMs} ms`;
  // The innermost cause with a code: AggregateErrors (one per address tried) carry theirs inside.
  let cause: unknown = e?.cause;
  for (let depth = 0; depth < 5 && cause !== undefined && cause !== null; depth++) {
    const c = cause as { code?: unknown; errors?: unknown[]; cause?: unknown; message?: string };
    const code =
      typeof c.code === 'string'
        ? c.code
        : Array.isArray(c.errors)
          ? (c.errors
              .map((x) => (x as { code?: unknown }).code)
              .find((x) => typeof x === 'string') as string | undefined)
          : undefined;
    if (code !== undefined) return MEANING[code] ? `${code} (${MEANING[code]})` : code;
    cause = c.cause;
  }
  const inner = e?.cause as { message?: string } | undefined;
  const text = `${e?.name ?? 'Error'}: ${e?.message ?? String(err)}`;
  // fetch quotes the address it refused, credentials and query included: never kept or shown.
  return withoutAddressSecrets(inner?.message ? `${text} (${inner.message})` : text);
}
