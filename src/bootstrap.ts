import 'reflect-metadata';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import helmet from 'helmet';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { SwaggerModule } from '@nestjs/swagger';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { logger, PinoNestLogger } from './common/logger';
import { PROBLEM_BASE } from './common/problem.filter';
import { openApiDocument } from './common/openapi';
import { createValidationPipe } from './common/validation';
import { foldMetadataQuery } from './common/metadata';
import { parse as parseQueryString } from 'node:querystring';
import { CONSOLE_ROUTES } from './console/console.controller';
import type { AppConfig } from './config/config';
import { startEmbeddedPostgres } from './database/embedded-postgres';
import { runMigrations } from './database/migrate';
import { openRowsOfOtherShops } from './database/other-shop-rows';
import { KeyRing } from './common/key-ring';
import { ApiKeyTable } from './common/auth.guard';
import { applyHttpLimits, keylessGate, noStoreMiddleware, parsedUnlessKeyless } from './common/edge.middleware';
import { RateLimiter } from './common/rate-limit';
import { isBatchUpload, PAYOUT_BATCH_BODY_LIMIT } from './common/input-guard.middleware';
import { upgradeLegacySecrets } from './keys/reseal';
import { rekeyNotifications } from './notifications/notification-rekey';

/** A start-up failure with one line for the operator (names the setting, never a secret). */
export class StartupError extends Error {}

export interface RunningService {
  app: INestApplication;
  config: AppConfig & { databaseUrl: string };
  /** Where the HTTP server listens, e.g. http://127.0.0.1:3000 */
  url: string;
  close(): Promise<void>;
}

/** Routes outside /api/v1 (shared/API.md: webhooks, payer page, health, metrics, docs). */
export const UNPREFIXED = [
  'health',
  'health/ready',
  'metrics',
  'webhooks/gateway',
  'pay/:shopOrderId',
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
      const db = await startEmbeddedPostgres({ dir: `${config.dataDir}/postgres`, port: config.embeddedPgPort });
      cleanups.push(() => db.stop());
      databaseUrl = db.url;
      logger.info({ port: config.embeddedPgPort, dir: `${config.dataDir}/postgres` }, 'embedded PostgreSQL started');
    }
    if (config.sandboxMode) {
      // Loaded only in sandbox mode: a production process never carries the emulator.
      const { startSandbox } = await import('./sandbox/sandbox.server');
      const sandbox = await startSandbox({
        port: config.sandbox.port,
        shopId: config.sandbox.shopId,
        secretKey: config.sandbox.secretKey,
        payoutShopId: config.sandbox.payoutShopId,
        payoutSecretKey: config.sandbox.payoutSecretKey,
        timeScale: config.sandbox.timeScale,
        cataloguePath: config.sandbox.cataloguePath,
        notifyFormat: config.sandbox.notifyFormat,
        // Kept beside the embedded database, so a restart changes nothing either side can see.
        statePath: join(config.dataDir, 'sandbox-state.json'),
      }).catch((e: Error) => {
        throw new StartupError(`Cannot start the gateway sandbox on SANDBOX_PORT ${config.sandbox.port}: ${e.message}`);
      });
      cleanups.push(() => sandbox.close());
      logger.info({ baseUrl: sandbox.baseUrl }, 'gateway sandbox started (no GATEWAY_BASE_URL set)');
    }
    for (const variable of config.insecureHttp) {
      // Every start, on purpose: an http:// address outside sandbox mode must stay noticed.
      logger.warn({ variable }, `${variable} is http:// (ALLOW_INSECURE_HTTP=true): traffic to it is not encrypted`);
    }
    if (config.devKeyRingPath)
      logger.info({ path: config.devKeyRingPath }, 'development data-encryption key ring in use (sandbox mode)');
    const full = { ...config, databaseUrl };
    const app = await createApp(full);
    cleanups.unshift(() => app.close());
    await runMigrations(app.get(DataSource));
    for (const r of await openRowsOfOtherShops(app.get(DataSource), config.gateway)) {
      logger.error(r, 'open rows of a gateway shop that is no longer configured are not reconciled');
    }
    await upgradeSecretsAtRest(app, config);
    await rekeyNotificationInbox(app);
    await app.init();
    problemForUnrouted(app);
    await app.listen(config.port, opts.host ?? '0.0.0.0').catch((e: Error) => {
      throw new StartupError(`Cannot listen on PORT ${config.port}: ${e.message}`);
    });
    const address = app.getHttpServer().address() as { port: number };
    return {
      app,
      config: full,
      url: `http://127.0.0.1:${address.port}`,
      close: async () => {
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
): Promise<NestExpressApplication> {
  const server = express();
  // Routes match exactly as declared: `/API/v1/...` or `/health/` is no route (defence in depth;
  // access itself never depends on the path's spelling, see AuthGuard).
  server.set('case sensitive routing', true);
  server.set('strict routing', true);
  // Express 5's simple parser, with `metadata[key]=value` list filters gathered into one object.
  server.set('query parser', (text: string) => foldMetadataQuery(parseQueryString(text) as Record<string, unknown>));
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), new ExpressAdapter(server), {
    // Preview: the module graph without providers (no database), enough to describe the routes.
    preview: opts.preview,
    logger: opts.preview ? false : new PinoNestLogger(),
    rawBody: true,
    abortOnError: false,
  });
  app.disable('x-powered-by');
  // Every answer is `no-store` (noStoreMiddleware): a validator would never be used, and hashing
  // each body for a weak ETag is per-request work for nothing (issue #23).
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  app.use(noStoreMiddleware);
  app.use(securityHeaders(config.publicBaseUrl));
  problemOnClientError(app.getHttpServer() as Server);
  applyHttpLimits(app.getHttpServer() as Server, config.http);
  // Before the body parsers: a request without a valid key is counted, and its body never read.
  if (!opts.preview) app.use(keylessGate(new ApiKeyTable(config), app.get(RateLimiter)));
  app.use(payoutBatchBodyParser());
  app.useBodyParser('json', { limit: '64kb', type: parsedUnlessKeyless('application/json') });
  app.useBodyParser('urlencoded', {
    limit: '64kb',
    extended: false,
    type: parsedUnlessKeyless('application/x-www-form-urlencoded'),
  });
  app.setGlobalPrefix('api/v1', { exclude: UNPREFIXED });
  app.useGlobalPipes(createValidationPipe());
  if (config.docsEnabled) {
    SwaggerModule.setup('docs', app, () => openApiDocument(app), { jsonDocumentUrl: 'docs-json' });
  }
  return app;
}

/**
 * `POST /payouts/batches` alone reads up to PAYOUT_BATCH_BODY_LIMIT, as JSON or `text/csv`; a
 * body it parsed is not parsed again by the 64 kB parsers that follow (body-parser skips it).
 */
function payoutBatchBodyParser(): express.RequestHandler {
  const json = express.json({ limit: PAYOUT_BATCH_BODY_LIMIT, type: parsedUnlessKeyless('application/json') });
  const csv = express.text({ limit: PAYOUT_BATCH_BODY_LIMIT, type: parsedUnlessKeyless('text/csv') });
  return (req, res, next) => {
    if (!isBatchUpload(req)) return next();
    json(req, res, (err?: unknown) => (err ? next(err) : csv(req, res, next)));
  };
}

/**
 * helmet on every response: a CSP with no inline script (the payer page sets its own, with a
 * nonce), no framing, nosniff, and HSTS when the service is reached over https.
 */
function securityHeaders(publicBaseUrl: string): express.RequestHandler {
  return fixedHeaders(helmetFor(publicBaseUrl));
}

/**
 * Helmet's headers do not depend on the request (no nonces here): they are worked out once by
 * running helmet against a recording response, and then set by one middleware instead of helmet's
 * chain of eleven (issue #23). test/hostile-callers and the console tests check the headers.
 */
function fixedHeaders(middleware: express.RequestHandler): express.RequestHandler {
  const set: Array<[string, string]> = [];
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: unknown) => set.push([name, String(value)]),
    removeHeader: (name: string) => removed.push(name),
  };
  let called = false;
  middleware({} as express.Request, recorder as unknown as express.Response, () => (called = true));
  if (!called) throw new Error('security headers: helmet did not run synchronously');
  return (_req, res, next) => {
    for (const [name, value] of set) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}

function helmetFor(publicBaseUrl: string): express.RequestHandler {
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

/**
 * Nest answers unknown paths under its prefix; anything else that no route takes (`/API/V1/…`
 * under case-sensitive routing, `/nothing`) or that fails before Nest runs would get Express's
 * HTML page. Registered after init, so it comes after every route.
 */
function problemForUnrouted(app: NestExpressApplication): void {
  const send = (res: express.Response, status: number, detail: string): void => {
    if (res.headersSent) return;
    const title = status === 404 ? 'Not Found' : 'Bad Request';
    res
      .status(status)
      .type('application/problem+json')
      .send(JSON.stringify({ type: `${PROBLEM_BASE}${status === 404 ? 'not-found' : 'bad-request'}`, title, status, detail }));
  };
  app.use((req: express.Request, res: express.Response) => send(res, 404, `No route for ${req.method} ${req.path.slice(0, 200)}`));
  app.use((err: { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    void _next;
    const status = typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 400;
    send(res, status === 404 ? 404 : 400, 'The request could not be read');
  });
}

const CLIENT_ERRORS: Record<string, { status: number; type: string; title: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    type: 'request-header-fields-too-large',
    title: 'Request Header Fields Too Large',
    detail: 'The request line or headers are too large',
  },
  // HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS ran out before the request was complete.
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    type: 'request-timeout',
    title: 'Request Timeout',
    detail: 'The request was not received in time',
  },
  default: { status: 400, type: 'bad-request', title: 'Bad Request', detail: 'The request could not be parsed' },
};

/**
 * Requests Node's HTTP parser refuses before Express sees them (headers or URL too large,
 * malformed request line) still get a problem+json answer instead of a bare status line.
 */
function problemOnClientError(server: Server): void {
  server.on('clientError', (err: Error & { code?: string }, socket) => {
    if (!socket.writable) return;
    const answer = CLIENT_ERRORS[err.code ?? ''] ?? CLIENT_ERRORS.default;
    const body = JSON.stringify({
      type: `${PROBLEM_BASE}${answer.type}`,
      title: answer.title,
      status: answer.status,
      detail: answer.detail,
    });
    socket.end(
      `HTTP/1.1 ${answer.status} ${answer.title}\r\n` +
        `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    );
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
