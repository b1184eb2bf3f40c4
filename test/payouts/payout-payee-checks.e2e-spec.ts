import { Client } from 'pg';
import { admin, ADMIN_KEY, auth, startTestApp, TestContext } from '../support/app';
import { PAYOUT } from '../support/payways';
import { ADMIN_KEY_2, admin2 } from '../support/payouts';
import { hidden, signIn } from '../console/console-session';

/**
 * Approval sees the payee: `GET /admin/payouts/{id}/approval` asks the gateway fresh for
 * check_account and the fee withdraw/try quotes (with the times asked) and sends nothing; an
 * approval of an account the gateway says cannot be credited needs a note (422
 * payee-check-failed, nothing approved, nothing sent); each approval keeps what it was shown.
 */
const CARD = '4111111111111111';
/** The sandbox's check_account says no to an account ending in 0000 (withdraw/create takes it). */
const NO_SUCH_CARD = '4276380012340000';
const ENV = {
  PAYOUT_POLL_INTERVAL_S: '0.2',
  PAYOUT_POLL_MAX_S: '30',
  ADMIN_API_KEYS: `${ADMIN_KEY},${ADMIN_KEY_2}`,
  PAYOUT_APPROVAL_THRESHOLD: '643:5000.00',
  PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:20000',
};

let ctx: TestContext;
let db: Client;
let seq = 0;
const newId = (): string => `pck-${Date.now()}-${++seq}`;

const callsTo = (path: string, id?: string): number =>
  ctx.sandbox.state.requests.filter(
    (r) =>
      r.path === path &&
      (id === undefined || (r.body as Record<string, unknown>).shop_payment_id === id),
  ).length;
const creates = (id: string): number => callsTo('withdraw/create', id);

async function create(id: string, amount: string, account = CARD): Promise<void> {
  const res = await ctx.http.post('/api/v1/payouts').set(auth()).send({
    shopPaymentId: id,
    amount,
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway: PAYOUT.card,
    account,
  });
  expect(res.status).toBe(202);
  expect(res.body.status).toBe('awaiting_approval');
}

async function refusePayee(account: string, refused = true): Promise<void> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/payees/refuse`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ account, refused }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { data: { account: string; refused: boolean } };
  expect(body.data.refused).toBe(refused);
  expect(JSON.stringify(body)).not.toContain(account.replace(/[\s-]/g, ''));
}

async function statusOf(id: string): Promise<string> {
  return (await ctx.http.get(`/api/v1/payouts/${id}`).set(auth()).expect(200)).body.status as string;
}

async function approvalRows(id: string): Promise<Array<{ key_id: string; note: string | null; payee_check: Record<string, unknown> | null; fee_quote: Record<string, unknown> | null }>> {
  const r = await db.query(
    `SELECT a.key_id, a.note, a.payee_check, a.fee_quote FROM payout_approvals a JOIN payouts p ON p.id = a.payout_id
      WHERE p.shop_payment_id = $1 ORDER BY a.created_at`,
    [id],
  );
  return r.rows as never;
}

beforeAll(async () => {
  ctx = await startTestApp({ env: ENV });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

describe('GET /admin/payouts/{id}/approval', () => {
  it('asks check_account and withdraw/try now, answers both with the times asked, and sends nothing', async () => {
    const id = newId();
    await create(id, '6000.00');
    const checksBefore = callsTo('check_account');
    const quotesBefore = callsTo('withdraw/try');
    const before = Date.now();
    const res = await ctx.http.get(`/api/v1/admin/payouts/${id}/approval`).set(admin()).expect(200);
    const after = Date.now();
    expect(res.body.payout).toMatchObject({ shopPaymentId: id, status: 'awaiting_approval' });
    expect(res.body.check).toMatchObject({ result: 'ok', canBeCredited: true });
    expect(res.body.check.accountInfo).toMatchObject({ holder: 'SANDBOX PAYEE' });
    expect(res.body.quote).toMatchObject({ result: 'ok', shopCurrency: 643, psCurrency: 643 });
    // The fee is the write-off less what the payee receives, exactly.
    expect(res.body.quote.payeeReceive).toMatch(/^\d+\.\d{2}$/);
    const { shopWriteOff, payeeReceive, fee } = res.body.quote as Record<string, string>;
    const cents = (t: string): bigint => BigInt(t.replace('.', ''));
    expect(cents(shopWriteOff) - cents(payeeReceive)).toBe(cents(fee));
    expect(res.body.noteRequired).toBe(false);
    expect(res.body.decisions).toEqual([]);
    for (const at of [res.body.check.checkedAt, res.body.quote.quotedAt] as string[]) {
      const t = Date.parse(at);
      expect(t).toBeGreaterThanOrEqual(before - 5);
      expect(t).toBeLessThanOrEqual(after + 5);
    }
    // Fresh each time: asked again on the next view.
    await ctx.http.get(`/api/v1/admin/payouts/${id}/approval`).set(admin()).expect(200);
    expect(callsTo('check_account')).toBe(checksBefore + 2);
    expect(callsTo('withdraw/try')).toBe(quotesBefore + 2);
    // Neither the check nor the quote sends it.
    expect(creates(id)).toBe(0);
    expect(await statusOf(id)).toBe('awaiting_approval');
    // The raw account is never in the answer (it is sealed on the row).
    expect(JSON.stringify(res.body)).not.toContain(CARD);
  });

  it('needs the admin key, however the path is spelled; an unknown payout is 404', async () => {
    const id = newId();
    await create(id, '6000.00');
    const checksBefore = callsTo('check_account');
    await ctx.http.get(`/api/v1/admin/payouts/${id}/approval`).expect(401);
    for (const path of [
      `/api/v1/admin/payouts/${id}/approval`,
      `/api/v1/ADMIN/payouts/${id}/approval`,
      `/api/v1/admin/payouts/${id}/approval/`,
      `/api/v1/admin//payouts/${id}/%61pproval`,
    ]) {
      const res = await ctx.http.get(path).set(auth());
      expect([403, 404]).toContain(res.status);
    }
    expect(callsTo('check_account')).toBe(checksBefore);
    await ctx.http.get(`/api/v1/admin/payouts/no-such-payout/approval`).set(admin()).expect(404);
  });

  it('a payout no longer awaiting approval asks the gateway nothing and shows what its approver was shown', async () => {
    const id = newId();
    await create(id, '6000.00');
    await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin()).send({}).expect(200);
    const checksBefore = callsTo('check_account');
    const res = await ctx.http.get(`/api/v1/admin/payouts/${id}/approval`).set(admin()).expect(200);
    expect(res.body.check).toBeNull();
    expect(res.body.quote).toBeNull();
    expect(res.body.decisions).toHaveLength(1);
    expect(res.body.decisions[0]).toMatchObject({ decision: 'approve', check: { result: 'ok' }, quote: { result: 'ok' } });
    expect(callsTo('check_account')).toBe(checksBefore);
  });

  it('a check the gateway cannot answer is shown as unavailable, with a time, and is no refusal', async () => {
    const id = newId();
    await create(id, '6000.00');
    const res0 = await fetch(`${ctx.sandbox.origin}/sandbox/faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ path: 'check_account', fault: 'http500', times: 1 }),
    });
    expect(res0.status).toBe(200);
    const res = await ctx.http.get(`/api/v1/admin/payouts/${id}/approval`).set(admin()).expect(200);
    expect(res.body.check).toMatchObject({ result: 'unavailable', canBeCredited: null });
    expect(typeof res.body.check.checkedAt).toBe('string');
    expect(res.body.noteRequired).toBe(false);
    expect(creates(id)).toBe(0);
  });
});

describe('approving an account the gateway says cannot be credited', () => {
  it('without a note: 422 payee-check-failed naming note, nothing approved, nothing sent; with a note: approved, sent, the note audited', async () => {
    const id = newId();
    await create(id, '6000.00', NO_SUCH_CARD);
    const view = await ctx.http.get(`/api/v1/admin/payouts/${id}/approval`).set(admin()).expect(200);
    expect(view.body.check).toMatchObject({ result: 'refused', canBeCredited: false, accountInfo: null });
    expect(view.body.noteRequired).toBe(true);
    for (const body of [{}, { note: '' }, { note: '   ' }]) {
      const res = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin()).send(body);
      expect(res.status).toBe(422);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.body.type).toMatch(/\/payee-check-failed$/);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'note' })]);
    }
    // The console's form refuses it the same way.
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    const page = await ctx.http.get(`/admin/ui/payouts/${id}`).set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain('cannot be credited');
    expect(page.text).toMatch(/<input id="approve-note" name="note" maxlength="500" required>/);
    const form = await ctx.http
      .post(`/admin/ui/approvals/${id}/approve`)
      .set('Cookie', jar.header())
      .type('form')
      .send({ _csrf: hidden(page.text, '_csrf') || csrf, from: 'page' });
    expect(form.status).toBe(422);
    expect(await statusOf(id)).toBe('awaiting_approval');
    expect(await approvalRows(id)).toEqual([]);
    expect(creates(id)).toBe(0);

    const ok = await ctx.http
      .post(`/api/v1/admin/payouts/${id}/approve`)
      .set(admin())
      .send({ note: 'payee confirmed the card by phone' })
      .expect(200);
    expect(ok.body.status).not.toBe('awaiting_approval');
    expect(creates(id)).toBe(1);
    const rows = await approvalRows(id);
    expect(rows).toHaveLength(1);
    expect(rows[0].note).toBe('payee confirmed the card by phone');
    expect(rows[0].payee_check).toMatchObject({ result: 'refused', canBeCredited: false });
    expect(rows[0].fee_quote).toMatchObject({ result: 'ok' });
    expect(JSON.stringify(rows)).not.toContain(NO_SUCH_CARD);
    const audited = await db.query(
      `SELECT details FROM events WHERE entity_type = 'payout' AND entity_id = $1 AND type = 'payout.approved'`,
      [id],
    );
    expect(audited.rows[0].details).toMatchObject({ note: 'payee confirmed the card by phone' });
  });

  it('a payee the sandbox was told to refuse (another spelling of the account) needs the note too; taken again, it does not', async () => {
    const id = newId();
    const account = '4000000000000002';
    await create(id, '6000.00', account);
    await refusePayee('4000 0000 0000 0002');
    const refused = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin()).send({});
    expect(refused.status).toBe(422);
    expect(creates(id)).toBe(0);
    await refusePayee(account, false);
    await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin()).send({}).expect(200);
    expect(creates(id)).toBe(1);
  });

  it('concurrent approvals without a note of a refused payee: every one refused, nothing recorded, nothing sent', async () => {
    const id = newId();
    await create(id, '25000.00', NO_SUCH_CARD);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(i % 2 === 0 ? admin() : admin2()).send({}),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([422, 422, 422, 422, 422, 422]);
    expect(await approvalRows(id)).toEqual([]);
    expect(creates(id)).toBe(0);
  });
});

describe('dual approval: each approver keeps what it was shown', () => {
  it('the first approver saw an account that can be credited, the second one refused: both kept, in the admin view and on the console page', async () => {
    const id = newId();
    const account = '4000000000000010';
    await create(id, '25000.00', account);
    const first = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin()).send({}).expect(200);
    expect(first.body.status).toBe('awaiting_approval');
    // Between the two approvals the gateway comes to refuse the payee.
    await refusePayee(account);
    const view = await ctx.http.get(`/api/v1/admin/payouts/${id}/approval`).set(admin2()).expect(200);
    expect(view.body.noteRequired).toBe(true);
    expect(view.body.approvedBy).toHaveLength(1);
    const bare = await ctx.http.post(`/api/v1/admin/payouts/${id}/approve`).set(admin2()).send({});
    expect(bare.status).toBe(422);
    expect(creates(id)).toBe(0);
    await ctx.http
      .post(`/api/v1/admin/payouts/${id}/approve`)
      .set(admin2())
      .send({ note: 'second approver: payee changed bank, confirmed' })
      .expect(200);
    expect(creates(id)).toBe(1);

    const after = await ctx.http.get(`/api/v1/admin/payouts/${id}/approval`).set(admin()).expect(200);
    const decisions = after.body.decisions as Array<Record<string, { result: string } | string | null>>;
    expect(decisions).toHaveLength(2);
    expect(decisions[0]).toMatchObject({ decision: 'approve', note: null, check: { result: 'ok' }, quote: { result: 'ok' } });
    expect(decisions[1]).toMatchObject({
      decision: 'approve',
      note: 'second approver: payee changed bank, confirmed',
      check: { result: 'refused' },
      quote: { result: 'ok' },
    });
    expect(decisions[0].keyId).not.toBe(decisions[1].keyId);

    const { jar } = await signIn(ctx, ADMIN_KEY);
    const page = await ctx.http.get(`/admin/ui/payouts/${id}`).set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain('Approval decisions');
    expect(page.text).toContain('The gateway says the account can be credited');
    expect(page.text).toContain('The gateway says the account cannot be credited');
    expect(page.text).toContain('second approver: payee changed bank, confirmed');
    expect(page.text).not.toContain(account);
    await refusePayee(account, false);
  });
});
