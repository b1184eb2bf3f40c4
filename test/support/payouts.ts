import { Client } from 'pg';
import { startTestApp, type TestContext } from './app';
import { PAYOUT } from './payways';

/**
 * What the payout suites share: a second admin key, unique ids, a create's body, the calls the
 * sandbox received for a payout, its rows, and the app with a client on its database.
 */

/** A second admin key, for what two distinct keys must approve. */
export const ADMIN_KEY_2 = 'test-admin-key-second-0123456789';

export const bearer = (key: string): Record<string, string> => ({ Authorization: `Bearer ${key}` });
export const admin2 = (): Record<string, string> => bearer(ADMIN_KEY_2);

/** A test card the sandbox pays to. */
export const TEST_CARD = '4111111111111111';

let seq = 0;
/** An id no other request of the run has used. */
export const uniqueId = (prefix: string): string => `${prefix}-${Date.now()}-${++seq}`;

/**
 * A payout create's body: a `shop_amount` (its own write-off, so caps and thresholds count it to
 * the cent) to the test card by the card payway; `overrides` win.
 */
export function payoutBody(
  shopPaymentId: string,
  amount: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    shopPaymentId,
    amount,
    amountType: 'shop_amount',
    shopCurrency: 643,
    payway: PAYOUT.card,
    account: TEST_CARD,
    ...overrides,
  };
}

/** How many `path` calls the sandbox received (for this payout, when `shopPaymentId` is given). */
export function callsFor(ctx: TestContext, path: string, shopPaymentId?: string): number {
  return ctx.sandbox.state.requests.filter(
    (r) =>
      r.path === path &&
      (shopPaymentId === undefined ||
        (r.body as Record<string, unknown>).shop_payment_id === shopPaymentId),
  ).length;
}

/** How many rows the payouts table has for this id (0 or 1). */
export async function payoutRowCount(db: Client, shopPaymentId: string): Promise<number> {
  const r = await db.query(`SELECT count(*)::int AS n FROM payouts WHERE shop_payment_id = $1`, [
    shopPaymentId,
  ]);
  return (r.rows[0] as { n: number }).n;
}

/** The app started with `env`, and a client on its database (the caller ends both). */
export async function appWithDb(
  env: Record<string, string>,
): Promise<{ ctx: TestContext; db: Client }> {
  const ctx = await startTestApp({ env });
  const db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  return { ctx, db };
}
