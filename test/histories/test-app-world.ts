import { ADMIN_KEY, PAYOUT_SHOP_ID, SHOP_ID, SHOP_KEY, type TestContext } from '../support/app';
import type { Answer, InvariantWorld } from './invariants';

/**
 * The invariants' view of a suite's `startTestApp` world (test/support/app.ts), so an e2e test
 * can end with the same checks the history search makes:
 *
 *   const report = await checkInvariants(invariantWorldOf(ctx), {invoices, refunds, payouts}, {settled: true});
 *   expect(report.violations).toEqual([]);
 */
export function invariantWorldOf(ctx: TestContext): InvariantWorld {
  const call =
    (key: string) =>
    async (method: string, path: string, body?: unknown): Promise<Answer> => {
      const res = await fetch(`${ctx.url}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      try {
        return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
      } catch {
        return { status: res.status, body: { text } };
      }
    };
  return {
    admin: call(ADMIN_KEY),
    api: call(SHOP_KEY),
    sandbox: ctx.sandbox,
    paymentShopId: SHOP_ID,
    agentShopId: PAYOUT_SHOP_ID,
  };
}
