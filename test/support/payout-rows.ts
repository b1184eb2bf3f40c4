import { randomBytes, randomUUID } from 'node:crypto';
import { KeyRing, parseKeyRing } from '../../src/common/key-ring';
import { DATA_KEYS, SHOP_ID } from './app';

type Query = (sql: string, params?: unknown[]) => Promise<unknown>;

/**
 * Inserts a `processing` payout row directly (its events are then written by the test), with its
 * account sealed as the service seals it: a service starting on the database re-seals or opens
 * every account. Returns the shopPaymentId and the row id.
 */
export async function insertPayoutRow(
  query: Query,
): Promise<{ shopPaymentId: string; id: string }> {
  const id = randomUUID();
  const shopPaymentId = `po-${randomUUID()}`;
  const sealed = new KeyRing(parseKeyRing(DATA_KEYS)).seal(
    JSON.stringify({ account: '4111111111111111' }),
    { table: 'payouts', column: 'account_sealed', rowId: id },
  );
  await query(
    `INSERT INTO payouts (id, shop_id, shop_payment_id, request_fingerprint, status, amount, amount_type,
       shop_currency, payway, account_masked, account_sealed, poll_deadline)
     VALUES ($1, $2, $3, $4, 'processing', '10', 'ps_amount', 643, 'card_rub', '411111******1111', $5,
       now() + interval '1 hour')`,
    [id, SHOP_ID, shopPaymentId, randomBytes(32).toString('hex'), sealed],
  );
  return { shopPaymentId, id };
}

/** withdraw/status calls per withdraw id, with their times, from a sandbox's request log. */
export function statusCallsOf(
  requests: ReadonlyArray<{ path: string; body: unknown; time: string }>,
): Map<string, number[]> {
  const calls = new Map<string, number[]>();
  for (const r of requests) {
    if (r.path !== 'withdraw/status') continue;
    const id = String((r.body as Record<string, unknown>).withdraw_id);
    calls.set(id, [...(calls.get(id) ?? []), Date.parse(r.time)]);
  }
  return calls;
}
