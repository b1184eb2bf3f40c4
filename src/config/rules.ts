/**
 * The rules that span several variables, each a named function: which settings go together,
 * which must be longer than which, and what is refused outside sandbox mode. Each throws a
 * one-line ConfigError naming the variable to change, never a secret's value.
 */
import type { Amount } from '../common/money';
import { ConfigError, type Env, list, str } from './parse';
import {
  SANDBOX_DEFAULT_PAYOUT_SECRET,
  SANDBOX_DEFAULT_PAYOUT_SHOP_ID,
  SANDBOX_DEFAULT_SECRET,
  SANDBOX_DEFAULT_SHOP_ID,
  V,
} from './schema';
import { wideTrustProblem } from './trusted-proxies';
import type { ApprovalThresholds, GatewayShop, SandboxConfig, TrustProxy } from './types';

/** The built-in sandbox is for development only: production names a real gateway. */
export function requireGatewayInProduction(env: Env, gatewayBaseUrl: string | undefined): void {
  if (gatewayBaseUrl === undefined && str(env, 'NODE_ENV') === 'production') {
    throw new ConfigError(
      'GATEWAY_BASE_URL',
      'is required with NODE_ENV=production (the built-in sandbox is for development only)',
    );
  }
}

/** The base URL with its trailing slash; a real gateway's ends in /gateway/v1/. */
export function gatewayBaseUrl(configured: string | undefined, sandboxPort: number): string {
  let baseUrl = configured ?? `http://127.0.0.1:${sandboxPort}/gateway/v1/`;
  if (!baseUrl.endsWith('/')) baseUrl += '/';
  if (configured !== undefined && !/\/gateway\/v1\/$/.test(baseUrl)) {
    throw new ConfigError('GATEWAY_BASE_URL', 'must end in /gateway/v1/');
  }
  return baseUrl;
}

/** A real gateway needs the payment shop's id and secret; the sandbox lends its own. */
export function paymentShop(env: Env, sandbox: SandboxConfig, sandboxMode: boolean): GatewayShop {
  const shopIdRaw = str(env, 'GATEWAY_SHOP_ID');
  const secret = V.GATEWAY_SECRET_KEY.read(env);
  if (!sandboxMode && shopIdRaw === undefined)
    throw new ConfigError('GATEWAY_SHOP_ID', 'is required with GATEWAY_BASE_URL');
  if (!sandboxMode && secret === undefined)
    throw new ConfigError('GATEWAY_SECRET_KEY', 'is required with GATEWAY_BASE_URL');
  return {
    shopId: V.GATEWAY_SHOP_ID.read(env, { sandboxShopId: sandbox.shopId }),
    secretKey: secret ?? sandbox.secretKey,
  };
}

/**
 * The agent shop: both GATEWAY_PAYOUT_* or neither. Neither: the sandbox's agent shop in sandbox
 * mode (unless the payment shop was set by hand), else the payment shop. One shop id with two
 * secrets is refused: a notification's shop_id must name exactly one secret.
 */
export function gatewayPayoutShop(
  env: Env,
  payment: GatewayShop,
  sandbox: SandboxConfig | undefined,
): GatewayShop {
  const idRaw = str(env, 'GATEWAY_PAYOUT_SHOP_ID');
  const secret = V.GATEWAY_PAYOUT_SECRET_KEY.read(env);
  if (idRaw === undefined && secret === undefined) {
    const paymentSetByHand = str(env, 'GATEWAY_SHOP_ID') ?? str(env, 'GATEWAY_SECRET_KEY');
    if (sandbox !== undefined && paymentSetByHand === undefined) {
      return { shopId: sandbox.payoutShopId, secretKey: sandbox.payoutSecretKey };
    }
    return { ...payment };
  }
  if (secret === undefined)
    throw new ConfigError(
      'GATEWAY_PAYOUT_SECRET_KEY',
      'is required with GATEWAY_PAYOUT_SHOP_ID (set both or neither)',
    );
  if (idRaw === undefined)
    throw new ConfigError(
      'GATEWAY_PAYOUT_SHOP_ID',
      'is required with GATEWAY_PAYOUT_SECRET_KEY (set both or neither)',
    );
  // Outside sandbox mode a publicly known sandbox secret is never a real one (as for GATEWAY_SECRET_KEY).
  if (
    sandbox === undefined &&
    [SANDBOX_DEFAULT_SECRET, SANDBOX_DEFAULT_PAYOUT_SECRET].includes(secret)
  )
    throw new ConfigError(
      'GATEWAY_PAYOUT_SECRET_KEY',
      "is a sandbox's public secret, not a real one",
    );
  const shop = { shopId: V.GATEWAY_PAYOUT_SHOP_ID.read(env)!, secretKey: secret };
  if (
    sandbox === undefined &&
    [SANDBOX_DEFAULT_SHOP_ID, SANDBOX_DEFAULT_PAYOUT_SHOP_ID].includes(shop.shopId)
  )
    throw new ConfigError('GATEWAY_PAYOUT_SHOP_ID', "is a sandbox's shop id, not a real shop");
  if (shop.shopId === payment.shopId && shop.secretKey !== payment.secretKey)
    throw new ConfigError(
      'GATEWAY_PAYOUT_SECRET_KEY',
      'differs from GATEWAY_SECRET_KEY for the same shop id',
    );
  return shop;
}

/** The sandbox's agent shop; SANDBOX_PAYOUT_SHOP_ID equal to SANDBOX_SHOP_ID hosts one shop for both. */
export function sandboxPayoutShop(
  env: Env,
): Pick<SandboxConfig, 'payoutShopId' | 'payoutSecretKey'> {
  const paymentId = V.SANDBOX_SHOP_ID.read(env);
  const payoutShopId = V.SANDBOX_PAYOUT_SHOP_ID.read(env);
  const secret = V.SANDBOX_PAYOUT_SECRET_KEY.read(env);
  const paymentSecret = V.SANDBOX_SECRET_KEY.read(env);
  if (payoutShopId !== paymentId) {
    // Two shops with one secret could not show a request signed for the wrong shop.
    if (secret !== undefined && secret === paymentSecret)
      throw new ConfigError(
        'SANDBOX_PAYOUT_SECRET_KEY',
        'must differ from SANDBOX_SECRET_KEY for a separate agent shop',
      );
    return { payoutShopId, payoutSecretKey: secret ?? SANDBOX_DEFAULT_PAYOUT_SECRET };
  }
  if (secret !== undefined && secret !== paymentSecret)
    throw new ConfigError(
      'SANDBOX_PAYOUT_SECRET_KEY',
      'differs from SANDBOX_SECRET_KEY for the same shop id',
    );
  return { payoutShopId, payoutSecretKey: paymentSecret };
}

/**
 * Outside sandbox mode: https:// only (unless ALLOW_INSECURE_HTTP=true, which start-up then
 * warns about every time), and never the sandbox's publicly known shop id or secret. Returns the
 * variables let through on http://.
 */
export function productionGuards(env: Env, sandboxMode: boolean, publicBaseUrl: string): string[] {
  const allowInsecure = V.ALLOW_INSECURE_HTTP.read(env);
  const insecureHttp: string[] = [];
  if (sandboxMode) return insecureHttp;
  const addresses: Array<[string, string]> = [
    ['GATEWAY_BASE_URL', str(env, 'GATEWAY_BASE_URL') ?? ''],
    ['PUBLIC_BASE_URL', publicBaseUrl],
    ...list(env, 'SHOP_WEBHOOK_URL').map((u): [string, string] => ['SHOP_WEBHOOK_URL', u]),
  ];
  for (const [name, value] of addresses) {
    if (new URL(value).protocol === 'https:') continue;
    if (!allowInsecure)
      throw new ConfigError(
        name,
        'must be an https:// address outside sandbox mode (ALLOW_INSECURE_HTTP=true accepts http://)',
      );
    insecureHttp.push(name);
  }
  if (str(env, 'GATEWAY_SECRET_KEY') === SANDBOX_DEFAULT_SECRET)
    throw new ConfigError('GATEWAY_SECRET_KEY', "is the sandbox's public secret, not a real one");
  const shopIdRaw = str(env, 'GATEWAY_SHOP_ID');
  if (
    shopIdRaw !== undefined &&
    /^\d+$/.test(shopIdRaw) &&
    Number(shopIdRaw) === SANDBOX_DEFAULT_SHOP_ID
  )
    throw new ConfigError('GATEWAY_SHOP_ID', "is the sandbox's shop id, not a real shop");
  return insecureHttp;
}

/** TRUST_PROXY ranges so wide that clients could pick their own address, unless allowed. */
export function trustProxyWidth(env: Env, value: TrustProxy): TrustProxy {
  if (!Array.isArray(value)) return value;
  const wide = V.TRUST_PROXY_ALLOW_WIDE.read(env) ? null : wideTrustProblem(value);
  if (wide !== null) throw new ConfigError('TRUST_PROXY', wide);
  return value;
}

/** Node enforces the header limit only within the request limit. */
export function headersWithinRequest(headersTimeoutMs: number, requestTimeoutMs: number): void {
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      'HTTP_HEADERS_TIMEOUT_MS',
      `must not be longer than HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  }
}

/** Webhook URLs are signed: a secret must come with them. */
export function webhookSecretWithUrls(urls: string[], secret: Buffer | null): void {
  if (urls.length > 0 && secret === null)
    throw new ConfigError('SHOP_WEBHOOK_SECRET', 'is required with SHOP_WEBHOOK_URL');
}

/** A claim must outlive its POST, or a second instance would send the same event meanwhile. */
export function webhookLeaseOutlivesPost(leaseS: number, timeoutMs: number): void {
  if (leaseS * 1000 <= timeoutMs)
    throw new ConfigError('SHOP_WEBHOOK_LEASE_S', 'must be longer than SHOP_WEBHOOK_TIMEOUT_MS');
}

/** An event must outlive its push retries, or the feed would drop what webhooks still carry. */
export function eventsOutliveRetries(eventsDays: number, retryForS: number): void {
  if (eventsDays * 86400 <= retryForS)
    throw new ConfigError(
      'RETENTION_EVENTS_DAYS',
      `must be longer than SHOP_WEBHOOK_RETRY_FOR_S (${retryForS} s)`,
    );
}

/**
 * A dual threshold below the single one of the same currency is refused: it would ask two
 * approvals of payouts the single threshold lets through, which is surely a typo.
 */
export function dualNotBelowSingle(
  single: ReadonlyMap<number, Amount>,
  dual: ReadonlyMap<number, Amount>,
): ApprovalThresholds {
  for (const [currency, d] of dual) {
    const s = single.get(currency);
    if (s !== undefined && d.lt(s))
      throw new ConfigError(
        'PAYOUT_DUAL_APPROVAL_THRESHOLD',
        `for currency ${currency} (${d.toString()}) must not be below PAYOUT_APPROVAL_THRESHOLD (${s.toString()})`,
      );
  }
  return { single, dual };
}
