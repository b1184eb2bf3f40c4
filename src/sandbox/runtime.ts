import type { Logger } from 'pino';
import type { Catalogue } from './payway-catalogue';
import type { CallFault } from './faults';
import type { JsonOut } from './json-text';
import type { Notifier } from './notifier';
import type { RequestFields } from './protocol';
import type { SandboxState } from './sandbox.state';
import type { Scheduler } from './scheduler';

/** What a shop may do: take payments (invoices, refunds) or pay out (agent shop, balance). */
export type ShopService = 'payment' | 'payout';

/** A shop the sandbox hosts: its own id, secret and services (a single shop serves both). */
export interface SandboxShop {
  id: number;
  secretKey: string;
  serves: ReadonlySet<ShopService>;
}

/** What every part of a running sandbox shares. */
export interface SandboxRuntime {
  state: SandboxState;
  catalogue: Catalogue;
  scheduler: Scheduler;
  notifier: Notifier;
  shops: readonly SandboxShop[];
  /** `http://127.0.0.1:PORT`, known once the server listens. */
  origin: string;
  log: Logger;
}

/** One authenticated gateway call being answered. */
export interface CallContext {
  rt: SandboxRuntime;
  fields: RequestFields;
  shopId: number;
  /** The fault hitting this call, when it lets the operation run (nonfatal, timeout_done, reset_done). */
  fault?: CallFault;
}

/** Performs a call and returns the envelope's `data`; throws GatewayError for `result: false`. */
export type CallHandler = (ctx: CallContext) => JsonOut;

/** Sandbox delays (before timeScale), in milliseconds. */
export const DELAYS_MS = {
  /** Payer-less completions: token charges, the nonfatal scenario. */
  autoComplete: 1000,
  /** From WAITING to the refund's final status. */
  refund: 2000,
  /** Each payout status step. */
  payoutStep: 1500,
  /** Default delay of the time-out faults, past a client's 30 s time-out. */
  timeoutFault: 35_000,
} as const;

export function timeoutDelayMs(rt: SandboxRuntime, override?: number): number {
  return (
    override ??
    rt.state.settings.timeoutDelayMs ??
    DELAYS_MS.timeoutFault * rt.state.settings.timeScale
  );
}
