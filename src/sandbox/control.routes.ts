import express, { Request, Response, Router } from 'express';
import { DEFAULT_GATEWAY_CALLS } from '../config/config';
import { CALL_FAULTS, isFaultName } from './faults';
import { completePayment, PayerAction } from './invoices';
import { invoiceGroup, invoiceRecord } from './invoice-record';
import { Decimal } from './decimal';
import { JsonOut, moneyJson, toJsonText } from './json-text';
import { payeeKey } from './payouts';
import { maskAccount } from './protocol';
import type { SandboxRuntime } from './runtime';
import { awaitsPayment, INVOICE_STATUS, type Invoice, type SandboxState, Settings } from './sandbox.state';

/**
 * The control API under `/sandbox` (JSON): queue faults, read the request and notification logs,
 * change settings, act as the payer, report a chargeback, re-send notifications, reset.
 */

const KNOWN_PATHS = new Set(Object.values(DEFAULT_GATEWAY_CALLS).map((c) => c.path));

class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function reply(res: Response, data: JsonOut): void {
  res.type('application/json').send(toJsonText({ result: true, data }));
}

type Body = Record<string, unknown>;

function bodyOf(req: Request): Body {
  const b: unknown = req.body;
  return typeof b === 'object' && b !== null && !Array.isArray(b) ? (b as Body) : {};
}

function positiveInt(value: unknown, name: string, def: number): number {
  if (value === undefined) return def;
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw new ControlError(400, `${name} must be a whole number above 0`);
  return value as number;
}

function absoluteUrl(value: unknown, name: string): string {
  if (typeof value === 'string') {
    try {
      if (/^https?:$/.test(new URL(value).protocol)) return value;
    } catch {
      // reported below
    }
  }
  throw new ControlError(400, `${name} must be an absolute http(s) URL or null`);
}

/** Applies the given settings; every field optional, each checked. */
function changeSettings(settings: Settings, body: Body): void {
  const next = { ...settings };
  if (body.notifyFormat !== undefined) {
    if (body.notifyFormat !== 'json' && body.notifyFormat !== 'form')
      throw new ControlError(400, 'notifyFormat must be json or form');
    next.notifyFormat = body.notifyFormat;
  }
  if (body.suppressNotifications !== undefined) {
    if (typeof body.suppressNotifications !== 'boolean')
      throw new ControlError(400, 'suppressNotifications must be true or false');
    next.suppressNotifications = body.suppressNotifications;
  }
  if (body.shopNotifyUrl !== undefined) {
    next.shopNotifyUrl =
      body.shopNotifyUrl === null ? null : absoluteUrl(body.shopNotifyUrl, 'shopNotifyUrl');
  }
  if (body.timeScale !== undefined) {
    if (typeof body.timeScale !== 'number' || !(body.timeScale > 0))
      throw new ControlError(400, 'timeScale must be a number above 0');
    next.timeScale = body.timeScale;
  }
  if (body.timeoutDelayMs !== undefined) {
    const v = body.timeoutDelayMs;
    if (v !== null && (typeof v !== 'number' || !(v >= 0)))
      throw new ControlError(400, 'timeoutDelayMs must be a number of 0 or more, or null');
    next.timeoutDelayMs = v;
  }
  if (body.latencyMs !== undefined) {
    const v = body.latencyMs;
    if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v))
      throw new ControlError(400, 'latencyMs must be a number of 0 or more');
    next.latencyMs = v;
  }
  if (body.holdLifetimeS !== undefined) {
    const v = body.holdLifetimeS;
    if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v))
      throw new ControlError(400, 'holdLifetimeS must be a number above 0');
    next.holdLifetimeS = v;
  }
  Object.assign(settings, next);
}

export function controlRouter(rt: SandboxRuntime, reset: () => void): Router {
  const router = express.Router();
  router.use(express.json());
  const { state } = rt;

  const route =
    (handler: (req: Request) => JsonOut) =>
    (req: Request, res: Response): void => {
      try {
        reply(res, handler(req));
      } catch (e) {
        if (!(e instanceof ControlError)) throw e;
        res
          .status(e.status)
          .type('application/json')
          .send(toJsonText({ result: false, message: e.message }));
      }
    };

  router.post(
    '/faults',
    route((req) => {
      const b = bodyOf(req);
      if (typeof b.path !== 'string' || !KNOWN_PATHS.has(b.path))
        throw new ControlError(400, 'path must be a gateway call path such as withdraw/create');
      if (!isFaultName(b.fault))
        throw new ControlError(400, `fault must be one of ${CALL_FAULTS.join(', ')}`);
      let delayMs: number | undefined;
      if (b.delayMs !== undefined) {
        if (typeof b.delayMs !== 'number' || !(b.delayMs >= 0))
          throw new ControlError(400, 'delayMs must be a number of 0 or more');
        delayMs = b.delayMs;
      }
      state.faults.add({
        path: b.path,
        fault: b.fault,
        remaining: positiveInt(b.times, 'times', 1),
        delayMs,
      });
      return state.faults.list().map((f) => ({ ...f }));
    }),
  );
  router.get(
    '/faults',
    route(() => state.faults.list().map((f) => ({ ...f }))),
  );
  router.delete(
    '/faults',
    route(() => {
      state.faults.clear();
      return [];
    }),
  );

  router.get(
    '/requests',
    route(() => state.requests.map((r) => ({ ...r }))),
  );
  router.delete(
    '/requests',
    route(() => {
      state.requests = [];
      return [];
    }),
  );

  router.get(
    '/notifications',
    route(() => state.deliveries.map((d) => ({ ...d }))),
  );
  router.delete(
    '/notifications',
    route(() => {
      state.deliveries = [];
      return [];
    }),
  );
  router.post(
    '/notifications/resend',
    route((req) => {
      const b = bodyOf(req);
      if (typeof b.shop_order_id !== 'string')
        throw new ControlError(400, 'shop_order_id is required');
      const times = positiveInt(b.times, 'times', 1);
      if (!rt.notifier.resend(invoiceGroup(b.shop_order_id), times)) {
        throw new ControlError(404, `no notification of shop_order_id ${b.shop_order_id}`);
      }
      return { resent: times };
    }),
  );

  // check_account refuses (or, with `refused: false`, takes again) one payee account.
  router.post(
    '/payees/refuse',
    route((req) => {
      const b = bodyOf(req);
      if (typeof b.account !== 'string' || b.account.trim() === '' || b.account.length > 255)
        throw new ControlError(400, 'account is required: the payee account check_account should refuse');
      if (b.refused !== undefined && typeof b.refused !== 'boolean')
        throw new ControlError(400, 'refused must be true or false');
      const key = payeeKey(b.account);
      if (b.refused === false) state.refusedPayees.delete(key);
      else state.refusedPayees.add(key);
      return { account: maskAccount(b.account), refused: b.refused !== false };
    }),
  );

  router.get(
    '/settings',
    route(() => ({ ...state.settings })),
  );
  router.post(
    '/settings',
    route((req) => {
      changeSettings(state.settings, bodyOf(req));
      return { ...state.settings };
    }),
  );

  // The shop's order id (what the shop knows) or the gateway's invoice id (what the pay link names).
  const invoiceOf = (req: Request) => {
    const id = String(req.params.invoiceId);
    const invoice = invoiceByOrderOrId(state, rt.shops.map((shop) => shop.id), id);
    if (invoice === undefined)
      throw new ControlError(404, `no invoice with shop_order_id or invoice id ${JSON.stringify(id.slice(0, 100))}`);
    return invoice;
  };
  router.get(
    '/invoices/:invoiceId',
    route((req) => invoiceRecord(rt, invoiceOf(req), true)),
  );
  for (const action of ['pay', 'decline'] as PayerAction[]) {
    router.post(
      `/invoices/:invoiceId/${action}`,
      route((req) => {
        const invoice = invoiceOf(req);
        if (!awaitsPayment(invoice.status)) {
          throw new ControlError(
            409,
            `invoice ${invoice.id} does not await payment (status ${invoice.status})`,
          );
        }
        completePayment(rt, invoice, action);
        return invoiceRecord(rt, invoice, true);
      }),
    );
  }

  // The gateway's record of an invoice still awaiting payment moves to a status of its own that
  // is not final: 3 (the payment system's create failed) or 5 (its notice failed). No
  // notification: the shop learns it by asking (invoice/check).
  router.post(
    '/invoices/:invoiceId/status',
    route((req) => {
      const invoice = invoiceOf(req);
      const to = bodyOf(req).status;
      if (to !== 3 && to !== 5) throw new ControlError(400, 'status must be 3 or 5');
      if (!awaitsPayment(invoice.status))
        throw new ControlError(409, `invoice ${invoice.id} does not await payment (status ${invoice.status})`);
      invoice.status = to;
      invoice.updated = new Date();
      return invoiceRecord(rt, invoice, true);
    }),
  );

  // A chargeback of a paid invoice, as the gateway's manager reports one: the interface has no
  // call for it, so the service learns of it from the manager (an operator records the dispute)
  // and from the shop's balance, which drops by the amount here. At most what is left of the
  // payment (amount − successful refunds − earlier chargebacks).
  router.post(
    '/invoices/:invoiceId/chargeback',
    route((req) => {
      const invoice = invoiceOf(req);
      if (invoice.status !== INVOICE_STATUS.PAID)
        throw new ControlError(409, `invoice ${invoice.id} is not paid (status ${invoice.status})`);
      const text = bodyOf(req).amount;
      if (typeof text !== 'string' || !Decimal.isDecimalText(text))
        throw new ControlError(400, 'amount must be a decimal string');
      const amount = Decimal.parse(text);
      if (amount.isZero() || amount.isNegative())
        throw new ControlError(400, 'amount must be above zero');
      const before = Decimal.parse(invoice.chargedBack ?? '0');
      const left = invoice.amount.minus(state.refundedAmount(invoice.id)).minus(before);
      if (amount.compare(left) > 0)
        throw new ControlError(409, `amount is more than is left of the payment (${left.toString()})`);
      const total = before.plus(amount);
      invoice.chargedBack = total.toString();
      const balance = state.changeAvailable(invoice.shopId, invoice.currency, Decimal.ZERO.minus(amount));
      return {
        shop_order_id: invoice.shopOrderId,
        invoice_id: invoice.id,
        shop_id: invoice.shopId,
        currency: invoice.currency,
        amount: moneyJson(amount),
        charged_back: moneyJson(total),
        available: moneyJson(balance.available),
      };
    }),
  );

  // A charge still queued at the gateway: the shop's next invoice/unhold of this hold charges it.
  router.post(
    '/invoices/:invoiceId/charge-on-unhold',
    route((req) => {
      const invoice = invoiceOf(req);
      invoice.chargeOnUnhold = true;
      return invoiceRecord(rt, invoice, true);
    }),
  );

  router.post(
    '/reset',
    route(() => {
      reset();
      return { reset: true };
    }),
  );
  return router;
}

/**
 * The invoice a control route names: by the shop's order id first (in each hosted shop, in
 * order: the first found when two shops used one id), then by the gateway's invoice id when the
 * text is one.
 */
export function invoiceByOrderOrId(state: SandboxState, shopIds: readonly number[], id: string): Invoice | undefined {
  for (const shopId of shopIds) {
    const invoice = state.findInvoiceByOrder(shopId, id);
    if (invoice !== undefined) return invoice;
  }
  return /^\d{1,15}$/.test(id) ? state.invoices.get(Number(id)) : undefined;
}
