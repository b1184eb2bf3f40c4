import express, { NextFunction, Request, Response } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { logger } from '../common/logger';
import { SANDBOX_DEFAULT_SECRET, SANDBOX_DEFAULT_SHOP_ID } from '../config/config';
import { loadCatalogue } from './payway-catalogue';
import { controlRouter } from './control.routes';
import { gatewayRouter } from './gateway.routes';
import { Notifier } from './notifier';
import { messagePage } from './pages';
import { payerRouter } from './payer.routes';
import type { SandboxRuntime } from './runtime';
import { NotifyFormat, SandboxState } from './sandbox.state';
import { Scheduler } from './scheduler';

/**
 * The gateway sandbox: a stateful emulator of the `/gateway/v1/` gateway, with a payer page,
 * server notifications, and scenarios and faults to test a shop's client against.
 */

export interface SandboxOptions {
  /** 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  shopId?: number;
  secretKey?: string;
  /** Multiplies every sandbox delay (0.001 in tests). */
  timeScale?: number;
  cataloguePath?: string;
  notifyFormat?: NotifyFormat;
  /** Shop-level notification URL; takes priority over the URLs of requests. */
  shopNotifyUrl?: string;
}

export interface SandboxHandle {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** origin + `/gateway/v1/` */
  baseUrl: string;
  close(): Promise<void>;
  /** The in-memory state, for tests. */
  state: SandboxState;
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<SandboxHandle> {
  const log = logger.child({ component: 'sandbox' });
  const catalogue = loadCatalogue(opts.cataloguePath);
  const state = new SandboxState(
    {
      notifyFormat: opts.notifyFormat ?? 'json',
      suppressNotifications: false,
      shopNotifyUrl: opts.shopNotifyUrl ?? null,
      timeScale: opts.timeScale ?? 1,
      timeoutDelayMs: null,
    },
    catalogue.balances,
  );
  const scheduler = new Scheduler(
    () => state.settings.timeScale,
    (e) => log.error({ err: e }, 'sandbox background task failed'),
  );
  const secretKey = opts.secretKey ?? SANDBOX_DEFAULT_SECRET;
  const notifier = new Notifier(state, scheduler, secretKey, log);
  const rt: SandboxRuntime = {
    state,
    catalogue,
    scheduler,
    notifier,
    shopId: opts.shopId ?? SANDBOX_DEFAULT_SHOP_ID,
    secretKey,
    origin: '',
    log,
  };

  const reset = (): void => {
    scheduler.cancelAll();
    notifier.stop();
    state.reset();
  };

  const app = express();
  app.disable('x-powered-by');
  app.use('/gateway/v1', gatewayRouter(rt));
  app.use('/sandbox', controlRouter(rt, reset));
  app.use('/sandbox', payerRouter(rt));
  app.use((_req, res) => {
    res.status(404).type('html').send(messagePage('Not found', 'The sandbox has no such page.'));
  });
  app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const status = (err as { status?: unknown }).status;
    const clientError = typeof status === 'number' && status >= 400 && status < 500;
    if (!clientError) log.error({ err }, 'sandbox request failed');
    res
      .status(clientError ? status : 500)
      .type('html')
      .send(
        messagePage(
          'Request failed',
          clientError ? 'The request could not be read.' : 'Sandbox error.',
        ),
      );
  });

  const host = opts.host ?? '127.0.0.1';
  const server = await listen(app, opts.port ?? 0, host);
  const { port } = server.address() as AddressInfo;
  rt.origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log.info({ origin: rt.origin, shop_id: rt.shopId }, 'gateway sandbox listening');

  return {
    origin: rt.origin,
    baseUrl: `${rt.origin}/gateway/v1/`,
    state,
    close: () => {
      scheduler.close();
      notifier.stop();
      return new Promise<void>((resolve, reject) => {
        server.close((e) => (e === undefined ? resolve() : reject(e)));
        server.closeAllConnections();
      });
    },
  };
}

function listen(app: express.Express, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}
