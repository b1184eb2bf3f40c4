/**
 * Every environment variable the service reads, declared once: name (the key), type, default,
 * bounds, group (the heading) and one line of documentation. `loadConfig` reads them through
 * these declarations, the cross-field rules live in rules.ts, and docs/configuration.md is
 * generated from this file (`npm run docs:config`). The builders are in schema-builders.ts,
 * a small local schema rather than zod, envalid or convict (not installed, and no dependency is
 * added for this): the one-line error messages are pinned by tests, money bounds are exact
 * decimals, and several rules span variables (its first comment says more).
 */
import { gatewayCalls } from './gateway-calls';
import { PAYOUTS, RECONCILIATION, RETENTION, SHOP_EVENTS, TRACING } from './schema-operations';
import {
  custom,
  decimal,
  derived,
  flag,
  group,
  httpUrl,
  integer,
  integerList,
  oneOf,
  optionalInteger,
  optionalText,
  stringList,
  text,
} from './schema-builders';
import {
  bearerKeys,
  databaseUrl,
  redisPrefix,
  redisUrl,
  shopKeys,
  trustProxyValue,
  utcOffset,
} from './values';

/** The gateway's notification source addresses named in its interface document. */
export const SPEC_NOTIFY_IPS = ['35.198.100.222', '35.198.175.25'];
export const SANDBOX_DEFAULT_SHOP_ID = 1001;
export const SANDBOX_DEFAULT_SECRET = 'sandbox-secret-key';
export const SANDBOX_DEFAULT_PAYOUT_SHOP_ID = 1002;
export const SANDBOX_DEFAULT_PAYOUT_SECRET = 'sandbox-payout-secret-key';

type Mode = { sandboxMode: boolean };

export const SERVICE = group('Service', 'The process, its storage and what it serves.', {
  PORT: integer({ doc: 'HTTP port', default: 3000, max: 65535 }),
  DATABASE_URL: custom({
    doc: 'PostgreSQL connection string (holds a password: never logged)',
    type: 'postgres:// URL',
    default: 'unset: an embedded PostgreSQL under `$DATA_DIR/postgres`',
    secret: true,
    read: databaseUrl,
  }),
  DATA_DIR: text({
    doc: 'where the embedded PostgreSQL and the development keys are kept',
    default: '.data',
  }),
  EMBEDDED_PG_PORT: integer({
    doc: 'port of the embedded PostgreSQL',
    default: 54329,
    min: 1,
    max: 65535,
  }),
  NODE_ENV: optionalText({
    doc: '`production` refuses to start without `GATEWAY_BASE_URL` (never a sandbox)',
    defaultText: 'unset',
  }),
  PUBLIC_BASE_URL: httpUrl({
    doc: 'address the gateway and payers reach this service at (callback and pay links)',
    default: derived(
      '`http://localhost:$PORT`',
      (c: { port: number }) => `http://localhost:${c.port}`,
    ),
  }),
  LOG_LEVEL: text({ doc: 'pino log level', default: 'info' }),
  LOG_FORMAT: oneOf({
    doc: 'log lines: `pretty` (readable, through pino-pretty), `json` (one JSON object a line, for a parser), or `auto`: pretty on a terminal outside production and tests, JSON otherwise (a pipe, a file, a container)',
    values: ['auto', 'pretty', 'json'] as const,
    default: 'auto',
  }),
  METRICS_TOKEN: optionalText({
    doc: 'when set, `/metrics` needs `Authorization: Bearer <token>` (compared in constant time)',
    defaultText: 'unset: `/metrics` open',
    secret: true,
  }),
  DOCS_ENABLED: flag({
    doc: 'serve `/docs` and `/docs-json`',
    default: derived('`true` in sandbox mode, `false` otherwise', (c: Mode) => c.sandboxMode),
  }),
  SCHEDULER_ENABLED: flag({ doc: 'run the scheduled jobs in this process', default: true }),
});

export const ACCESS = group(
  'Access and secrets',
  'Who may call the service, and the keys it keeps.',
  {
    API_KEYS: custom({
      doc: 'shop bearer keys (≥ 16 characters): `key` (every scope) or `key:scope+scope` (payments, refunds, payouts, read)',
      type: 'comma list',
      default: 'generated and printed in sandbox mode; required otherwise',
      secret: true,
      read: shopKeys,
    }),
    ADMIN_API_KEYS: custom({
      doc: 'admin bearer keys (≥ 16 characters)',
      type: 'comma list',
      default: 'generated and printed in sandbox mode; required otherwise',
      secret: true,
      read: bearerKeys,
    }),
    DATA_ENCRYPTION_KEYS: optionalText({
      doc: 'key ring for data at rest (payout accounts, payment tokens): `id:base64-32-bytes`, comma separated; the first seals, all open',
      defaultText:
        'generated once and kept in `$DATA_DIR/data-encryption-keys` in sandbox mode; required otherwise',
      secret: true,
    }),
    ALLOW_INSECURE_HTTP: flag({
      doc: 'accept `http://` gateway, public and webhook addresses outside sandbox mode (warned about at every start)',
      default: false,
    }),
    ADMIN_SESSION_TTL_S: integer({
      doc: "an operators' console session's lifetime",
      default: 8 * 3600,
      min: 60,
    }),
    ADMIN_SIGNIN_MAX_FAILURES: integer({
      doc: 'failed console sign-ins allowed per client address within one window',
      default: 5,
      min: 1,
    }),
    ADMIN_SIGNIN_WINDOW_S: integer({
      doc: 'the window of failed console sign-ins',
      default: 900,
      min: 1,
    }),
  },
);

export const GATEWAY = group('Gateway', 'The payment gateway and its two shops.', {
  GATEWAY_BASE_URL: httpUrl({
    doc: 'gateway base address, ending in `/gateway/v1/`',
    defaultText: 'unset: the built-in sandbox',
  }),
  GATEWAY_SHOP_ID: integer({
    doc: 'the payment shop: invoices, holds, charges, refunds, payment ways',
    default: derived(
      'the sandbox payment shop in sandbox mode; required otherwise',
      (c: { sandboxShopId: number }) => c.sandboxShopId,
    ),
    min: 1,
  }),
  GATEWAY_SECRET_KEY: optionalText({
    doc: "the payment shop's secret key (the sandbox's public one is refused)",
    defaultText: "the sandbox payment shop's in sandbox mode; required otherwise",
    secret: true,
  }),
  GATEWAY_PAYOUT_SHOP_ID: optionalInteger({
    doc: 'the agent shop: payouts, payout ways, balance; set both GATEWAY_PAYOUT_* or neither',
    defaultText: "the payment shop (the sandbox's agent shop in sandbox mode)",
    min: 1,
  }),
  GATEWAY_PAYOUT_SECRET_KEY: optionalText({
    doc: "the agent shop's secret key (the sandbox's public ones are refused)",
    defaultText: "the payment shop's (the sandbox's agent shop in sandbox mode)",
    secret: true,
  }),
  GATEWAY_TIMEOUT_MS: integer({ doc: 'read time-out for gateway calls', default: 30000, min: 1 }),
  NOTIFY_ALLOWED_IPS: stringList({
    doc: 'source addresses accepted on `/webhooks/gateway`',
    type: 'comma list of addresses',
    default: derived(
      '`35.198.100.222,35.198.175.25` (+ `127.0.0.1,::1` in sandbox mode)',
      (c: Mode) => (c.sandboxMode ? [...SPEC_NOTIFY_IPS, '127.0.0.1', '::1'] : SPEC_NOTIFY_IPS),
    ),
  }),
  NOTIFY_UNVERIFIED_KEEP: integer({
    doc: 'notifications failing verification kept as a sample for operators (oldest dropped)',
    default: 1000,
    min: 1,
  }),
});

export const GATEWAY_FACTS = group(
  'Gateway facts',
  'What the interface document leaves out, as configuration with the observed defaults.',
  {
    GATEWAY_CALLS: custom({
      doc: 'JSON overriding the path and/or signed fields of any call, e.g. `{"invoice/create-refund": {"path": "refund/create"}}`',
      type: 'JSON object',
      default: 'the documented and observed calls',
      read: gatewayCalls,
    }),
    GATEWAY_FATAL_ERROR_CODES: integerList({
      doc: 'error codes that end the operation',
      default: [10, 11, 15],
    }),
    GATEWAY_NONFATAL_ERROR_CODES: integerList({
      doc: 'error codes meaning "wait for the notification or poll the status"',
      default: [],
    }),
    GATEWAY_DUPLICATE_ERROR_CODE: integer({
      doc: '"shop_order_id / shop_payment_id is not unique": the object exists, look it up',
      default: 6,
    }),
    GATEWAY_ABSENT_ERROR_CODE: integer({
      doc: 'status call for an unknown payout: a create may be repeated',
      default: 7,
    }),
    GATEWAY_NOW_OFFSET: custom({
      doc: 'offset written into `now`, and the reading of offset-less times the gateway sends',
      type: 'UTC offset',
      default: '`+03:00`',
      bounds: '±HH:MM',
      read: (env, name) => utcOffset(env, name, '+03:00'),
    }),
    PAYOUT_STATUS_SUCCESS: integerList({
      doc: 'final payout status numbers: succeeded',
      default: [5],
    }),
    PAYOUT_STATUS_FAILED: integerList({ doc: 'final payout status numbers: failed', default: [8] }),
    PAYOUT_STATUS_REJECTED: integerList({
      doc: 'final payout status numbers: rejected',
      default: [6],
    }),
  },
);

export const SANDBOX = group(
  'Sandbox',
  'The built-in gateway emulator, used when `GATEWAY_BASE_URL` is unset.',
  {
    SANDBOX_PORT: integer({ doc: "the sandbox's port", default: 4010, max: 65535 }),
    SANDBOX_SHOP_ID: integer({
      doc: "the sandbox's payment shop",
      default: SANDBOX_DEFAULT_SHOP_ID,
      min: 1,
    }),
    SANDBOX_SECRET_KEY: text({
      doc: "the sandbox payment shop's secret",
      default: SANDBOX_DEFAULT_SECRET,
    }),
    SANDBOX_PAYOUT_SHOP_ID: integer({
      doc: "the sandbox's agent shop, which holds the balance (the payment shop's id: one shop for both)",
      default: SANDBOX_DEFAULT_PAYOUT_SHOP_ID,
      min: 1,
    }),
    SANDBOX_PAYOUT_SECRET_KEY: optionalText({
      doc: "the sandbox agent shop's secret (must differ from SANDBOX_SECRET_KEY for a separate shop)",
      defaultText: `\`${SANDBOX_DEFAULT_PAYOUT_SECRET}\` (the payment shop's for one shop)`,
    }),
    SANDBOX_TIME_SCALE: decimal({
      doc: 'multiplies every sandbox delay (notification retries, payout progress)',
      default: 1,
    }),
    SANDBOX_CATALOGUE: optionalText({
      doc: 'path of a JSON payway catalogue (payways, conversion rates, balances)',
      defaultText: 'built-in',
    }),
    SANDBOX_NOTIFY_FORMAT: oneOf({
      doc: 'notification bodies: JSON or x-www-form-urlencoded',
      values: ['json', 'form'] as const,
      default: 'json',
    }),
    SANDBOX_HOLD_TTL_S: integer({
      doc: 'how long a sandbox hold lasts (its `expires_at`)',
      default: 604800,
      min: 1,
    }),
  },
);

export const LIMITS = group(
  'Hostile callers and limits',
  'Proxy trust, rate limits, HTTP server limits and database time limits.',
  {
    TRUST_PROXY: custom({
      doc: "whose `X-Forwarded-For` to believe: `false`, a hop count, or the proxies' addresses/CIDRs (or `loopback`)",
      type: 'false, integer or comma list',
      default: '`false`',
      bounds: 'no range wider than /8 (IPv4) or /32 (IPv6)',
      read: trustProxyValue,
    }),
    TRUST_PROXY_ALLOW_WIDE: flag({
      doc: 'accept wide `TRUST_PROXY` ranges anyway (only when every address in them is a proxy of yours)',
      default: false,
    }),
    RATE_LIMIT_PER_KEY_RPS: integer({
      doc: 'requests per second per API key on `/api/v1`; `0` turns it off',
      default: 50,
    }),
    RATE_LIMIT_PUBLIC_PER_IP_RPS: integer({
      doc: 'requests per second per client address on `/pay`, the console (`/admin`: its pages and sign-in) and unlisted `/webhooks/gateway` callers; `0` turns it off',
      default: 10,
    }),
    RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS: integer({
      doc: 'requests per second per client address without a valid key; `0` turns it off',
      default: 5,
    }),
    BATCH_UPLOADS_PER_KEY: integer({
      doc: 'payout batch uploads (dry runs included) of one key running at once in an instance; more is a `429`',
      default: 2,
      min: 1,
      max: 100,
    }),
    REDIS_URL: custom({
      doc: 'shared store for rate limits across instances (holds a password: never logged)',
      type: 'redis:// or rediss:// URL',
      default: 'unset: per-instance limits in memory',
      secret: true,
      read: redisUrl,
    }),
    RATE_LIMIT_REDIS_PREFIX: custom({
      doc: 'first part of every rate-limit key in Redis, so several environments can share one',
      type: 'string',
      default: '`rl`',
      bounds: '1–64 of `A-Za-z0-9_.:-`',
      read: (env, name) => redisPrefix(env, name, 'rl'),
    }),
    HTTP_HEADERS_TIMEOUT_MS: integer({
      doc: 'a client must send its headers within this (≤ HTTP_REQUEST_TIMEOUT_MS)',
      default: 10_000,
      min: 1,
    }),
    HTTP_REQUEST_TIMEOUT_MS: integer({
      doc: 'a client must send its whole request within this',
      default: 30_000,
      min: 1,
    }),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: integer({
      doc: "idle keep-alive connections are closed after this (set it above a load balancer's idle time)",
      default: 5_000,
      min: 1,
    }),
    HTTP_MAX_CONNECTIONS: integer({
      doc: 'open connections per instance; past it new ones are dropped',
      default: 1024,
      min: 1,
    }),
    DB_POOL_SIZE: integer({
      doc: 'database connections per instance',
      default: 20,
      min: 1,
      max: 1000,
    }),
    DB_POOL_ACQUIRE_TIMEOUT_MS: integer({
      doc: 'longest wait for a free connection (then `503`)',
      default: 10_000,
      min: 1,
    }),
    DB_STATEMENT_TIMEOUT_MS: integer({
      doc: 'PostgreSQL `statement_timeout`',
      default: 45_000,
      min: 1,
    }),
    DB_LOCK_TIMEOUT_MS: integer({ doc: 'PostgreSQL `lock_timeout`', default: 40_000, min: 1 }),
    DB_IDLE_IN_TX_TIMEOUT_MS: integer({
      doc: 'PostgreSQL `idle_in_transaction_session_timeout`',
      default: 60_000,
      min: 1,
    }),
  },
);

/** Every group, in the document's order. */
export const CONFIG_GROUPS = [
  SERVICE,
  ACCESS,
  GATEWAY,
  GATEWAY_FACTS,
  SANDBOX,
  LIMITS,
  RECONCILIATION,
  PAYOUTS,
  SHOP_EVENTS,
  RETENTION,
  TRACING,
] as const;

/** Every variable by name, as loadConfig reads them. */
export const V = {
  ...SERVICE.vars,
  ...ACCESS.vars,
  ...GATEWAY.vars,
  ...GATEWAY_FACTS.vars,
  ...SANDBOX.vars,
  ...LIMITS.vars,
  ...RECONCILIATION.vars,
  ...PAYOUTS.vars,
  ...SHOP_EVENTS.vars,
  ...RETENTION.vars,
  ...TRACING.vars,
};
