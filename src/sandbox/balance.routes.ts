import express, { Request, Response, Router } from 'express';
import { Decimal } from './decimal';
import { JsonOut, moneyJson, toJsonText } from './json-text';
import type { SandboxRuntime } from './runtime';
import type { Balance } from './sandbox.state';

/**
 * The control API's balance routes: read a shop's balances, top the agent shop up (money the
 * shop sent to the gateway), and inject an unexplained change of the available balance (a
 * fault: no call made it, so the service's books cannot know it and its reconciliation must).
 *
 * - `GET /sandbox/balances?shopId=` (default the agent shop)
 * - `POST /sandbox/balances/top-up {currency, amount, shopId?}`: amount a positive decimal string
 * - `POST /sandbox/balances/drift {currency, amount, shopId?}`: amount a non-zero signed one
 */
function fail(res: Response, status: number, message: string): void {
  res
    .status(status)
    .type('application/json')
    .send(toJsonText({ result: false, message }));
}

function balanceJson(currency: number, b: Balance): JsonOut {
  return {
    currency,
    available: moneyJson(b.available),
    hold: moneyJson(b.hold),
    frozen: moneyJson(b.frozen),
  };
}

export function balanceRouter(rt: SandboxRuntime): Router {
  const router = express.Router();
  router.use('/balances', express.json());
  const { state } = rt;

  const shopOf = (value: unknown): number | null => {
    if (value === undefined || value === '') return state.agentShopId;
    const n =
      typeof value === 'number'
        ? value
        : typeof value === 'string' && /^\d{1,9}$/.test(value)
          ? parseInt(value, 10)
          : NaN;
    return Number.isInteger(n) && n > 0 ? n : null;
  };

  router.get('/balances', (req: Request, res: Response) => {
    const shopId = shopOf(req.query.shopId);
    if (shopId === null) return fail(res, 400, 'shopId must be a shop id');
    const balances = [...state.balancesOf(shopId).entries()]
      .sort(([a], [b]) => a - b)
      .map(([c, b]) => balanceJson(c, b));
    res
      .type('application/json')
      .send(toJsonText({ result: true, data: { shop_id: shopId, balances } }));
  });

  for (const kind of ['top-up', 'drift'] as const) {
    router.post(`/balances/${kind}`, (req: Request, res: Response) => {
      const b = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<
        string,
        unknown
      >;
      const shopId = shopOf(b.shopId);
      if (shopId === null) return fail(res, 400, 'shopId must be a shop id');
      const currency = b.currency;
      if (
        typeof currency !== 'number' ||
        !Number.isInteger(currency) ||
        currency < 1 ||
        currency > 999
      ) {
        return fail(res, 400, 'currency must be a numeric currency code');
      }
      const text = b.amount;
      if (typeof text !== 'string' || !Decimal.isDecimalText(text)) {
        return fail(res, 400, 'amount must be a decimal string');
      }
      const amount = Decimal.parse(text);
      if (amount.isZero() || (kind === 'top-up' && amount.isNegative())) {
        return fail(
          res,
          400,
          kind === 'top-up' ? 'amount must be positive' : 'amount must not be zero',
        );
      }
      const after = state.changeAvailable(shopId, currency, amount);
      if (after.available.isNegative()) {
        state.changeAvailable(shopId, currency, Decimal.ZERO.minus(amount));
        return fail(res, 409, 'the available balance would be negative');
      }
      res
        .type('application/json')
        .send(toJsonText({ result: true, data: balanceJson(currency, after) }));
    });
  }
  return router;
}
