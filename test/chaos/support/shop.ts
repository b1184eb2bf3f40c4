import {
  ApiAnswer,
  paymentPayway,
  PAYOUT_ACCOUNT,
  payoutPayway,
  SHOP_ID,
  sleep,
  World,
} from './world';
import type { Tracked } from './ledger';

/**
 * A shop as the service's clients behave: it repeats a create with the same id and body when the
 * answer is lost (network error, 5xx, 409 in progress), a few times, and never makes a new id for
 * the same order.
 */

export type Answer = ApiAnswer | { status: 0; body: Record<string, unknown> };

async function call(world: World, method: string, path: string, body: unknown): Promise<Answer> {
  try {
    return await world.api(method, path, body);
  } catch (e) {
    return { status: 0, body: { error: (e as Error).message } };
  }
}

/** Repeats while the answer is lost or the service says "in progress" / 5xx. */
export async function withRepeats(
  world: World,
  method: string,
  path: string,
  body: unknown,
  repeats = 2,
): Promise<Answer> {
  let answer = await call(world, method, path, body);
  for (
    let i = 0;
    i < repeats && (answer.status === 0 || answer.status === 409 || answer.status >= 500);
    i++
  ) {
    if (answer.status === 409 && !/progress/i.test(JSON.stringify(answer.body))) break;
    await sleep(300 + Math.random() * 500);
    answer = await call(world, method, path, body);
  }
  return answer;
}

let counter = 0;
export const uniqueId = (prefix: string): string =>
  `${prefix}-${Date.now().toString(36)}-${(counter += 1)}`;

/** An amount with cents, exact: 100.00 … 899.99. */
export const randomAmount = (): string =>
  `${100 + Math.floor(Math.random() * 800)}.${String(Math.floor(Math.random() * 100)).padStart(2, '0')}`;

export interface InvoiceOrder {
  shopOrderId: string;
  amount: string;
  currency: number;
  payway: string;
  twoStep?: boolean;
}

/** A payment in roubles, or in dollars (`usd`), of the kind `paymentPayway` names. */
export function invoiceOrder(kind = 'payer', twoStep = false, usd = false): InvoiceOrder {
  return {
    shopOrderId: uniqueId('inv'),
    amount: randomAmount(),
    currency: usd ? 840 : 643,
    payway: paymentPayway(kind, usd),
    twoStep,
  };
}

export function createInvoice(
  world: World,
  tracked: Tracked,
  order: InvoiceOrder,
  repeats = 2,
): Promise<Answer> {
  tracked.invoices.add(order.shopOrderId);
  return withRepeats(
    world,
    'POST',
    '/api/v1/invoices',
    {
      shopOrderId: order.shopOrderId,
      amount: order.amount,
      currency: order.currency,
      payway: order.payway,
      description: 'Chaos order',
      ...(order.twoStep ? { twoStep: true } : {}),
    },
    repeats,
  );
}

/** The payer presses Pay (or Decline) on the sandbox's page; false when the gateway has no such invoice waiting. */
export async function payerActs(
  world: World,
  shopOrderId: string,
  action: 'pay' | 'decline' = 'pay',
): Promise<boolean> {
  const inv = world.sandbox.state.findInvoiceByOrder(SHOP_ID, shopOrderId);
  if (inv === undefined || (inv.status !== 1 && inv.status !== 2)) return false;
  try {
    await world.control('POST', `/invoices/${inv.id}/${action}`);
    return true;
  } catch {
    return false;
  }
}

export function createRefund(
  world: World,
  tracked: Tracked,
  shopOrderId: string,
  shopRefundId: string,
  amount: string,
  repeats = 2,
): Promise<Answer> {
  tracked.refunds.add(shopRefundId);
  return withRepeats(
    world,
    'POST',
    `/api/v1/invoices/${encodeURIComponent(shopOrderId)}/refunds`,
    { shopRefundId, amount },
    repeats,
  );
}

export interface PayoutOrder {
  shopPaymentId: string;
  amount: string;
  payway: string;
}

export function payoutOrder(kind = 'success'): PayoutOrder {
  return {
    shopPaymentId: uniqueId('pay'),
    amount: `${100 + Math.floor(Math.random() * 200)}.${String(Math.floor(Math.random() * 100)).padStart(2, '0')}`,
    payway: payoutPayway(kind),
  };
}

export function createPayout(
  world: World,
  tracked: Tracked,
  order: PayoutOrder,
  repeats = 2,
): Promise<Answer> {
  tracked.payouts.add(order.shopPaymentId);
  return withRepeats(
    world,
    'POST',
    '/api/v1/payouts',
    {
      shopPaymentId: order.shopPaymentId,
      amount: order.amount,
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: order.payway,
      account: PAYOUT_ACCOUNT,
    },
    repeats,
  );
}

/** Invoices paid (succeeded) in the service, for refunds. */
export async function paidInvoices(
  world: World,
  count: number,
): Promise<Array<{ shopOrderId: string; amount: string }>> {
  const tracked = {
    invoices: new Set<string>(),
    refunds: new Set<string>(),
    payouts: new Set<string>(),
  };
  const orders = Array.from({ length: count }, () => invoiceOrder('success'));
  for (const o of orders) await createInvoice(world, tracked, o);
  const ids = orders.map((o) => o.shopOrderId);
  const end = Date.now() + 60_000;
  for (;;) {
    const rows = await world.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM invoices WHERE shop_order_id = ANY($1) AND status = 'succeeded'`,
      [ids],
    );
    if (rows[0].n === ids.length) break;
    if (Date.now() > end) throw new Error('the setup invoices were not paid within 60 s');
    await sleep(200);
  }
  return orders.map((o) => ({ shopOrderId: o.shopOrderId, amount: o.amount }));
}
