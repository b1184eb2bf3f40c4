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

export interface GatewayConfig {
  /** Base URL ending in `/gateway/v1/`. */
  baseUrl: string;
  shopId: number;
  secretKey: string;
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
  shopId: number;
  secretKey: string;
  /** Multiplies every delay of the sandbox (notification retries, payout progress). */
  timeScale: number;
  cataloguePath?: string;
  notifyFormat: 'json' | 'form';
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
  notifyAllowedIps: string[];
  trustProxy: boolean;
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
}

type Env = Record<string, string | undefined>;

const SPEC_NOTIFY_IPS = ['35.198.100.222', '35.198.175.25'];
export const SANDBOX_DEFAULT_SHOP_ID = 1001;
export const SANDBOX_DEFAULT_SECRET = 'sandbox-secret-key';

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

/** Builds the typed configuration; `generateKey` supplies development keys in sandbox mode. */
export function loadConfig(
  env: Env = process.env,
  generateKey: () => string = defaultKey,
): AppConfig {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const gatewayBaseUrl = url(env, 'GATEWAY_BASE_URL');
  const sandboxMode = gatewayBaseUrl === undefined;
  const sandbox: SandboxConfig = {
    port: int(env, 'SANDBOX_PORT', 4010, 0, 65535),
    shopId: int(env, 'SANDBOX_SHOP_ID', SANDBOX_DEFAULT_SHOP_ID, 1),
    secretKey: str(env, 'SANDBOX_SECRET_KEY') ?? SANDBOX_DEFAULT_SECRET,
    timeScale: positiveNumber(env, 'SANDBOX_TIME_SCALE', 1),
    cataloguePath: str(env, 'SANDBOX_CATALOGUE'),
    notifyFormat: (() => {
      const f = str(env, 'SANDBOX_NOTIFY_FORMAT') ?? 'json';
      if (f !== 'json' && f !== 'form')
        throw new ConfigError('SANDBOX_NOTIFY_FORMAT', 'must be json or form');
      return f;
    })(),
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
  const gateway: GatewayConfig = {
    baseUrl,
    shopId: int(env, 'GATEWAY_SHOP_ID', sandbox.shopId, 1),
    secretKey: secret ?? sandbox.secretKey,
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

  let apiKeys = bearerKeys(env, 'API_KEYS');
  let adminApiKeys = bearerKeys(env, 'ADMIN_API_KEYS');
  let generatedKeys = false;
  if (apiKeys.length === 0 || adminApiKeys.length === 0) {
    if (!sandboxMode) {
      throw new ConfigError(
        apiKeys.length === 0 ? 'API_KEYS' : 'ADMIN_API_KEYS',
        'is required with a real gateway',
      );
    }
    if (apiKeys.length === 0) apiKeys = [generateKey()];
    if (adminApiKeys.length === 0) adminApiKeys = [generateKey()];
    generatedKeys = true;
  }

  const notifyDefault = sandboxMode ? [...SPEC_NOTIFY_IPS, '127.0.0.1', '::1'] : SPEC_NOTIFY_IPS;
  const pollIntervalS = positiveNumber(env, 'PAYOUT_POLL_INTERVAL_S', 30);

  return {
    port,
    databaseUrl: databaseUrl(env),
    dataDir: str(env, 'DATA_DIR') ?? '.data',
    embeddedPgPort: int(env, 'EMBEDDED_PG_PORT', 54329, 1, 65535),
    sandboxMode,
    sandbox,
    gateway,
    publicBaseUrl: (url(env, 'PUBLIC_BASE_URL') ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    apiKeys,
    adminApiKeys,
    generatedKeys,
    notifyAllowedIps: list(env, 'NOTIFY_ALLOWED_IPS', notifyDefault),
    trustProxy: bool(env, 'TRUST_PROXY', false),
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
  };
}

function defaultKey(): string {
  return `dev_${randomBytes(24).toString('base64url')}`;
}

/** Nest injection token for the AppConfig object. */
export const APP_CONFIG = Symbol('APP_CONFIG');
