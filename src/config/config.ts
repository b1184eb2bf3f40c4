/**
 * The one typed configuration object. Built once at start-up from the environment by
 * `loadConfig`; a bad value throws a `ConfigError` whose message is one line naming the
 * variable and what is wrong (never the value of a secret).
 *
 * Gateway facts that the interface document leaves out (paths and signed fields of some calls,
 * which error codes are fatal, what payout status numbers mean) are configuration here, with the
 * defaults observed in public clients (shared/spec/gateway-facts.md).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DataKey, generateKeyRingText, parseKeyRing } from '../common/key-ring';
import { isIP } from 'node:net';
import { SCOPES, type Scope } from '../common/actor';
import { isTrustPreset, wideTrustProblem } from './trusted-proxies';
import { minorUnitsProblem, parseCurrencyInput } from '../common/currency';
import { Amount } from '../common/money';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

export type GatewayCall =
  | 'invoice/try'
  | 'invoice/create'
  | 'invoice/hold'
  | 'invoice/check'
  | 'invoice/charge'
  | 'invoice/unhold'
  | 'invoice/create-refund'
  | 'invoice/get-refunds'
  | 'shop_input_config/shop'
  | 'shop_output_config/shop'
  | 'shop_balance'
  | 'withdraw/try'
  | 'check_account'
  | 'withdraw/create'
  | 'withdraw/status'
  | 'withdraw/shop_payment_status';

export interface GatewayCallConfig {
  /** Path below the base URL, without a leading slash. */
  path: string;
  /** Body fields that take part in the signature. */
  signed: string[];
}

/** The spec's paths and signed fields, plus gateway-facts.md for the calls the spec leaves out. */
export const DEFAULT_GATEWAY_CALLS: Record<GatewayCall, GatewayCallConfig> = {
  'invoice/try': {
    path: 'invoice/try',
    signed: ['amount', 'currency', 'payway', 'shop_id', 'shop_order_id'],
  },
  'invoice/create': {
    path: 'invoice/create',
    signed: ['amount', 'currency', 'payway', 'shop_id', 'shop_order_id'],
  },
  'invoice/hold': {
    path: 'invoice/hold',
    signed: ['amount', 'currency', 'payway', 'shop_id', 'shop_order_id'],
  },
  'invoice/check': { path: 'invoice/check', signed: ['now', 'shop_id', 'shop_order_id'] },
  'invoice/charge': { path: 'invoice/charge', signed: ['invoice_id', 'now', 'shop_id'] },
  'invoice/unhold': { path: 'invoice/unhold', signed: ['invoice_id', 'now', 'shop_id'] },
  'invoice/create-refund': {
    path: 'invoice/create-refund',
    signed: ['amount', 'invoice_id', 'shop_id', 'shop_refund_id'],
  },
  'invoice/get-refunds': { path: 'invoice/get-refunds', signed: ['invoice_id', 'now', 'shop_id'] },
  'shop_input_config/shop': { path: 'shop_input_config/shop', signed: ['now', 'shop_id'] },
  'shop_output_config/shop': { path: 'shop_output_config/shop', signed: ['now', 'shop_id'] },
  shop_balance: { path: 'shop_balance', signed: ['now', 'shop_id'] },
  'withdraw/try': {
    path: 'withdraw/try',
    signed: ['amount', 'amount_type', 'payway', 'shop_currency', 'shop_id'],
  },
  check_account: { path: 'check_account', signed: ['account', 'amount', 'payway', 'shop_id'] },
  'withdraw/create': {
    path: 'withdraw/create',
    signed: [
      'account',
      'amount',
      'amount_type',
      'payway',
      'shop_currency',
      'shop_id',
      'shop_payment_id',
    ],
  },
  'withdraw/status': { path: 'withdraw/status', signed: ['now', 'shop_id', 'withdraw_id'] },
  'withdraw/shop_payment_status': {
    path: 'withdraw/shop_payment_status',
    signed: ['now', 'shop_id', 'shop_payment_id'],
  },
};

/** Which of the merchant's gateway shops a call belongs to. */
export type GatewayShopRole = 'payment' | 'payout';

export interface GatewayShop {
  shopId: number;
  secretKey: string;
}

export interface GatewayConfig {
  /** Base URL ending in `/gateway/v1/`. */
  baseUrl: string;
  /**
   * The payment shop (invoices, refunds, payment ways) and the agent shop (payouts, payout ways,
   * balance); the same shop when no agent shop is configured.
   */
  shops: Record<GatewayShopRole, GatewayShop>;
  timeoutMs: number;
  calls: Record<GatewayCall, GatewayCallConfig>;
  /** Error codes known to be fatal: the operation is over. */
  fatalErrorCodes: number[];
  /** Error codes known to be non-fatal: wait for a notification or poll the status. */
  nonFatalErrorCodes: number[];
  /** "shop_order_id / shop_payment_id is not unique": the object already exists. */
  duplicateErrorCode: number;
  /** Status call for an unknown payout: the payout is absent, a create may be repeated. */
  absentErrorCode: number;
  /** Offset used for `now` (the gateway reads offset-less times as +03:00). */
  nowOffset: string;
}

export interface PayoutStatusConfig {
  success: number[];
  failed: number[];
  rejected: number[];
}

export interface SandboxConfig {
  port: number;
  /** The sandbox's payment shop. */
  shopId: number;
  secretKey: string;
  /** Its agent shop (payouts, balance); the payment shop itself when the ids are equal. */
  payoutShopId: number;
  payoutSecretKey: string;
  /** Multiplies every delay of the sandbox (notification retries, payout progress). */
  timeScale: number;
  cataloguePath?: string;
  notifyFormat: 'json' | 'form';
  /** SANDBOX_HOLD_TTL_S: how long a sandbox hold lasts (its `expires_at`). */
  holdTtlS: number;
}

export interface RateLimitStoreConfig {
  /** REDIS_URL (redis:// or rediss://): counters shared by every instance. Holds a password: never log it. */
  redisUrl?: string;
  /** RATE_LIMIT_REDIS_PREFIX: the first part of every key, so several environments can share one Redis. */
  prefix: string;
}

export interface AppConfig {
  port: number;
  /** Unset: an embedded PostgreSQL under `dataDir/postgres`. */
  databaseUrl?: string;
  dataDir: string;
  embeddedPgPort: number;
  /** True when no GATEWAY_BASE_URL is given and the built-in sandbox serves as the gateway. */
  sandboxMode: boolean;
  sandbox: SandboxConfig;
  gateway: GatewayConfig;
  /** OpenTelemetry tracing: off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  otel: { endpoint?: string; serviceName: string };
  publicBaseUrl: string;
  apiKeys: string[];
  adminApiKeys: string[];
  /** True when the keys were generated at start-up (sandbox mode, none configured). */
  generatedKeys: boolean;
  /** Where generated development keys are kept (`DATA_DIR/development-api-keys`); unset: not kept. */
  devApiKeysPath?: string;
  notifyAllowedIps: string[];
  // --- hostile callers (#12): key scopes, proxy trust, rate limits, database time limits
  /** Shop keys with their scopes (`API_KEYS` entries `key` or `key:scope+scope`); `apiKeys` holds the bare keys. */
  shopKeys: ShopKey[];
  /** The proxies whose X-Forwarded-For is believed (proxy-addr, as Fastify reads it): false, a hop count, or the trusted proxies' addresses/CIDRs. */
  trustProxy: TrustProxy;
  /** Requests per second; 0 turns the limit off. */
  rateLimits: { perKeyRps: number; publicPerIpRps: number; unauthenticatedPerIpRps: number };
  /** Where the rate-limit counters live: `redisUrl` unset, in each instance's memory. */
  rateLimitStore: RateLimitStoreConfig;
  /** Limits of the Node HTTP server: how long a client may take to send a request, and how many connect at once. */
  http: HttpLimits;
  /** How many unverified gateway notifications are kept as a sample (oldest dropped). */
  notifyUnverifiedKeep: number;
  db: DbLimits;
  // --- end hostile callers
  metricsToken?: string;
  logLevel: string;
  payouts: {
    pollIntervalS: number;
    pollMaxS: number;
    leaseS: number;
    concurrency: number;
    status: PayoutStatusConfig;
  };
  invoices: {
    /** How long a non-final invoice may wait for its notification before it is checked. */
    reconcileGraceS: number;
    /** Checked until this age, then flagged for an operator. */
    reconcileMaxS: number;
  };
  refunds: { reconcileGraceS: number; reconcileMaxS: number };
  /** Cadence of the reconciliation ticks, in milliseconds. */
  tickMs: number;
  /** Scheduled jobs on/off (tests drive them by hand). */
  schedulerEnabled: boolean;
  paywayRefreshS: number;
  /** The operators' console (/admin). */
  console: {
    /** A console session's lifetime. */
    sessionTtlS: number;
    /** Failed sign-ins allowed per client address within one window. */
    signInMaxFailures: number;
    signInWindowS: number;
  };
  // --- #13/#14: database pool, atomic create phases, payout re-create discipline
  // Database pool: DB_POOL_SIZE is `db.poolSize` of the #12 block above.
  /** How long a repeat waits for an identical create still talking to the gateway, then 409. */
  createWaitMs: number;
  /** Conflicting repeats of one idempotency id before every repeat of it is refused (issue #24). */
  idempotencyConflictLimit: number;
  /** Creates after "absent" a payout may get before an operator decides (PAYOUT_MAX_CREATES). */
  payoutMaxCreates: number;
  /** Status checks that must all say "absent", spread over at least the window, before a create counts as never made. */
  absentChecks: number;
  absentWindowS: number;
  /**
   * Issue #22: after its deadline a flagged invoice, refund or payout is still asked about every
   * `intervalS` (WATCH_INTERVAL_S) until `maxS` (WATCH_MAX_S) after its creation; only then does
   * it wait for an operator alone.
   */
  watch: { intervalS: number; maxS: number };
  /** HOLD_EXPIRY_WARNING_S: `invoice.hold_expiring` comes this long before a hold expires. */
  holdExpiryWarningS: number;
  /** Issue #27: caps over the UTC day and the balance check before a payout is sent. */
  payoutControls: {
    /** PAYOUT_DAILY_CAP: per shop currency, every payout of the day; absent currency: no cap. */
    dailyCap: ReadonlyMap<number, Amount>;
    /** PAYOUT_RECIPIENT_DAILY_CAP: per shop currency and recipient account. */
    recipientDailyCap: ReadonlyMap<number, Amount>;
    /** BALANCE_CACHE_S: how long a balance read is used; 0 turns the pre-send check off. */
    balanceCacheS: number;
  };
  /** REPORT_TIMEZONE: the IANA zone whose calendar day the daily report covers. */
  reportTimeZone: string;

  // ---- secrets at rest and production guard rails (#16)
  /** DATA_ENCRYPTION_KEYS: the first seals, all open. */
  dataEncryptionKeys: DataKey[];
  /** Set when the ring is the development one kept under DATA_DIR (sandbox mode, none configured). */
  devKeyRingPath?: string;
  /** Variables that use http:// outside sandbox mode because ALLOW_INSECURE_HTTP=true. */
  insecureHttp: string[];
  docsEnabled: boolean;
  shopEvents: ShopEventsConfig;
  /** Issue #26: what the retention jobs prune, in days (financial records never). */
  retention: RetentionConfig;
  /** Issue #27: PAYOUT_APPROVAL_THRESHOLD / PAYOUT_DUAL_APPROVAL_THRESHOLD. */
  payoutApproval: ApprovalThresholds;
}

// ---- Payout approval (#27) ------------------------------------------------------------------

/**
 * PAYOUT_APPROVAL_THRESHOLD / PAYOUT_DUAL_APPROVAL_THRESHOLD: per ISO 4217 numeric currency, the
 * amount (in the payout's shop currency) at or above which a payout waits for one / two distinct
 * admin approvals. A currency with no entry has no threshold.
 */
export interface ApprovalThresholds {
  single: ReadonlyMap<number, Amount>;
  dual: ReadonlyMap<number, Amount>;
}

/**
 * Parses `643:50000.00,840:1000.00` into a map, exactly (Amount, never a float); unset or empty:
 * no threshold. A dual threshold below the single one of the same currency is refused: it would
 * ask two approvals of payouts the single threshold lets through, which is surely a typo.
 */
function approvalThresholds(env: Env): ApprovalThresholds {
  const single = thresholdMap(env, 'PAYOUT_APPROVAL_THRESHOLD');
  const dual = thresholdMap(env, 'PAYOUT_DUAL_APPROVAL_THRESHOLD');
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

function thresholdMap(env: Env, name: string): Map<number, Amount> {
  const map = new Map<number, Amount>();
  const raw = str(env, name);
  if (raw === undefined || raw.trim() === '') return map;
  for (const entry of raw.split(',').map((e) => e.trim())) {
    const m = /^(\d{1,3}):(\S+)$/.exec(entry);
    if (m === null)
      throw new ConfigError(
        name,
        'must be currency:amount entries separated by commas, e.g. 643:50000.00,840:1000.00',
      );
    const currency = Number(m[1]);
    if (currency < 1)
      throw new ConfigError(name, `has currency ${m[1]}: not an ISO 4217 numeric code`);
    if (!Amount.isValid(m[2]))
      throw new ConfigError(
        name,
        `has for currency ${currency} an amount that is not a plain decimal number`,
      );
    const amount = Amount.parse(m[2]);
    if (!amount.isPositive())
      throw new ConfigError(name, `has for currency ${currency} an amount that is not above zero`);
    if (map.has(currency)) throw new ConfigError(name, `names currency ${currency} twice`);
    map.set(currency, amount);
  }
  return map;
}

// ---- Retention (#26) ------------------------------------------------------------------------

export interface RetentionConfig {
  /** RETENTION_DELIVERIES_DAYS: delivered webhook deliveries older than this are deleted. */
  deliveriesDays: number;
  /** RETENTION_NOTIFICATIONS_DAYS: applied or stale (repeated) verified notifications. */
  notificationsDays: number;
  /** RETENTION_EVENTS_DAYS: older shop events leave the feed (their audit entries stay). */
  eventsDays: number;
}

const MAX_RETENTION_DAYS = 36500;

function retentionConfig(env: Env, shopEvents: ShopEventsConfig): RetentionConfig {
  const days = (name: string, def: number): number => int(env, name, def, 1, MAX_RETENTION_DAYS);
  const eventsDays = days('RETENTION_EVENTS_DAYS', 90);
  // An event must outlive its push retries, or the feed would drop what webhooks still carry.
  if (eventsDays * 86400 <= shopEvents.retryForS)
    throw new ConfigError(
      'RETENTION_EVENTS_DAYS',
      `must be longer than SHOP_WEBHOOK_RETRY_FOR_S (${shopEvents.retryForS} s)`,
    );
  return {
    deliveriesDays: days('RETENTION_DELIVERIES_DAYS', 30),
    notificationsDays: days('RETENTION_NOTIFICATIONS_DAYS', 180),
    eventsDays,
  };
}

// ---- Shop events (webhooks to the order system) -------------------------------------------

export interface ShopEventsConfig {
  /** SHOP_WEBHOOK_URL: every address events are POSTed to; empty: events only in the feed. */
  urls: string[];
  /** The Standard Webhooks key: SHOP_WEBHOOK_SECRET without `whsec_`, decoded. */
  secret: Buffer | null;
  timeoutMs: number;
  retryBaseS: number;
  retryMaxIntervalS: number;
  /** Retried until this long after the event, then dead. */
  retryForS: number;
  leaseS: number;
  tickMs: number;
  concurrency: number;
}

function shopEventsConfig(env: Env): ShopEventsConfig {
  const urls = list(env, 'SHOP_WEBHOOK_URL').map((u) => {
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw new ConfigError('SHOP_WEBHOOK_URL', 'must be a comma list of absolute URLs');
    }
    if (!['http:', 'https:'].includes(parsed.protocol))
      throw new ConfigError('SHOP_WEBHOOK_URL', 'must hold http(s) URLs only');
    return u;
  });
  const rawSecret = str(env, 'SHOP_WEBHOOK_SECRET');
  let secret: Buffer | null = null;
  if (rawSecret !== undefined) {
    const b64 = rawSecret.startsWith('whsec_') ? rawSecret.slice('whsec_'.length) : rawSecret;
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || Buffer.from(b64, 'base64').length < 24)
      throw new ConfigError(
        'SHOP_WEBHOOK_SECRET',
        'must be whsec_ followed by at least 24 base64 bytes',
      );
    secret = Buffer.from(b64, 'base64');
  }
  if (urls.length > 0 && secret === null)
    throw new ConfigError('SHOP_WEBHOOK_SECRET', 'is required with SHOP_WEBHOOK_URL');
  const timeoutMs = int(env, 'SHOP_WEBHOOK_TIMEOUT_MS', 10000, 100, 60000);
  const leaseS = positiveNumber(env, 'SHOP_WEBHOOK_LEASE_S', 60);
  // A claim must outlive its POST, or a second instance would send the same event meanwhile.
  if (leaseS * 1000 <= timeoutMs)
    throw new ConfigError('SHOP_WEBHOOK_LEASE_S', 'must be longer than SHOP_WEBHOOK_TIMEOUT_MS');
  return {
    urls,
    secret,
    timeoutMs,
    retryBaseS: positiveNumber(env, 'SHOP_WEBHOOK_RETRY_BASE_S', 5),
    retryMaxIntervalS: positiveNumber(env, 'SHOP_WEBHOOK_RETRY_MAX_INTERVAL_S', 3600),
    retryForS: positiveNumber(env, 'SHOP_WEBHOOK_RETRY_FOR_S', 259200),
    leaseS,
    tickMs: int(env, 'SHOP_WEBHOOK_TICK_MS', 1000, 10),
    concurrency: int(env, 'SHOP_WEBHOOK_CONCURRENCY', 8, 1, 256),
  };
}

export interface ShopKey {
  key: string;
  scopes: Scope[];
}

export type TrustProxy = false | number | string[];

export interface DbLimits {
  poolSize: number;
  acquireTimeoutMs: number;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  idleInTxTimeoutMs: number;
}

/**
 * The Node HTTP server's limits. headersTimeout and requestTimeout bound how long a client may
 * take to send a request (not how long the answer takes): a slow sender holds a socket only that
 * long. keepAliveTimeout: how long an idle kept-alive connection is held (Node's own default;
 * behind a load balancer set it above the balancer's idle timeout, e.g. 65 s for a 60 s one, so
 * the balancer, not the service, closes idle connections). maxConnections: beyond it new
 * connections are dropped at once.
 */
export interface HttpLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

type Env = Record<string, string | undefined>;

const SPEC_NOTIFY_IPS = ['35.198.100.222', '35.198.175.25'];
export const SANDBOX_DEFAULT_SHOP_ID = 1001;
export const SANDBOX_DEFAULT_SECRET = 'sandbox-secret-key';
export const SANDBOX_DEFAULT_PAYOUT_SHOP_ID = 1002;
export const SANDBOX_DEFAULT_PAYOUT_SECRET = 'sandbox-payout-secret-key';

function str(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function int(env: Env, name: string, def: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function positiveNumber(env: Env, name: string, def: number): number {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (!/^\d+(\.\d+)?$/.test(raw) || Number(raw) <= 0) {
    throw new ConfigError(name, `must be a positive number, got "${raw}"`);
  }
  return Number(raw);
}

function list(env: Env, name: string, def: string[] = []): string[] {
  const raw = env[name];
  if (raw === undefined) return def;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function intList(env: Env, name: string, def: number[]): number[] {
  return list(env, name, def.map(String)).map((s) => {
    if (!/^\d+$/.test(s))
      throw new ConfigError(name, `must be a comma-separated list of whole numbers, got "${s}"`);
    return Number(s);
  });
}

/**
 * Amounts per currency, `643:50000.00,840:1000.00` (the alphabetic code is taken too: `RUB:…`):
 * each amount an exact positive decimal within its currency's minor unit, each currency once.
 * Unset: an empty map.
 */
function currencyAmounts(env: Env, name: string): ReadonlyMap<number, Amount> {
  const out = new Map<number, Amount>();
  for (const entry of list(env, name)) {
    const colon = entry.indexOf(':');
    const code = colon < 0 ? null : parseCurrencyInput(entry.slice(0, colon).trim());
    if (code === null)
      throw new ConfigError(
        name,
        `entries must be currency:amount (643:50000.00), got "${entry.slice(0, 60)}"`,
      );
    const text = entry.slice(colon + 1).trim();
    if (!Amount.isValid(text) || !Amount.parse(text).isPositive())
      throw new ConfigError(
        name,
        `amount of currency ${code} must be a positive decimal string, got "${text.slice(0, 40)}"`,
      );
    const tooFine = minorUnitsProblem(text, code);
    if (tooFine) throw new ConfigError(name, `amount of currency ${code} ${tooFine}`);
    if (out.has(code)) throw new ConfigError(name, `names currency ${code} twice`);
    out.set(code, Amount.parse(text));
  }
  return out;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function url(env: Env, name: string, def?: string): string | undefined {
  const raw = str(env, name) ?? def;
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be an absolute URL');
  }
  if (!['http:', 'https:'].includes(parsed.protocol))
    throw new ConfigError(name, 'must be an http(s) URL');
  return raw;
}

function databaseUrl(env: Env): string | undefined {
  const raw = str(env, 'DATABASE_URL');
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError('DATABASE_URL', 'must be a postgres:// connection URL');
  }
  if (!['postgres:', 'postgresql:'].includes(parsed.protocol)) {
    throw new ConfigError('DATABASE_URL', 'must be a postgres:// connection URL');
  }
  return raw;
}

/** The value may carry a password: no message repeats it. */
function rateLimitStore(env: Env): RateLimitStoreConfig {
  const raw = str(env, 'REDIS_URL');
  if (raw !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(raw);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['redis:', 'rediss:'].includes(parsed.protocol) || parsed.hostname === '') {
      throw new ConfigError(
        'REDIS_URL',
        'must be a redis:// or rediss:// URL with a host (redis://:password@host:6379/0)',
      );
    }
    if (!/^\/?(\d+)?$/.test(parsed.pathname)) {
      throw new ConfigError(
        'REDIS_URL',
        'may name only a database number after the host (redis://host:6379/0)',
      );
    }
  }
  const prefix = str(env, 'RATE_LIMIT_REDIS_PREFIX') ?? 'rl';
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(prefix)) {
    throw new ConfigError(
      'RATE_LIMIT_REDIS_PREFIX',
      `must be 1 to 64 letters, digits or _ . : -, got ${JSON.stringify(prefix.slice(0, 80))}`,
    );
  }
  return { redisUrl: raw, prefix };
}

function gatewayCalls(env: Env): Record<GatewayCall, GatewayCallConfig> {
  const calls: Record<GatewayCall, GatewayCallConfig> = JSON.parse(
    JSON.stringify(DEFAULT_GATEWAY_CALLS),
  );
  const raw = str(env, 'GATEWAY_CALLS');
  if (raw === undefined) return calls;
  let overrides: unknown;
  try {
    overrides = JSON.parse(raw);
  } catch {
    throw new ConfigError(
      'GATEWAY_CALLS',
      'must be JSON: {"invoice/hold": {"path": "...", "signed": ["..."]}}',
    );
  }
  if (typeof overrides !== 'object' || overrides === null)
    throw new ConfigError('GATEWAY_CALLS', 'must be a JSON object');
  for (const [call, value] of Object.entries(overrides as Record<string, unknown>)) {
    if (!(call in calls)) throw new ConfigError('GATEWAY_CALLS', `names an unknown call "${call}"`);
    const v = value as Partial<GatewayCallConfig>;
    if (v.path !== undefined && typeof v.path !== 'string')
      throw new ConfigError('GATEWAY_CALLS', `${call}.path must be a string`);
    if (
      v.signed !== undefined &&
      !(Array.isArray(v.signed) && v.signed.every((s) => typeof s === 'string'))
    ) {
      throw new ConfigError('GATEWAY_CALLS', `${call}.signed must be a list of field names`);
    }
    calls[call as GatewayCall] = { ...calls[call as GatewayCall], ...v };
  }
  return calls;
}

function bearerKeys(env: Env, name: string): string[] {
  const keys = list(env, name);
  for (const k of keys) {
    if (k.length < 16) throw new ConfigError(name, 'holds a key shorter than 16 characters');
  }
  return keys;
}

const SHOP_SCOPES: readonly Scope[] = SCOPES;

/** `key` (every shop scope) or `key:scope+scope`; the scope list follows the last colon. */
function shopKeys(env: Env): ShopKey[] {
  return list(env, 'API_KEYS').map((entry) => {
    const colon = entry.lastIndexOf(':');
    const key = colon < 0 ? entry : entry.slice(0, colon);
    const scopes = colon < 0 ? [...SHOP_SCOPES] : entry.slice(colon + 1).split('+');
    if (key.length < 16)
      throw new ConfigError('API_KEYS', 'holds a key shorter than 16 characters');
    for (const sc of scopes) {
      if (!SHOP_SCOPES.includes(sc as Scope)) {
        throw new ConfigError(
          'API_KEYS',
          `names an unknown scope "${sc.slice(0, 20)}" (known: ${SHOP_SCOPES.join(', ')})`,
        );
      }
    }
    return { key, scopes: scopes as Scope[] };
  });
}

function trustProxy(env: Env): TrustProxy {
  const raw = str(env, 'TRUST_PROXY');
  if (raw === undefined || /^(false|0|no|off)$/i.test(raw)) return false;
  if (/^(true|yes|on)$/i.test(raw)) {
    throw new ConfigError(
      'TRUST_PROXY',
      'true would believe X-Forwarded-For from any client; give the number of proxy hops in front of the service (e.g. 1) or their addresses/CIDRs',
    );
  }
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((entry) => {
    const e = entry.trim();
    if (isTrustPreset(e)) return e;
    const [addr, bits, extra] = e.split('/');
    const family = isIP(addr);
    const max = family === 4 ? 32 : 128;
    const okBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= max);
    if (family === 0 || !okBits || extra !== undefined) {
      throw new ConfigError(
        'TRUST_PROXY',
        `must be false, a hop count or a comma list of addresses/CIDRs, got "${e.slice(0, 60)}"`,
      );
    }
    return e;
  });
  const wide = bool(env, 'TRUST_PROXY_ALLOW_WIDE', false) ? null : wideTrustProblem(entries);
  if (wide !== null) throw new ConfigError('TRUST_PROXY', wide);
  return entries;
}

function dbLimits(env: Env): DbLimits {
  return {
    poolSize: int(env, 'DB_POOL_SIZE', 20, 1, 1000),
    acquireTimeoutMs: int(env, 'DB_POOL_ACQUIRE_TIMEOUT_MS', 10_000, 1),
    statementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', 45_000, 1),
    lockTimeoutMs: int(env, 'DB_LOCK_TIMEOUT_MS', 40_000, 1),
    idleInTxTimeoutMs: int(env, 'DB_IDLE_IN_TX_TIMEOUT_MS', 60_000, 1),
  };
}

function httpLimits(env: Env): HttpLimits {
  const headersTimeoutMs = int(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 1);
  const requestTimeoutMs = int(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 1);
  // Node enforces the header limit only within the request limit.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      'HTTP_HEADERS_TIMEOUT_MS',
      `must not be longer than HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  }
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, 1),
    maxConnections: int(env, 'HTTP_MAX_CONNECTIONS', 1024, 1),
  };
}

// ---- Two gateway shops (GATEWAY_PAYOUT_*, SANDBOX_PAYOUT_*) ----

/**
 * The agent shop: both GATEWAY_PAYOUT_* or neither. Neither: the sandbox's agent shop in sandbox
 * mode (unless the payment shop was set by hand), else the payment shop. One shop id with two
 * secrets is refused: a notification's shop_id must name exactly one secret.
 */
function gatewayPayoutShop(
  env: Env,
  payment: GatewayShop,
  sandbox: SandboxConfig | undefined,
): GatewayShop {
  const idRaw = str(env, 'GATEWAY_PAYOUT_SHOP_ID');
  const secret = str(env, 'GATEWAY_PAYOUT_SECRET_KEY');
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
  const shop = { shopId: int(env, 'GATEWAY_PAYOUT_SHOP_ID', 0, 1), secretKey: secret };
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
function sandboxPayoutShop(env: Env): Pick<SandboxConfig, 'payoutShopId' | 'payoutSecretKey'> {
  const paymentId = int(env, 'SANDBOX_SHOP_ID', SANDBOX_DEFAULT_SHOP_ID, 1);
  const payoutShopId = int(env, 'SANDBOX_PAYOUT_SHOP_ID', SANDBOX_DEFAULT_PAYOUT_SHOP_ID, 1);
  const secret = str(env, 'SANDBOX_PAYOUT_SECRET_KEY');
  const paymentSecret = str(env, 'SANDBOX_SECRET_KEY') ?? SANDBOX_DEFAULT_SECRET;
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

// ---- end of the two gateway shops ----

/**
 * Builds the typed configuration. In sandbox mode with no keys configured, development keys are
 * made once and kept under DATA_DIR, or made fresh by `generateKey` when one is given (tests);
 * `devKeyRing` supplies the development data-encryption key ring (kept under DATA_DIR).
 */
export function loadConfig(
  env: Env = process.env,
  generateKey?: () => string,
  devKeyRing: (dataDir: string) => { text: string; path: string } = devKeyRingFile,
): AppConfig {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const gatewayBaseUrl = url(env, 'GATEWAY_BASE_URL');
  if (gatewayBaseUrl === undefined && str(env, 'NODE_ENV') === 'production') {
    throw new ConfigError(
      'GATEWAY_BASE_URL',
      'is required with NODE_ENV=production (the built-in sandbox is for development only)',
    );
  }
  const sandboxMode = gatewayBaseUrl === undefined;
  const sandbox: SandboxConfig = {
    port: int(env, 'SANDBOX_PORT', 4010, 0, 65535),
    shopId: int(env, 'SANDBOX_SHOP_ID', SANDBOX_DEFAULT_SHOP_ID, 1),
    secretKey: str(env, 'SANDBOX_SECRET_KEY') ?? SANDBOX_DEFAULT_SECRET,
    ...sandboxPayoutShop(env),
    timeScale: positiveNumber(env, 'SANDBOX_TIME_SCALE', 1),
    cataloguePath: str(env, 'SANDBOX_CATALOGUE'),
    notifyFormat: (() => {
      const f = str(env, 'SANDBOX_NOTIFY_FORMAT') ?? 'json';
      if (f !== 'json' && f !== 'form')
        throw new ConfigError('SANDBOX_NOTIFY_FORMAT', 'must be json or form');
      return f;
    })(),
    holdTtlS: int(env, 'SANDBOX_HOLD_TTL_S', 604800, 1),
  };

  let baseUrl = gatewayBaseUrl ?? `http://127.0.0.1:${sandbox.port}/gateway/v1/`;
  if (!baseUrl.endsWith('/')) baseUrl += '/';
  if (!sandboxMode && !/\/gateway\/v1\/$/.test(baseUrl)) {
    throw new ConfigError('GATEWAY_BASE_URL', 'must end in /gateway/v1/');
  }
  const shopIdRaw = str(env, 'GATEWAY_SHOP_ID');
  const secret = str(env, 'GATEWAY_SECRET_KEY');
  if (!sandboxMode && shopIdRaw === undefined)
    throw new ConfigError('GATEWAY_SHOP_ID', 'is required with GATEWAY_BASE_URL');
  if (!sandboxMode && secret === undefined)
    throw new ConfigError('GATEWAY_SECRET_KEY', 'is required with GATEWAY_BASE_URL');
  const paymentShop: GatewayShop = {
    shopId: int(env, 'GATEWAY_SHOP_ID', sandbox.shopId, 1),
    secretKey: secret ?? sandbox.secretKey,
  };
  const gateway: GatewayConfig = {
    baseUrl,
    shops: {
      payment: paymentShop,
      payout: gatewayPayoutShop(env, paymentShop, sandboxMode ? sandbox : undefined),
    },
    timeoutMs: int(env, 'GATEWAY_TIMEOUT_MS', 30000, 1),
    calls: gatewayCalls(env),
    fatalErrorCodes: intList(env, 'GATEWAY_FATAL_ERROR_CODES', [10, 11, 15]),
    nonFatalErrorCodes: intList(env, 'GATEWAY_NONFATAL_ERROR_CODES', []),
    duplicateErrorCode: int(env, 'GATEWAY_DUPLICATE_ERROR_CODE', 6),
    absentErrorCode: int(env, 'GATEWAY_ABSENT_ERROR_CODE', 7),
    nowOffset: (() => {
      const o = str(env, 'GATEWAY_NOW_OFFSET') ?? '+03:00';
      if (!/^[+-]\d{2}:\d{2}$/.test(o))
        throw new ConfigError('GATEWAY_NOW_OFFSET', 'must look like +03:00');
      return o;
    })(),
  };

  let apiKeyEntries = shopKeys(env);
  let apiKeys = apiKeyEntries.map((k) => k.key);
  let adminApiKeys = bearerKeys(env, 'ADMIN_API_KEYS');
  const dataDir = str(env, 'DATA_DIR') ?? '.data';
  let generatedKeys = false;
  let devApiKeysPath: string | undefined;
  if (apiKeys.length === 0 || adminApiKeys.length === 0) {
    if (!sandboxMode) {
      throw new ConfigError(
        apiKeys.length === 0 ? 'API_KEYS' : 'ADMIN_API_KEYS',
        'is required with a real gateway',
      );
    }
    const kept = generateKey === undefined ? devApiKeysFile(dataDir) : undefined;
    const make = (role: 'shop' | 'admin'): string => (kept ? kept[role] : generateKey!());
    if (apiKeys.length === 0) {
      apiKeys = [make('shop')];
      apiKeyEntries = [{ key: apiKeys[0], scopes: [...SHOP_SCOPES] }];
    }
    if (adminApiKeys.length === 0) adminApiKeys = [make('admin')];
    generatedKeys = true;
    devApiKeysPath = kept?.path;
  }

  const guards = productionGuards(env, sandboxMode, port, shopIdRaw, secret);
  const keys = dataEncryptionKeys(env, sandboxMode, dataDir, devKeyRing);

  const notifyDefault = sandboxMode ? [...SPEC_NOTIFY_IPS, '127.0.0.1', '::1'] : SPEC_NOTIFY_IPS;
  // Sandbox mode is for building against: a payout is final within seconds unless set.
  const pollIntervalS = positiveNumber(env, 'PAYOUT_POLL_INTERVAL_S', sandboxMode ? 2 : 30);
  const shopEvents = shopEventsConfig(env);

  return {
    port,
    databaseUrl: databaseUrl(env),
    dataDir,
    embeddedPgPort: int(env, 'EMBEDDED_PG_PORT', 54329, 1, 65535),
    sandboxMode,
    sandbox,
    gateway,
    otel: {
      endpoint: url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
      serviceName: str(env, 'OTEL_SERVICE_NAME') ?? 'piastrix-orchestrator',
    },
    publicBaseUrl: guards.publicBaseUrl,
    apiKeys,
    adminApiKeys,
    generatedKeys,
    devApiKeysPath,
    notifyAllowedIps: list(env, 'NOTIFY_ALLOWED_IPS', notifyDefault),
    shopKeys: apiKeyEntries,
    trustProxy: trustProxy(env),
    rateLimits: {
      perKeyRps: int(env, 'RATE_LIMIT_PER_KEY_RPS', 50, 0),
      publicPerIpRps: int(env, 'RATE_LIMIT_PUBLIC_PER_IP_RPS', 10, 0),
      unauthenticatedPerIpRps: int(env, 'RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS', 5, 0),
    },
    rateLimitStore: rateLimitStore(env),
    notifyUnverifiedKeep: int(env, 'NOTIFY_UNVERIFIED_KEEP', 1000, 1),
    db: dbLimits(env),
    http: httpLimits(env),
    metricsToken: str(env, 'METRICS_TOKEN'),
    logLevel: str(env, 'LOG_LEVEL') ?? 'info',
    payouts: {
      pollIntervalS,
      pollMaxS: positiveNumber(env, 'PAYOUT_POLL_MAX_S', 7200),
      leaseS: positiveNumber(env, 'PAYOUT_LEASE_S', Math.max(60, pollIntervalS * 2)),
      concurrency: int(env, 'PAYOUT_POLL_CONCURRENCY', 8, 1, 256),
      status: {
        success: intList(env, 'PAYOUT_STATUS_SUCCESS', [5]),
        failed: intList(env, 'PAYOUT_STATUS_FAILED', [8]),
        rejected: intList(env, 'PAYOUT_STATUS_REJECTED', [6]),
      },
    },
    invoices: {
      reconcileGraceS: positiveNumber(env, 'INVOICE_RECONCILE_GRACE_S', 120),
      reconcileMaxS: positiveNumber(env, 'INVOICE_RECONCILE_MAX_S', 172800),
    },
    refunds: {
      reconcileGraceS: positiveNumber(env, 'REFUND_RECONCILE_GRACE_S', 120),
      reconcileMaxS: positiveNumber(env, 'REFUND_RECONCILE_MAX_S', 604800),
    },
    tickMs: int(env, 'RECONCILE_TICK_MS', 5000, 10),
    schedulerEnabled: bool(env, 'SCHEDULER_ENABLED', true),
    paywayRefreshS: positiveNumber(env, 'PAYWAY_REFRESH_S', 600),
    console: {
      sessionTtlS: int(env, 'ADMIN_SESSION_TTL_S', 8 * 3600, 60),
      signInMaxFailures: int(env, 'ADMIN_SIGNIN_MAX_FAILURES', 5, 1),
      signInWindowS: int(env, 'ADMIN_SIGNIN_WINDOW_S', 900, 1),
    },
    // --- #13/#14
    createWaitMs: int(env, 'CREATE_WAIT_MS', 10000, 0, 600000),
    idempotencyConflictLimit: int(env, 'IDEMPOTENCY_CONFLICT_LIMIT', 3, 1, 1000),
    payoutMaxCreates: int(env, 'PAYOUT_MAX_CREATES', 3, 1, 100),
    absentChecks: int(env, 'ABSENT_CHECKS', 3, 1, 100),
    absentWindowS: positiveNumber(env, 'ABSENT_WINDOW_S', 1800),
    watch: {
      intervalS: positiveNumber(env, 'WATCH_INTERVAL_S', 600),
      maxS: positiveNumber(env, 'WATCH_MAX_S', 604800),
    },
    holdExpiryWarningS: positiveNumber(env, 'HOLD_EXPIRY_WARNING_S', 21600),
    payoutControls: {
      dailyCap: currencyAmounts(env, 'PAYOUT_DAILY_CAP'),
      recipientDailyCap: currencyAmounts(env, 'PAYOUT_RECIPIENT_DAILY_CAP'),
      balanceCacheS: int(env, 'BALANCE_CACHE_S', 30, 0, 86400),
    },
    reportTimeZone: timeZone(env, 'REPORT_TIMEZONE', 'UTC'),
    dataEncryptionKeys: keys.keys,
    devKeyRingPath: keys.path,
    insecureHttp: guards.insecureHttp,
    docsEnabled: bool(env, 'DOCS_ENABLED', sandboxMode),
    shopEvents,
    retention: retentionConfig(env, shopEvents),
    payoutApproval: approvalThresholds(env),
  };
}

/**
 * An IANA time-zone name (`Europe/Moscow`, `UTC`), as its canonical spelling. Offsets and POSIX
 * strings (`+03:00`, `UTC+3`, whose sign PostgreSQL reads the other way) are refused: the day's
 * boundaries are computed by PostgreSQL's AT TIME ZONE, which must read the same zone.
 */
function timeZone(env: Env, name: string, fallback: string): string {
  const raw = str(env, name) ?? fallback;
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(raw) || raw.length > 64)
    throw new ConfigError(
      name,
      `must be an IANA time zone name such as Europe/Moscow, got ${JSON.stringify(raw.slice(0, 64))}`,
    );
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: raw }).resolvedOptions().timeZone;
  } catch {
    throw new ConfigError(name, `is not a known time zone: ${JSON.stringify(raw)}`);
  }
}

// ---- secrets at rest and production guard rails (#16)

/**
 * Outside sandbox mode: https:// only (unless ALLOW_INSECURE_HTTP=true, which start-up then
 * warns about every time), and never the sandbox's publicly known shop id or secret.
 */
function productionGuards(
  env: Env,
  sandboxMode: boolean,
  port: number,
  shopIdRaw: string | undefined,
  secret: string | undefined,
): { publicBaseUrl: string; insecureHttp: string[] } {
  const publicBaseUrl = (url(env, 'PUBLIC_BASE_URL') ?? `http://localhost:${port}`).replace(
    /\/+$/,
    '',
  );
  const allowInsecure = bool(env, 'ALLOW_INSECURE_HTTP', false);
  const insecureHttp: string[] = [];
  if (sandboxMode) return { publicBaseUrl, insecureHttp };
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
  if (secret === SANDBOX_DEFAULT_SECRET)
    throw new ConfigError('GATEWAY_SECRET_KEY', "is the sandbox's public secret, not a real one");
  if (
    shopIdRaw !== undefined &&
    /^\d+$/.test(shopIdRaw) &&
    Number(shopIdRaw) === SANDBOX_DEFAULT_SHOP_ID
  )
    throw new ConfigError('GATEWAY_SHOP_ID', "is the sandbox's shop id, not a real shop");
  return { publicBaseUrl, insecureHttp };
}

function dataEncryptionKeys(
  env: Env,
  sandboxMode: boolean,
  dataDir: string,
  devKeyRing: (dataDir: string) => { text: string; path: string },
): { keys: DataKey[]; path?: string } {
  const raw = str(env, 'DATA_ENCRYPTION_KEYS');
  if (raw === undefined && !sandboxMode)
    throw new ConfigError(
      'DATA_ENCRYPTION_KEYS',
      'is required with a real gateway (id:base64-key; make a key with openssl rand -base64 32)',
    );
  const dev = raw === undefined ? devKeyRing(dataDir) : undefined;
  const variable = dev ? dev.path : 'DATA_ENCRYPTION_KEYS';
  try {
    return { keys: parseKeyRing(dev ? dev.text : raw!), path: dev?.path };
  } catch (e) {
    throw new ConfigError(variable, (e as Error).message);
  }
}

/** The development key ring: generated on first start, then read from `DATA_DIR`. */
function devKeyRingFile(dataDir: string): { text: string; path: string } {
  const path = join(dataDir, 'data-encryption-keys');
  return { text: keptFile(dataDir, path, () => `${generateKeyRingText()}\n`).trim(), path };
}

/**
 * A file made once under `dataDir`, readable by its owner only, then read at every start. Written
 * aside, then linked into place: two processes starting at once never read a half-written file,
 * and whichever links first wins.
 */
function keptFile(dataDir: string, path: string, make: () => string): string {
  mkdirSync(dataDir, { recursive: true });
  if (!existsSync(path)) {
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, make(), { mode: 0o600 });
    try {
      linkSync(tmp, path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      unlinkSync(tmp);
    }
  }
  return readFileSync(path, 'utf8');
}

const DEV_KEY_LINE = /^(shop|admin)=(\S{16,})$/;

/**
 * The development API keys (sandbox mode, none configured): made on first start, then the same
 * at every start (`DATA_DIR/development-api-keys`, lines `shop=…` and `admin=…`), so a shop's
 * configuration survives a restart like its data does.
 */
function devApiKeysFile(dataDir: string): { shop: string; admin: string; path: string } {
  const path = join(dataDir, 'development-api-keys');
  const text = keptFile(dataDir, path, () => `shop=${defaultKey()}\nadmin=${defaultKey()}\n`);
  const keys: Record<string, string> = {};
  for (const line of text.split('\n').map((l) => l.trim())) {
    const m = DEV_KEY_LINE.exec(line);
    if (m !== null) keys[m[1]] = m[2];
    else if (line !== '')
      throw new ConfigError(path, 'has a line that is not shop=KEY or admin=KEY');
  }
  if (keys.shop === undefined || keys.admin === undefined || keys.shop === keys.admin)
    throw new ConfigError(path, 'must hold two different keys, shop=KEY and admin=KEY');
  return { shop: keys.shop, admin: keys.admin, path };
}

function defaultKey(): string {
  return `dev_${randomBytes(24).toString('base64url')}`;
}

/** Nest injection token for the AppConfig object. */
export const APP_CONFIG = Symbol('APP_CONFIG');
