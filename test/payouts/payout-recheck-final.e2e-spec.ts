import { Client } from 'pg';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { admin, auth, PAYOUT_SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYOUT } from '../support/payways';

/**
 * Recheck of a final payout asks the gateway, flagged or not, and flags what contradicts it, as
 * the same recheck of an invoice or a refund does: another status there (final or not), a record
 * that is not this payout's (read through the ownership rule every path uses), or no record at
 * all of a payout that was paid. The money state is kept; a record that agrees clears the flag.
 */
let ctx: TestContext;
let db: Client;
let seq = 0;
const newId = (p: string): string => `${p}-${Date.now()}-${++seq}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const CARD = '4111111111111111';

beforeAll(async () => {
  ctx = await startTestApp({ env: { PAYOUT_POLL_INTERVAL_S: '0.2', BALANCE_CACHE_S: '0' } });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

async function payout(id: string, payway: string = PAYOUT.card): Promise<void> {
  const res = await ctx.http.post('/api/v1/payouts').set(auth()).send({
    shopPaymentId: id,
    amount: '150.00',
    amountType: 'shop_amount',
    shopCurrency: 643,
    payway,
    account: CARD,
  });
  expect(res.status).toBe(202);
}

async function view(id: string): Promise<Record<string, unknown>> {
  return (await ctx.http.get(`/api/v1/payouts/${id}`).set(auth()).expect(200)).body as Record<
    string,
    unknown
  >;
}

async function final(id: string): Promise<Record<string, unknown>> {
  const poller = ctx.service.app.get(PayoutPoller);
  const until = Date.now() + 10000;
  for (;;) {
    await poller.runOnce();
    const p = await view(id);
    if (['succeeded', 'failed', 'rejected'].includes(p.status as string) || Date.now() > until)
      return p;
    await sleep(100);
  }
}

async function recheck(id: string): Promise<Record<string, unknown>> {
  const res = await ctx.http.post(`/api/v1/admin/payouts/${id}/reconcile`).set(admin());
  expect(res.status).toBe(200);
  return res.body as Record<string, unknown>;
}

const atGateway = (id: string) => {
  const p = ctx.sandbox.state.findPayoutByShopPaymentId(PAYOUT_SHOP_ID, id);
  if (p === undefined) throw new Error(`no sandbox payout ${id}`);
  return p;
};

async function statusEvents(id: string): Promise<number> {
  const r = await db.query(
    `SELECT count(*)::int AS n FROM events WHERE entity_type = 'payout' AND entity_id = $1 AND from_status IS DISTINCT FROM to_status`,
    [id],
  );
  return (r.rows[0] as { n: number }).n;
}

async function entries(id: string): Promise<number> {
  const res = await ctx.http
    .get(`/api/v1/admin/ledger/entries?objectType=payout&objectId=${id}`)
    .set(admin())
    .expect(200);
  return (res.body.items as unknown[]).length;
}

describe('recheck of a succeeded payout', () => {
  it('the gateway now says 6: flagged as a contradiction, still succeeded, nothing posted or sent; once it says 5 again the recheck clears it', async () => {
    const id = newId('r6');
    await payout(id);
    expect((await final(id)).status).toBe('succeeded');
    const events = await statusEvents(id);
    const posted = await entries(id);
    // Unflagged and agreeing: nothing to say.
    expect(await recheck(id)).toMatchObject({ status: 'succeeded', needsAttention: false });

    atGateway(id).status = 6;
    const after = await recheck(id);
    expect(after).toMatchObject({ status: 'succeeded', needsAttention: true });
    expect(after.attentionReason).toMatch(/^contradiction: withdraw\/status says rejected/);
    expect(await statusEvents(id)).toBe(events);
    expect(await entries(id)).toBe(posted);
    const queue = await ctx.http.get('/api/v1/admin/attention').set(admin()).expect(200);
    expect(JSON.stringify(queue.body)).toContain(id);

    atGateway(id).status = 5;
    expect(await recheck(id)).toMatchObject({ status: 'succeeded', needsAttention: false });
  });

  it('the attention recheck ({action: "recheck"}) is the same recheck: 6 there flags it', async () => {
    const id = newId('rr');
    await payout(id);
    expect((await final(id)).status).toBe('succeeded');
    atGateway(id).status = 6;
    const res = await ctx.http
      .post(`/api/v1/admin/payouts/${id}/resolve`)
      .set(admin())
      .send({ action: 'recheck' });
    expect(res.status).toBe(200);
    expect(await view(id)).toMatchObject({ status: 'succeeded', needsAttention: true });
  });

  it.each([
    [3, /says processing/],
    [8, /says failed/],
    [77, /says/],
  ])('the gateway now says %s: flagged, still succeeded', async (status, reason) => {
    const id = newId(`r${status}`);
    await payout(id);
    expect((await final(id)).status).toBe('succeeded');
    atGateway(id).status = status;
    const after = await recheck(id);
    expect(after).toMatchObject({ status: 'succeeded', needsAttention: true });
    expect(after.attentionReason).toMatch(/^contradiction: /);
    expect(after.attentionReason).toMatch(reason);
  });

  it("the withdraw id now names another payout's record: a mismatch (the ownership rule), never agreement", async () => {
    const mine = newId('own');
    const other = newId('oth');
    await payout(mine);
    await payout(other);
    expect((await final(mine)).status).toBe('succeeded');
    expect((await final(other)).status).toBe('succeeded');
    await db.query(
      `UPDATE payouts SET withdraw_id = (SELECT withdraw_id FROM payouts WHERE shop_payment_id = $2) WHERE shop_payment_id = $1`,
      [mine, other],
    );
    const after = await recheck(mine);
    expect(after).toMatchObject({ status: 'succeeded', needsAttention: true });
    expect(after.attentionReason).toMatch(/^mismatch: .*not ours: shop_payment_id/);
    // The other payout's record says 5, as this one is: still no agreement, still flagged.
    expect((await recheck(mine)).needsAttention).toBe(true);
  });

  it('the gateway has no record of it any more: flagged; a failed payout it never created is not', async () => {
    const id = newId('gone');
    await payout(id);
    expect((await final(id)).status).toBe('succeeded');
    ctx.sandbox.state.payouts.delete(atGateway(id).id);
    const after = await recheck(id);
    expect(after).toMatchObject({ status: 'succeeded', needsAttention: true });
    expect(after.attentionReason).toMatch(/^contradiction: withdraw\/status has no record/);

    const refused = newId('refused');
    await payout(refused, PAYOUT.cardForbidden);
    expect((await view(refused)).status).toBe('failed');
    expect(await recheck(refused)).toMatchObject({ status: 'failed', needsAttention: false });
  });
});
