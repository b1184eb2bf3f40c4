import express, { NextFunction, Request, Response } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { logger } from '../common/logger';
import { SANDBOX_DEFAULT_SECRET, SANDBOX_DEFAULT_SHOP_ID } from '../config/config';
import { loadCatalogue } from './payway-catalogue';
import { controlRouter } from './control.routes';
import { balanceRouter } from './balance.routes';
import { restateRouter } from './restate.routes';
import { gatewayRouter } from './gateway.routes';
import { clockRouter, type ClockControl } from './clock.routes';
import { HOLD_LIFETIME_S, scheduleLapse } from './holds';
import { scheduleCompletion } from './invoices';
import { Notifier } from './notifier';
import { messagePage } from './pages';
import { payerRouter } from './payer.routes';
import { scheduleFinal } from './payouts';
import { scheduleRefundEnd } from './refunds';
import type { SandboxRuntime, SandboxShop } from './runtime';
import { awaitsPayment, NotifyFormat, payoutIsFinal, SandboxState } from './sandbox.state';
import { Scheduler } from './scheduler';
import { StateFile } from './state-file';

/**
 * The gateway sandbox: a stateful emulator of the `/gateway/v1/` gateway, with a payer page,
 * server notifications, and scenarios and faults to test a shop's client against.
 */

export interface SandboxOptions {
  /** 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The payment shop (or the one shop serving everything). */
  shopId?: number;
  secretKey?: string;
  /**
   * A separate agent shop for payouts and the balance, as on the gateway's test server; without
   * it (or with the payment shop's id) one shop serves both.
   */
  payoutShopId?: number;
  payoutSecretKey?: string;
  /** Multiplies every sandbox delay (0.001 in tests). */
  timeScale?: number;
  cataloguePath?: string;
  notifyFormat?: NotifyFormat;
  /** Shop-level notification URL; takes priority over the URLs of requests. */
  shopNotifyUrl?: string;
  /**
   * A file that keeps the state across restarts (sandbox mode: `$DATA_DIR/sandbox-state.json`);
   * unset: in memory only (the standalone sandbox, tests).
   */
  statePath?: string;
  /** How long a hold lasts (its `expires_at`); default a week (SANDBOX_HOLD_TTL_S in sandbox mode). */
  holdLifetimeS?: number;
  /**
   * Sandbox mode only: the service's clock, behind `/sandbox/clock` (src/clock/sandbox-clock.ts);
   * known once the service is up, hence a getter. Without it the clock routes do not exist.
   */
  clock?: () => ClockControl | undefined;
}

export interface SandboxHandle {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** origin + `/gateway/v1/` */
  baseUrl: string;
  close(): Promise<void>;
  /** The in-memory state, for tests. */
  state: SandboxState;
  /**
   * Runs the background tasks due by `until` (ms on the clock) in due order, `moveTo` called with
   * each one's time first: the sandbox clock's advance (src/clock/sandbox-clock.ts).
   */
  runDue(until: number, moveTo: (at: number) => void): Promise<number>;
  /**
   * Settings a restored state kept from an earlier run (those changed by `POST /sandbox/settings`
   * from that run's start-up settings): empty on a fresh start. The start-up block names them.
   */
  keptSettings: Record<string, unknown>;
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<SandboxHandle> {
  const log = logger.child({ component: 'sandbox' });
  const catalogue = loadCatalogue(opts.cataloguePath);
  const shops = hostedShops(opts);
  // The agent shop holds the money that is paid out.
  const balanceShop = shops.find((s) => s.serves.has('payout')) ?? shops[0];
  const state = new SandboxState(
    {
      notifyFormat: opts.notifyFormat ?? 'json',
      suppressNotifications: false,
      shopNotifyUrl: opts.shopNotifyUrl ?? null,
      timeScale: opts.timeScale ?? 1,
      timeoutDelayMs: null,
      latencyMs: 0,
      holdLifetimeS: opts.holdLifetimeS ?? HOLD_LIFETIME_S,
    },
    catalogue.balances,
    balanceShop.id,
  );
  const file = opts.statePath === undefined ? undefined : new StateFile(opts.statePath, state, log);
  const restored = file?.load() ?? false;
  const scheduler = new Scheduler(
    () => state.settings.timeScale,
    (e) => log.error({ err: e }, 'sandbox background task failed'),
    () => file?.touch(),
  );
  const secretOf = (shopId: number): string =>
    (shops.find((s) => s.id === shopId) ?? shops[0]).secretKey;
  const notifier = new Notifier(state, scheduler, secretOf, log);
  const rt: SandboxRuntime = {
    state,
    catalogue,
    scheduler,
    notifier,
    shops,
    origin: '',
    log,
  };

  const reset = (): void => {
    scheduler.cancelAll();
    notifier.stop();
    state.reset();
    file?.save();
  };

  const app = express();
  app.disable('x-powered-by');
  if (file !== undefined) {
    // Every request may change the state (a gateway call, the payer, the control API).
    app.use((_req, res, next) => {
      res.on('close', () => file.touch());
      next();
    });
  }
  app.use('/gateway/v1', gatewayRouter(rt));
  if (opts.clock !== undefined) app.use('/sandbox', clockRouter(opts.clock));
  app.use('/sandbox', controlRouter(rt, reset));
  app.use('/sandbox', balanceRouter(rt));
  app.use('/sandbox', restateRouter(rt));
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
  log.info(
    { origin: rt.origin, shops: shops.map((s) => ({ shop_id: s.id, serves: [...s.serves] })) },
    'gateway sandbox listening',
  );
  if (restored) {
    resumeTimers(rt);
    log.info(
      { path: file?.path, invoices: state.invoices.size, payouts: state.payouts.size },
      'gateway sandbox state restored',
    );
  }

  const keptSettings: Record<string, unknown> = {};
  if (restored)
    for (const [k, v] of Object.entries(state.settings))
      if (v !== (state.initialSettings as unknown as Record<string, unknown>)[k]) keptSettings[k] = v;

  return {
    keptSettings,
    origin: rt.origin,
    baseUrl: `${rt.origin}/gateway/v1/`,
    state,
    runDue: (until, moveTo) => scheduler.runDue(until, moveTo),
    close: async () => {
      scheduler.close();
      notifier.stop();
      try {
        await new Promise<void>((resolve, reject) => {
          server.close((e) => (e === undefined ? resolve() : reject(e)));
          server.closeAllConnections();
        });
      } finally {
        // After the server: no request changes the state past this last write.
        file?.close();
      }
    },
  };
}

/**
 * What was under way when the sandbox stopped goes on: payer-less completions, refunds, payouts
 * and notification attempts are scheduled for when they were due, and run at once if overdue.
 */
function resumeTimers(rt: SandboxRuntime): void {
  const { state } = rt;
  for (const invoice of state.invoices.values()) {
    if (awaitsPayment(invoice.status)) scheduleCompletion(rt, invoice);
    else scheduleLapse(rt, invoice);
  }
  for (const refund of state.refunds.values()) {
    const invoice = state.invoices.get(refund.invoiceId);
    if (refund.status === 'WAITING' && invoice !== undefined)
      scheduleRefundEnd(rt, invoice, refund);
  }
  for (const payout of state.payouts.values()) {
    if (!payoutIsFinal(payout.status)) scheduleFinal(rt, payout);
  }
  rt.notifier.resume();
}

function hostedShops(opts: SandboxOptions): SandboxShop[] {
  const payment: SandboxShop = {
    id: opts.shopId ?? SANDBOX_DEFAULT_SHOP_ID,
    secretKey: opts.secretKey ?? SANDBOX_DEFAULT_SECRET,
    serves: new Set(['payment', 'payout']),
  };
  if (opts.payoutShopId === undefined || opts.payoutShopId === payment.id) return [payment];
  if (opts.payoutSecretKey === undefined || opts.payoutSecretKey === payment.secretKey)
    throw new Error('the sandbox agent shop needs a secret key of its own');
  return [
    { ...payment, serves: new Set(['payment']) },
    { id: opts.payoutShopId, secretKey: opts.payoutSecretKey, serves: new Set(['payout']) },
  ];
}

function listen(app: express.Express, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}
