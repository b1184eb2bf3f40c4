/**
 * The one typed configuration object. Built once at start-up from the environment by
 * `loadConfig`; a bad value throws a `ConfigError` whose message is one line naming the
 * variable and what is wrong (never the value of a secret).
 *
 * Each variable is declared once in schema.ts / schema-operations.ts (type, default, bounds,
 * group, one line of doc); the rules between variables are in rules.ts; this file only puts the
 * values together, in the order they have always been checked (so the first error reported for
 * a bad environment stays the same). docs/configuration.md is generated from the declarations.
 *
 * Gateway facts that the interface document leaves out (paths and signed fields of some calls,
 * which error codes are fatal, what payout status numbers mean) are configuration here, with the
 * defaults observed in public clients (docs/gateway-facts.md).
 */
import { apiKeys, dataEncryptionKeys, devKeyRingFile } from './keys';
import { type Env } from './parse';
import {
  dualNotBelowSingle,
  eventsOutliveRetries,
  gatewayBaseUrl,
  gatewayPayoutShop,
  headersWithinRequest,
  paymentShop,
  productionGuards,
  requireGatewayInProduction,
  sandboxPayoutShop,
  trustProxyWidth,
  webhookLeaseOutlivesPost,
  webhookSecretWithUrls,
} from './rules';
import { V } from './schema';
import type {
  AppConfig,
  DbLimits,
  GatewayConfig,
  HttpLimits,
  RateLimitStoreConfig,
  RetentionConfig,
  SandboxConfig,
  ShopEventsConfig,
} from './types';

export { ConfigError } from './parse';
export { DEFAULT_GATEWAY_CALLS, type GatewayCall, type GatewayCallConfig } from './gateway-calls';
export {
  SANDBOX_DEFAULT_PAYOUT_SECRET,
  SANDBOX_DEFAULT_PAYOUT_SHOP_ID,
  SANDBOX_DEFAULT_SECRET,
  SANDBOX_DEFAULT_SHOP_ID,
} from './schema';
export type * from './types';

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
  const port = V.PORT.read(env);
  const configuredGateway = V.GATEWAY_BASE_URL.read(env);
  requireGatewayInProduction(env, configuredGateway);
  const sandboxMode = configuredGateway === undefined;
  const sandbox = sandboxConfig(env);
  const gateway = gatewayConfig(env, configuredGateway, sandbox, sandboxMode);

  const dataDir = V.DATA_DIR.read(env);
  const keys = apiKeys(env, sandboxMode, dataDir, generateKey);
  const publicBaseUrl = V.PUBLIC_BASE_URL.read(env, { port })!.replace(/\/+$/, '');
  const insecureHttp = productionGuards(env, sandboxMode, publicBaseUrl);
  const dataKeys = dataEncryptionKeys(env, sandboxMode, dataDir, devKeyRing);

  const pollIntervalS = V.PAYOUT_POLL_INTERVAL_S.read(env, { sandboxMode });
  const shopEvents = shopEventsConfig(env);

  return {
    port,
    databaseUrl: V.DATABASE_URL.read(env),
    dataDir,
    embeddedPgPort: V.EMBEDDED_PG_PORT.read(env),
    sandboxMode,
    sandbox,
    gateway,
    publicBaseUrl,
    apiKeys: keys.apiKeys,
    adminApiKeys: keys.adminApiKeys,
    generatedKeys: keys.generatedKeys,
    devApiKeysPath: keys.devApiKeysPath,
    notifyAllowedIps: V.NOTIFY_ALLOWED_IPS.read(env, { sandboxMode }),
    shopKeys: keys.shopKeys,
    trustProxy: trustProxyWidth(env, V.TRUST_PROXY.read(env)),
    rateLimits: {
      perKeyRps: V.RATE_LIMIT_PER_KEY_RPS.read(env),
      publicPerIpRps: V.RATE_LIMIT_PUBLIC_PER_IP_RPS.read(env),
      unauthenticatedPerIpRps: V.RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS.read(env),
      batchUploadsPerKey: V.BATCH_UPLOADS_PER_KEY.read(env),
    },
    rateLimitStore: rateLimitStore(env),
    notifyUnverifiedKeep: V.NOTIFY_UNVERIFIED_KEEP.read(env),
    db: dbLimits(env),
    http: httpLimits(env),
    metricsToken: V.METRICS_TOKEN.read(env),
    logLevel: V.LOG_LEVEL.read(env),
    logFormat: V.LOG_FORMAT.read(env),
    payouts: {
      pollIntervalS,
      pollMaxS: V.PAYOUT_POLL_MAX_S.read(env),
      leaseS: V.PAYOUT_LEASE_S.read(env, { pollIntervalS }),
      concurrency: V.PAYOUT_POLL_CONCURRENCY.read(env),
      status: {
        success: V.PAYOUT_STATUS_SUCCESS.read(env),
        failed: V.PAYOUT_STATUS_FAILED.read(env),
        rejected: V.PAYOUT_STATUS_REJECTED.read(env),
      },
    },
    invoices: {
      reconcileGraceS: V.INVOICE_RECONCILE_GRACE_S.read(env),
      reconcileMaxS: V.INVOICE_RECONCILE_MAX_S.read(env),
    },
    refunds: {
      reconcileGraceS: V.REFUND_RECONCILE_GRACE_S.read(env),
      reconcileMaxS: V.REFUND_RECONCILE_MAX_S.read(env),
    },
    tickMs: V.RECONCILE_TICK_MS.read(env),
    schedulerEnabled: V.SCHEDULER_ENABLED.read(env),
    paywayRefreshS: V.PAYWAY_REFRESH_S.read(env),
    console: {
      sessionTtlS: V.ADMIN_SESSION_TTL_S.read(env),
      signInMaxFailures: V.ADMIN_SIGNIN_MAX_FAILURES.read(env),
      signInWindowS: V.ADMIN_SIGNIN_WINDOW_S.read(env),
    },
    createWaitMs: V.CREATE_WAIT_MS.read(env),
    idempotencyConflictLimit: V.IDEMPOTENCY_CONFLICT_LIMIT.read(env),
    payoutMaxCreates: V.PAYOUT_MAX_CREATES.read(env),
    absentChecks: V.ABSENT_CHECKS.read(env),
    absentWindowS: V.ABSENT_WINDOW_S.read(env),
    watch: {
      intervalS: V.WATCH_INTERVAL_S.read(env),
      maxS: V.WATCH_MAX_S.read(env),
    },
    holdExpiryWarningS: V.HOLD_EXPIRY_WARNING_S.read(env),
    holdPolicy: { policy: V.HOLD_POLICY.read(env), leadS: V.HOLD_POLICY_LEAD_S.read(env) },
    payoutControls: {
      dailyCap: V.PAYOUT_DAILY_CAP.read(env),
      recipientDailyCap: V.PAYOUT_RECIPIENT_DAILY_CAP.read(env),
      balanceCacheS: V.BALANCE_CACHE_S.read(env),
    },
    reportTimeZone: V.REPORT_TIMEZONE.read(env),
    dataEncryptionKeys: dataKeys.keys,
    devKeyRingPath: dataKeys.path,
    insecureHttp,
    docsEnabled: V.DOCS_ENABLED.read(env, { sandboxMode }),
    shopEvents,
    retention: retentionConfig(env, shopEvents),
    payoutApproval: dualNotBelowSingle(
      V.PAYOUT_APPROVAL_THRESHOLD.read(env),
      V.PAYOUT_DUAL_APPROVAL_THRESHOLD.read(env),
    ),
    reconcileBooksAtMinutes: V.RECONCILE_BOOKS_AT.read(env),
    otel: {
      endpoint: V.OTEL_EXPORTER_OTLP_ENDPOINT.read(env),
      serviceName: V.OTEL_SERVICE_NAME.read(env),
    },
  };
}

function sandboxConfig(env: Env): SandboxConfig {
  return {
    port: V.SANDBOX_PORT.read(env),
    shopId: V.SANDBOX_SHOP_ID.read(env),
    secretKey: V.SANDBOX_SECRET_KEY.read(env),
    ...sandboxPayoutShop(env),
    timeScale: V.SANDBOX_TIME_SCALE.read(env),
    cataloguePath: V.SANDBOX_CATALOGUE.read(env),
    notifyFormat: V.SANDBOX_NOTIFY_FORMAT.read(env),
    holdTtlS: V.SANDBOX_HOLD_TTL_S.read(env),
  };
}

function gatewayConfig(
  env: Env,
  configured: string | undefined,
  sandbox: SandboxConfig,
  sandboxMode: boolean,
): GatewayConfig {
  const baseUrl = gatewayBaseUrl(configured, sandbox.port);
  const payment = paymentShop(env, sandbox, sandboxMode);
  return {
    baseUrl,
    shops: {
      payment,
      payout: gatewayPayoutShop(env, payment, sandboxMode ? sandbox : undefined),
    },
    timeoutMs: V.GATEWAY_TIMEOUT_MS.read(env),
    calls: V.GATEWAY_CALLS.read(env),
    fatalErrorCodes: V.GATEWAY_FATAL_ERROR_CODES.read(env),
    nonFatalErrorCodes: V.GATEWAY_NONFATAL_ERROR_CODES.read(env),
    duplicateErrorCode: V.GATEWAY_DUPLICATE_ERROR_CODE.read(env),
    absentErrorCode: V.GATEWAY_ABSENT_ERROR_CODE.read(env),
    nowOffset: V.GATEWAY_NOW_OFFSET.read(env),
  };
}

function rateLimitStore(env: Env): RateLimitStoreConfig {
  return { redisUrl: V.REDIS_URL.read(env), prefix: V.RATE_LIMIT_REDIS_PREFIX.read(env) };
}

function dbLimits(env: Env): DbLimits {
  return {
    poolSize: V.DB_POOL_SIZE.read(env),
    acquireTimeoutMs: V.DB_POOL_ACQUIRE_TIMEOUT_MS.read(env),
    statementTimeoutMs: V.DB_STATEMENT_TIMEOUT_MS.read(env),
    lockTimeoutMs: V.DB_LOCK_TIMEOUT_MS.read(env),
    idleInTxTimeoutMs: V.DB_IDLE_IN_TX_TIMEOUT_MS.read(env),
  };
}

function httpLimits(env: Env): HttpLimits {
  const headersTimeoutMs = V.HTTP_HEADERS_TIMEOUT_MS.read(env);
  const requestTimeoutMs = V.HTTP_REQUEST_TIMEOUT_MS.read(env);
  headersWithinRequest(headersTimeoutMs, requestTimeoutMs);
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: V.HTTP_KEEP_ALIVE_TIMEOUT_MS.read(env),
    maxConnections: V.HTTP_MAX_CONNECTIONS.read(env),
  };
}

function shopEventsConfig(env: Env): ShopEventsConfig {
  const urls = V.SHOP_WEBHOOK_URL.read(env);
  const secret = V.SHOP_WEBHOOK_SECRET.read(env);
  webhookSecretWithUrls(urls, secret);
  const timeoutMs = V.SHOP_WEBHOOK_TIMEOUT_MS.read(env);
  const leaseS = V.SHOP_WEBHOOK_LEASE_S.read(env);
  webhookLeaseOutlivesPost(leaseS, timeoutMs);
  return {
    urls,
    secret,
    timeoutMs,
    retryBaseS: V.SHOP_WEBHOOK_RETRY_BASE_S.read(env),
    retryMaxIntervalS: V.SHOP_WEBHOOK_RETRY_MAX_INTERVAL_S.read(env),
    retryForS: V.SHOP_WEBHOOK_RETRY_FOR_S.read(env),
    leaseS,
    tickMs: V.SHOP_WEBHOOK_TICK_MS.read(env),
    concurrency: V.SHOP_WEBHOOK_CONCURRENCY.read(env),
  };
}

function retentionConfig(env: Env, shopEvents: ShopEventsConfig): RetentionConfig {
  const eventsDays = V.RETENTION_EVENTS_DAYS.read(env);
  eventsOutliveRetries(eventsDays, shopEvents.retryForS);
  return {
    deliveriesDays: V.RETENTION_DELIVERIES_DAYS.read(env),
    notificationsDays: V.RETENTION_NOTIFICATIONS_DAYS.read(env),
    eventsDays,
  };
}

/** Nest injection token for the AppConfig object. */
export const APP_CONFIG = Symbol('APP_CONFIG');
