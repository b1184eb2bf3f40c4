import 'reflect-metadata';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { logger, PinoNestLogger } from './common/logger';
import { createValidationPipe } from './common/validation';
import type { AppConfig } from './config/config';
import { startEmbeddedPostgres } from './database/embedded-postgres';
import { runMigrations } from './database/migrate';

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
const UNPREFIXED = ['health', 'health/ready', 'metrics', 'webhooks/gateway', 'pay/:shopOrderId'];

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
        timeScale: config.sandbox.timeScale,
        cataloguePath: config.sandbox.cataloguePath,
        notifyFormat: config.sandbox.notifyFormat,
      }).catch((e: Error) => {
        throw new StartupError(`Cannot start the gateway sandbox on SANDBOX_PORT ${config.sandbox.port}: ${e.message}`);
      });
      cleanups.push(() => sandbox.close());
      logger.info({ baseUrl: sandbox.baseUrl }, 'gateway sandbox started (no GATEWAY_BASE_URL set)');
    }
    const full = { ...config, databaseUrl };
    const app = await createApp(full);
    cleanups.unshift(() => app.close());
    await runMigrations(app.get(DataSource));
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
export async function createApp(config: AppConfig & { databaseUrl: string }): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    logger: new PinoNestLogger(),
    rawBody: true,
    abortOnError: false,
  });
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.useBodyParser('json', { limit: '64kb' });
  app.useBodyParser('urlencoded', { limit: '64kb', extended: false });
  app.setGlobalPrefix('api/v1', { exclude: UNPREFIXED });
  app.useGlobalPipes(createValidationPipe());
  const doc = new DocumentBuilder()
    .setTitle('Payment orchestration API')
    .setDescription(
      'Shop-facing API over the /gateway/v1/ payment gateway. Amounts are decimal strings; errors are ' +
        'application/problem+json (RFC 9457). Creates are idempotent by the shop id (shopOrderId, ' +
        'shopRefundId, shopPaymentId): the same body replays the stored result, another body is 409.',
    )
    .setVersion('1.0.0')
    .addBearerAuth()
    .addSecurityRequirements('bearer')
    .build();
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, doc), { jsonDocumentUrl: 'docs-json' });
  return app;
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
