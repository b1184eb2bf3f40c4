import 'reflect-metadata';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import helmet from 'helmet';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { SwaggerModule } from '@nestjs/swagger';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { logger, PinoNestLogger } from './common/logger';
import { openApiDocument } from './common/openapi';
import { createValidationPipe } from './common/validation';
import { foldMetadataQuery } from './common/metadata';
import { parse as parseQueryString } from 'node:querystring';
import { CONSOLE_ROUTES } from './console/console.controller';
import type { AppConfig } from './config/config';
import { startEmbeddedPostgres } from './database/embedded-postgres';
import { runMigrations } from './database/migrate';
import { stopJobs } from './jobs/schedule';
import { openRowsOfOtherShops } from './database/other-shop-rows';
import { KeyRing } from './common/key-ring';
import { ApiKeyTable } from './common/auth.guard';
import { applyHttpLimits, BODY_LIMIT, installEdge, problemOnClientError, problemOnFrameworkError, startDraining } from './common/http-edge';
import { RateLimiter } from './common/rate-limit';
import { upgradeLegacySecrets } from './keys/reseal';
import { rekeyNotifications } from './notifications/notification-rekey';
import { startTracing, traceJobs, tracingOf } from './tracing/tracing';
import { AdvanceRefused, SandboxClock, type SandboxTasks } from './clock/sandbox-clock';
import { makeClockMovable } from './common/clock';
import { storeClockOffset, storedClockOffset } from './database/clock-sql';
import type { ClockControl } from './sandbox/clock.routes';
import type { JsonOut } from './sandbox/json-text';

/**
 * Stops the HTTP server and waits for the requests in flight: no new connection is accepted, a
 * request on a connection already open is still served (return503OnClosing off), every answer
 * from now on says `Connection: close`, and a connection left idle is closed at once (otherwise a
 * kept-alive one would hold the close open for the keep-alive time-out).
 */
async function drainHttp(app: NestFastifyApplication): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  startDraining(fastify);
  const closed = fastify.close();
  const reap = setInterval(() => fastify.server.closeIdleConnections(), 50);
  try {
    await closed;
  } finally {
    clearInterval(reap);
  }
}

function schedulerOf(app: NestFastifyApplication): SchedulerRegistry | null {
  try {
    return app.get(SchedulerRegistry, { strict: false });
  } catch {
    return null;
  }
}

/** A start-up failure with one line for the operator (names the setting, never a secret). */
export class StartupError extends Error {}


export interface RunningService {
  app: INestApplication;
  config: AppConfig & { databaseUrl: string };
  /** Where the HTTP server listens, e.g. http://127.0.0.1:3000 */
  url: string;
  /** Sandbox mode: the sandbox settings a restart kept from an earlier run (the start-up block names them). */
  sandboxKeptSettings: Record<string, unknown>;
  close(): Promise<void>;
}

/** Routes outside /api/v1 (shared/API.md: webhooks, payer page, health, metrics, docs). */
export const UNPREFIXED = [
  'health',
  'health/ready',
  'metrics',
  'webhooks/gateway',
  'pay/:shopOrderId',
  'pay/l/:id',
  ...CONSOLE_ROUTES,
];

/**
 * Starts the whole service: the database (DATABASE_URL, or an embedded PostgreSQL), the gateway
 * sandbox when no GATEWAY_BASE_URL is set, migrations, then the HTTP server.
 */
export async function startService(config: AppConfig, opts: { host?: string } = {}): Promise<RunningService> {
  const cleanups: Array<() => Promise<void>> = [];
  try {
    let databaseUrl = config.databaseUrl;
    if (databaseUrl) {
      await checkDatabase(databaseUrl);
    } else {
      // In a process group of its own: a Ctrl-C stops the service, which stops the database last.
      const db = await startEmbeddedPostgres({
        dir: `${config.dataDir}/postgres`,
        port: config.embeddedPgPort,
        ownProcessGroup: true,
      }).catch(
        (e: Error) => {
          throw new StartupError(
            `Cannot start the embedded PostgreSQL on EMBEDDED_PG_PORT ${config.embeddedPgPort} (or set DATABASE_URL): ${e.message}`,
          );
        },
      );
      cleanups.push(() => db.stop());
      databaseUrl = db.url;
      logger.info({ port: config.embeddedPgPort, dir: `${config.dataDir}/postgres` }, 'embedded PostgreSQL started');
    }
    let sandboxClock: SandboxClock | undefined;
    let sandboxTasks: SandboxTasks | undefined;
    let sandboxKeptSettings: Record<string, unknown> = {};
    if (config.sandboxMode) {
      // Loaded only in sandbox mode: a production process never carries the emulator.
      const { startSandbox } = await import('./sandbox/sandbox.server');
      const sandbox = await startSandbox({
        // The service's clock behind /sandbox/clock, once the service is up (below).
        clock: () => (sandboxClock === undefined ? undefined : clockControl(sandboxClock)),
        port: config.sandbox.port,
        shopId: config.sandbox.shopId,
        secretKey: config.sandbox.secretKey,
        payoutShopId: config.sandbox.payoutShopId,
        payoutSecretKey: config.sandbox.payoutSecretKey,
        timeScale: config.sandbox.timeScale,
        cataloguePath: config.sandbox.cataloguePath,
        notifyFormat: config.sandbox.notifyFormat,
        holdLifetimeS: config.sandbox.holdTtlS,
        // Kept beside the embedded database, so a restart changes nothing either side can see.
        statePath: join(config.dataDir, 'sandbox-state.json'),
      }).catch((e: Error) => {
        throw new StartupError(`Cannot start the gateway sandbox on SANDBOX_PORT ${config.sandbox.port}: ${e.message}`);
      });
      cleanups.push(() => sandbox.close());
      sandboxTasks = sandbox;
      sandboxKeptSettings = sandbox.keptSettings;
      logger.info({ baseUrl: sandbox.baseUrl }, 'gateway sandbox started (no GATEWAY_BASE_URL set)');
    }
    for (const variable of config.insecureHttp) {
      // Every start, on purpose: an http:// address outside sandbox mode must stay noticed.
      logger.warn({ variable }, `${variable} is http:// (ALLOW_INSECURE_HTTP=true): traffic to it is not encrypted`);
    }
    if (config.devKeyRingPath)
      logger.info({ path: config.devKeyRingPath }, 'development data-encryption key ring in use (sandbox mode)');
    // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; then shut down after the app (its last spans sent).
    const tracing = await startTracing(config.otel);
    if (tracing) {
      cleanups.unshift(() => tracing.shutdown());
      logger.info({ endpoint: config.otel.endpoint, serviceName: config.otel.serviceName }, 'tracing on: spans sent over OTLP/HTTP');
    }
    const full = { ...config, databaseUrl };
    const app = await createApp(full);
    cleanups.unshift(() => app.close());
    await runMigrations(app.get(DataSource));
    await startClock(app.get(DataSource), config.sandboxMode);
    for (const r of await openRowsOfOtherShops(app.get(DataSource), config.gateway)) {
      logger.error(r, 'open rows of a gateway shop that is no longer configured are not reconciled');
    }
    await upgradeSecretsAtRest(app, config);
    await rekeyNotificationInbox(app);
    await app.init();
    await app.listen(config.port, opts.host ?? '0.0.0.0').catch((e: Error) => {
      throw new StartupError(`Cannot listen on PORT ${config.port}: ${e.message}`);
    });
    if (sandboxTasks !== undefined) sandboxClock = new SandboxClock(app, sandboxTasks);
    const address = app.getHttpServer().address() as { port: number };
    return {
      app,
      config: full,
      url: `http://127.0.0.1:${address.port}`,
      sandboxKeptSettings,
      close: async () => {
        // The requests in flight and the jobs' work in flight finish before the gateway client
        // and the database they use are closed (Nest's own close runs its destroy hooks, which
        // close them, before it closes the HTTP server). The jobs stop starting work at once
        // (stopJobs marks them before its first wait) while the HTTP server drains.
        const scheduler = schedulerOf(app);
        const jobsDone = scheduler ? stopJobs(scheduler) : Promise.resolve();
        await drainHttp(app).catch((e: Error) => logger.warn({ err: e.message }, 'shutdown step failed'));
        await jobsDone.catch((e: Error) => logger.warn({ err: e.message }, 'shutdown step failed'));
        for (const c of cleanups) await c().catch((e: Error) => logger.warn({ err: e.message }, 'shutdown step failed'));
      },
    };
  } catch (e) {
    for (const c of cleanups) await c().catch(() => undefined);
    throw e;
  }
}

/** The Nest application with every global setting, not yet listening. Shared by main and tests. */
export async function createApp(
  config: AppConfig & { databaseUrl: string },
  opts: { preview?: boolean } = {},
): Promise<NestFastifyApplication> {
  const fixed = fixedHeaders(helmetFor(config.publicBaseUrl));
  const adapter = new FastifyAdapter({
    routerOptions: {
      // Routes match exactly as declared: `/API/v1/...` or `/health/` is no route (defence in
      // depth; access itself never depends on the path's spelling, see AuthGuard).
      caseSensitive: true,
      ignoreTrailingSlash: false,
      ignoreDuplicateSlashes: false,
      // A long id is the validator's 400 naming the field, not a 404.
      maxParamLength: 2048,
      // The simple parser, with `metadata[key]=value` list filters gathered into one object.
      querystringParser: (text: string) => foldMetadataQuery(parseQueryString(text) as Record<string, unknown>),
    },
    bodyLimit: BODY_LIMIT,
    // TRUST_PROXY (proxy-addr): a hop count trusts that many proxies in front.
    trustProxy: typeof config.trustProxy === 'number' ? hopsTrusted(config.trustProxy) : config.trustProxy,
    clientErrorHandler: problemOnClientError,
    frameworkErrors: problemOnFrameworkError(fixed),
    logger: false,
    // While the server drains (bootstrap's close), a request on a connection already open is
    // served, answered with `Connection: close`, rather than refused with Fastify's own 503 body:
    // the client goes elsewhere for its next request and nothing it sent is lost.
    return503OnClosing: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    // Preview: the module graph without providers (no database), enough to describe the routes.
    preview: opts.preview,
    logger: opts.preview ? false : new PinoNestLogger(),
    // The edge reads bodies itself (installEdge): its limits, the raw bytes, keyless bodies unread.
    bodyParser: false,
    abortOnError: false,
  });
  const server = app.getHttpServer() as Server;
  applyHttpLimits(server, config.http);
  const tracing = tracingOf(config.otel);
  const scheduler = tracing && !opts.preview ? schedulerOf(app) : null;
  if (tracing && scheduler) traceJobs(scheduler, tracing);
  installEdge(app.getHttpAdapter().getInstance(), {
    fixedHeaders: fixed,
    // Before the body parsers: a request without a valid key is counted, and its body never read.
    gate: opts.preview
      ? undefined
      : {
          keys: new ApiKeyTable(config),
          limiter: app.get(RateLimiter),
          batchUploadsPerKey: config.rateLimits.batchUploadsPerKey,
        },
    tracing,
  });
  app.setGlobalPrefix('api/v1', { exclude: UNPREFIXED });
  app.useGlobalPipes(createValidationPipe());
  if (config.docsEnabled) {
    // Sandbox mode: the sandbox's own routes (its port) are listed too, under `sandbox`.
    const sandboxOrigin = config.sandboxMode ? `http://localhost:${config.sandbox.port}` : undefined;
    SwaggerModule.setup('docs', app, () => openApiDocument(app, { sandboxOrigin }), { jsonDocumentUrl: 'docs-json' });
  }
  return app;
}

function hopsTrusted(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/**
 * Helmet's headers do not depend on the request (no nonces here): they are worked out once by
 * running helmet against a recording response, and then set with the other fixed headers by the
 * edge's first hook. test/hostile-callers and the console tests check the headers.
 */
function fixedHeaders(middleware: Middleware): Record<string, string> {
  const set: Record<string, string> = {};
  const recorder = {
    setHeader: (name: string, value: unknown) => (set[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => delete set[name.toLowerCase()],
  };
  let called = false;
  middleware({} as IncomingMessage, recorder as unknown as ServerResponse, () => (called = true));
  if (!called) throw new Error('security headers: helmet did not run synchronously');
  return set;
}

/**
 * helmet on every response: a CSP with no inline script (the payer page sets its own, with a
 * nonce), no framing, nosniff, and HSTS when the service is reached over https.
 */
function helmetFor(publicBaseUrl: string): Middleware {
  const https = publicBaseUrl.startsWith('https:');
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        // The OpenAPI UI sets inline styles.
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'", 'data:'],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        ...(https ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
  });
}

/** The data step that follows the migrations: see src/keys/reseal.ts. */
async function upgradeSecretsAtRest(app: INestApplication, config: AppConfig): Promise<void> {
  const report = await upgradeLegacySecrets(app.get(DataSource), app.get(KeyRing), config.gateway.shops.payment.secretKey);
  const resealed = Object.values(report.resealed).reduce((a, b) => a + b, 0);
  if (resealed > 0) logger.info({ resealed: report.resealed }, 'secrets at rest sealed under the data-encryption key ring');
  if (report.failed.length > 0)
    logger.error(
      { count: report.failed.length, columns: [...new Set(report.failed.map((f) => f.column))] },
      'some values sealed before the key ring could not be opened (was GATEWAY_SECRET_KEY changed?)',
    );
}

/** The second data step: inbox rows of an older key recipe get the current key (notification-rekey.ts). */
async function rekeyNotificationInbox(app: INestApplication): Promise<void> {
  const report = await rekeyNotifications(app.get(DataSource), app.get(KeyRing));
  if (report.rekeyed + report.superseded > 0)
    logger.info({ rekeyed: report.rekeyed, superseded: report.superseded }, 'notification inbox keys recomputed from the signed fields');
  if (report.failed.length > 0)
    logger.error({ count: report.failed.length }, 'some inbox rows could not be opened to recompute their keys; left as they were');
}

async function checkDatabase(url: string): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (e) {
    throw new StartupError(`Cannot connect to DATABASE_URL: ${(e as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The service's clock at start-up (src/common/clock.ts, src/database/clock-sql.ts). Sandbox mode:
 * movable, from the offset an earlier run left (the clock never moves back). Otherwise the system
 * clock: a database a sandbox run left moved is set back to it, loudly.
 */
async function startClock(ds: DataSource, sandboxMode: boolean): Promise<void> {
  const offset = await storedClockOffset(ds);
  if (sandboxMode) {
    makeClockMovable(offset);
    if (offset > 0) {
      await storeClockOffset(ds, offset);
      logger.info({ offsetSeconds: offset }, 'sandbox clock moved by an earlier run: kept');
    }
    return;
  }
  if (offset !== 0) {
    await storeClockOffset(ds, 0);
    logger.warn({ offsetSeconds: offset }, 'the database held a moved sandbox clock: set back to the system clock');
  }
}

/** The sandbox clock as the sandbox's routes use it. */
function clockControl(c: SandboxClock): ClockControl {
  return {
    read: () => ({ ...c.read() }),
    advance: async (seconds) => JSON.parse(JSON.stringify(await c.advance(seconds))) as JsonOut,
    refused: (e) => e instanceof AdvanceRefused,
  };
}
