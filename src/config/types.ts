/**
 * The shape of the typed configuration object (`AppConfig`) and its parts. The values come from
 * the declarations in `schema.ts`, assembled by `loadConfig` (config.ts).
 */
import type { DataKey } from '../common/key-ring';
import type { Scope } from '../common/actor';
import type { Amount } from '../common/money';
import type { GatewayCall, GatewayCallConfig } from './gateway-calls';

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
  publicBaseUrl: string;
  apiKeys: string[];
  adminApiKeys: string[];
  /** True when the keys were generated at start-up (sandbox mode, none configured). */
  generatedKeys: boolean;
  /** Where generated development keys are kept (`DATA_DIR/development-api-keys`); unset: not kept. */
  devApiKeysPath?: string;
  notifyAllowedIps: string[];
  // --- hostile callers: key scopes, proxy trust, rate limits, database time limits
  /** Shop keys with their scopes (`API_KEYS` entries `key` or `key:scope+scope`); `apiKeys` holds the bare keys. */
  shopKeys: ShopKey[];
  /** The proxies whose X-Forwarded-For is believed (proxy-addr, as Fastify reads it): false, a hop count, or the trusted proxies' addresses/CIDRs. */
  trustProxy: TrustProxy;
  /** Requests per second; 0 turns the limit off. */
  rateLimits: {
    perKeyRps: number;
    publicPerIpRps: number;
    unauthenticatedPerIpRps: number;
    /** BATCH_UPLOADS_PER_KEY: payout batch uploads of one key at once (the rest 429). */
    batchUploadsPerKey: number;
  };
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
  /** Read by the logger itself at load (src/common/logger.ts); validated here. */
  logFormat: 'auto' | 'pretty' | 'json';
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
  // --- database pool, atomic create phases, payout re-create discipline
  // Database pool: DB_POOL_SIZE is `db.poolSize` of the hostile-callers block above.
  /** How long a repeat waits for an identical create still talking to the gateway, then 409. */
  createWaitMs: number;
  /** Conflicting repeats of one idempotency id before every repeat of it is refused. */
  idempotencyConflictLimit: number;
  /** Creates after "absent" a payout may get before an operator decides (PAYOUT_MAX_CREATES). */
  payoutMaxCreates: number;
  /** Status checks that must all say "absent", spread over at least the window, before a create counts as never made. */
  absentChecks: number;
  absentWindowS: number;
  /**
   * after its deadline a flagged invoice, refund or payout is still asked about every
   * `intervalS` (WATCH_INTERVAL_S) until `maxS` (WATCH_MAX_S) after its creation; only then does
   * it wait for an operator alone.
   */
  watch: { intervalS: number; maxS: number };
  /** HOLD_EXPIRY_WARNING_S: `invoice.hold_expiring` comes this long before a hold expires. */
  holdExpiryWarningS: number;
  /** HOLD_POLICY and HOLD_POLICY_LEAD_S (an invoice's `holdPolicy` overrides the policy). */
  holdPolicy: { policy: HoldPolicy; leadS: number };
  /** caps over the UTC day and the balance check before a payout is sent. */
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

  // ---- secrets at rest and production guard rails
  /** DATA_ENCRYPTION_KEYS: the first seals, all open. */
  dataEncryptionKeys: DataKey[];
  /** Set when the ring is the development one kept under DATA_DIR (sandbox mode, none configured). */
  devKeyRingPath?: string;
  /** Variables that use http:// outside sandbox mode because ALLOW_INSECURE_HTTP=true. */
  insecureHttp: string[];
  docsEnabled: boolean;
  shopEvents: ShopEventsConfig;
  /** what the retention jobs prune, in days (financial records never). */
  retention: RetentionConfig;
  /** PAYOUT_APPROVAL_THRESHOLD / PAYOUT_DUAL_APPROVAL_THRESHOLD. */
  payoutApproval: ApprovalThresholds;
  /** RECONCILE_BOOKS_AT: minutes after a REPORT_TIMEZONE day ends at which that day is reconciled. */
  reconcileBooksAtMinutes: number;
  /** OTEL_EXPORTER_OTLP_ENDPOINT (unset: no tracing) and OTEL_SERVICE_NAME. */
  otel: OtelConfig;
}

export interface OtelConfig {
  /** Where OTLP/HTTP traces are sent; unset: tracing off. */
  endpoint?: string;
  serviceName: string;
}

/**
 * PAYOUT_APPROVAL_THRESHOLD / PAYOUT_DUAL_APPROVAL_THRESHOLD: per ISO 4217 numeric currency, the
 * amount (in the payout's shop currency) at or above which a payout waits for one / two distinct
 * admin approvals. A currency with no entry has no threshold.
 */
export interface ApprovalThresholds {
  single: ReadonlyMap<number, Amount>;
  dual: ReadonlyMap<number, Amount>;
}

export interface RetentionConfig {
  /** RETENTION_DELIVERIES_DAYS: delivered webhook deliveries older than this are deleted. */
  deliveriesDays: number;
  /** RETENTION_NOTIFICATIONS_DAYS: applied or stale (repeated) verified notifications. */
  notificationsDays: number;
  /** RETENTION_EVENTS_DAYS: older shop events leave the feed (their audit entries stay). */
  eventsDays: number;
}

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

/** What the service does with a hold before it lapses (HOLD_POLICY, an invoice's `holdPolicy`). */
export const HOLD_POLICIES = ['notify', 'charge', 'release'] as const;
export type HoldPolicy = (typeof HOLD_POLICIES)[number];
