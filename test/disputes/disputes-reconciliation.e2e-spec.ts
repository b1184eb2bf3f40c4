import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { admin, auth, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';
import { eventually } from '../support/webhook-receiver';

/**
 * A chargeback end to end against the books: the sandbox (the gateway's manager) takes a
 * chargeback off the payment shop's balance → reconciliation shows the difference, and says what
 * may explain it → the operator records the dispute and resolves it lost → the books post the
 * chargeback and reconciliation agrees again. One gateway shop, so the payment shop's balance is
 * the one reconciliation reads.
 */
describe('a chargeback reconciled (single shop, sandbox + PostgreSQL)', () => {
  let ctx: TestContext;
  let db: Client;

  beforeAll(async () => {
    ctx = await startTestApp({ shops: 'single' });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });


  async function reconcile(): Promise<{
    status: string;
    balances: Array<{ currency: number; differences: { available: string; frozen: string } }>;
    items: Array<{ kind: string; account?: string; currency: number | null; amount?: string }>;
  }> {
    const day = new Date().toISOString().slice(0, 10);
    const res = await ctx.http.post('/api/v1/admin/reconciliations').set(admin()).send({ date: day });
    expect(res.status).toBe(201);
    return res.body;
  }

  it('sandbox chargeback → a difference, explained → the dispute resolved lost → the books equal the gateway again', async () => {
    const shopOrderId = `order-${randomUUID()}`;
    expect(
      (
        await ctx.http
          .post('/api/v1/invoices')
          .set(auth())
          .send({ shopOrderId, amount: '100.00', currency: 643, payway: PAYMENT.cardSuccess })
      ).status,
    ).toBe(201);
    await eventually(async () => {
      const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      expect(got.body.status).toBe('succeeded');
    });
    const first = await reconcile();
    expect([first.status, first.items]).toEqual(['balanced', []]);

    // The gateway's manager takes a chargeback of 30.00 off the shop's balance.
    const cb = await fetch(`${ctx.sandbox.origin}/sandbox/invoices/${encodeURIComponent(shopOrderId)}/chargeback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '30.00' }),
    });
    expect(cb.status).toBe(200);
    const differs = await reconcile();
    expect(differs.status).toBe('variances');
    expect(differs.items).toEqual([
      expect.objectContaining({ kind: 'balance', account: 'agent_available', currency: 643, amount: '-30.00' }),
    ]);
    const flagged = async (): Promise<string | null> =>
      (
        (await db.query(`SELECT attention_reason FROM reconciliations ORDER BY finished_at DESC LIMIT 1`)).rows[0] as {
          attention_reason: string | null;
        }
      ).attention_reason;
    expect(await flagged()).toContain('booked once its dispute is recorded and resolved lost or accepted');

    // Recorded: open, the books do not move yet (the gateway may still give it back).
    const recorded = await ctx.http
      .post(`/api/v1/admin/invoices/${shopOrderId}/disputes`)
      .set(admin())
      .send({ amount: '30.00', reason: 'fraud', reportedAt: new Date().toISOString(), note: 'gateway manager' });
    expect(recorded.status).toBe(201);
    const open = await reconcile();
    expect(open.items).toEqual([expect.objectContaining({ kind: 'balance', amount: '-30.00' })]);
    expect(await flagged()).toContain('disputes open in 643: 30.00');

    // Lost: the chargeback is posted, and the books equal the gateway's again.
    const lost = await ctx.http
      .post(`/api/v1/admin/disputes/${recorded.body.id}/resolve`)
      .set(admin())
      .send({ outcome: 'lost', note: 'issuer ruled for the cardholder' });
    expect(lost.status).toBe(200);
    const agrees = await reconcile();
    expect([agrees.status, agrees.items]).toEqual(['balanced', []]);
    expect(agrees.balances.find((b) => b.currency === 643)!.differences).toEqual({ available: '0.00', frozen: '0.00' });
    const check = await ctx.http.get('/api/v1/admin/ledger/check').set(admin()).expect(200);
    expect(check.body.mismatches).toEqual([]);
    const balances = await ctx.http.get('/api/v1/admin/ledger/balances').set(admin()).expect(200);
    expect(balances.body.balances).toEqual(
      expect.arrayContaining([{ account: 'chargebacks', currency: 643, balance: '30.00' }]),
    );
  });
});
