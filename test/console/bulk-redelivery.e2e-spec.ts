import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ADMIN_KEY, admin, auth, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';
import { eventually, WebhookReceiver } from '../support/webhook-receiver';
import { WebhookDispatcher } from '../../src/events/webhook-dispatcher';
import { signIn } from './console-session';

const WHSEC = `whsec_${Buffer.from('bulk-redelivery-secret-0123456789').toString('base64')}`;

/**
 * Bulk redelivery: a receiver that was down gets every dead delivery once an operator sends them
 * again (API or console button); a delivery held back by an earlier event of its object says so.
 */
describe('webhook deliveries: bulk redelivery and the reason a delivery waits', () => {
  let ctx: TestContext;
  let db: Client;
  const receiver = new WebhookReceiver();
  let up = false;

  beforeAll(async () => {
    await receiver.start();
    receiver.respond = () => (up ? 200 : 503);
    ctx = await startTestApp({
      env: {
        SHOP_WEBHOOK_URL: receiver.url,
        SHOP_WEBHOOK_SECRET: WHSEC,
        // The first failure ends the retry window: every failed delivery is dead at once.
        SHOP_WEBHOOK_RETRY_BASE_S: '5',
        SHOP_WEBHOOK_RETRY_FOR_S: '1',
      },
    });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  }, 120000);

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
    await receiver.close();
  });

  const tick = (): Promise<number> => ctx.service.app.get(WebhookDispatcher).runOnce();

  async function invoice(): Promise<string> {
    const shopOrderId = `bulk-${randomUUID()}`;
    await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId, amount: '10.00', currency: 643, payway: PAYMENT.cardSuccess })
      .expect(201);
    // The paid answer is learnt: a second event of the same object.
    await eventually(async () => {
      const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
      expect(got.body.status).toBe('succeeded');
    });
    return shopOrderId;
  }

  async function states(objectId: string): Promise<string[]> {
    const r = await db.query(
      `SELECT state FROM webhook_deliveries WHERE entity_id = $1 ORDER BY sequence`,
      [objectId],
    );
    return r.rows.map((x: { state: string }) => x.state);
  }

  /** Drives the dispatcher until every delivery of these objects is dead (the receiver is down). */
  async function allDead(ids: string[]): Promise<number> {
    let n = 0;
    await eventually(async () => {
      await tick();
      n = 0;
      for (const id of ids) {
        const s = await states(id);
        expect(s.length).toBeGreaterThanOrEqual(2);
        expect(s.every((x) => x === 'dead')).toBe(true);
        n += s.length;
      }
    }, 30000, 50);
    return n;
  }

  it('refuses bad filters naming the field, and a shop key; changes nothing', async () => {
    for (const [body, name] of [
      [{ state: 'delivered' }, 'state'],
      [{}, 'state'],
      [{ state: 'dead', type: 'invoice.nope' }, 'type'],
      [{ state: 'dead', objectType: 'invoices' }, 'objectType'],
      [{ state: 'dead', since: 'yesterday' }, 'since'],
      [{ state: 'dead', since: '2026-01-01T00:00:00Z', extra: 1 }, 'extra'],
    ] as Array<[Record<string, unknown>, string]>) {
      const res = await ctx.http
        .post('/api/v1/admin/webhook-deliveries/redeliver')
        .set(admin())
        .send(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(JSON.stringify(res.body)).toContain(name);
    }
    await ctx.http
      .post('/api/v1/admin/webhook-deliveries/redeliver')
      .set(auth())
      .send({ state: 'dead' })
      .expect(403);
  });

  it('a receiver that was down gets every dead delivery after a bulk redelivery, in order per object; a later delivery says what it waits for', async () => {
    up = false;
    const ids = [await invoice(), await invoice()];
    const dead = await allDead(ids);
    // A filter matching none of them: nothing changes.
    const none = await ctx.http
      .post('/api/v1/admin/webhook-deliveries/redeliver')
      .set(admin())
      .send({ state: 'dead', objectType: 'payout' })
      .expect(200);
    expect(none.body).toEqual({ redelivered: 0 });
    const future = await ctx.http
      .post('/api/v1/admin/webhook-deliveries/redeliver')
      .set(admin())
      .send({ state: 'dead', since: new Date(Date.now() + 3_600_000).toISOString() })
      .expect(200);
    expect(future.body).toEqual({ redelivered: 0 });
    expect(await states(ids[0])).toEqual(expect.arrayContaining(['dead']));

    const res = await ctx.http
      .post('/api/v1/admin/webhook-deliveries/redeliver')
      .set(admin())
      .send({ state: 'dead', objectType: 'invoice', since: new Date(Date.now() - 3_600_000).toISOString() })
      .expect(200);
    expect(res.body.redelivered).toBeGreaterThanOrEqual(dead);

    // Before the dispatcher runs: each object's later delivery waits for its first, and says so.
    const list = await ctx.http
      .get('/api/v1/admin/webhook-deliveries?state=pending&limit=100')
      .set(admin())
      .expect(200);
    const mine = (list.body.items as Array<{ objectId: string; sequence: number; waitingFor: unknown }>)
      .filter((d) => d.objectId === ids[0])
      .sort((a, b) => a.sequence - b.sequence);
    expect(mine[0].waitingFor).toBeNull();
    expect(mine[1].waitingFor).toEqual({ eventId: expect.any(String), sequence: mine[0].sequence });
    const { jar } = await signIn(ctx, ADMIN_KEY);
    const page = await ctx.http
      .get(`/admin/ui/invoices/${encodeURIComponent(ids[0])}`)
      .set('Cookie', jar.header())
      .expect(200);
    expect(page.text).toContain(`waiting for event ${String((mine[1].waitingFor as { eventId: string }).eventId)}`);
    const deliveries = await ctx.http.get('/admin/ui/deliveries?state=pending').set('Cookie', jar.header()).expect(200);
    expect(deliveries.text).toContain('waiting for event');

    up = true;
    const before = receiver.received.length;
    await eventually(async () => {
      await tick();
      for (const id of ids) expect(await states(id)).toEqual((await states(id)).map(() => 'delivered'));
    }, 30000, 50);
    const got = receiver.received.slice(before).filter((r) => ids.includes(r.event.objectId));
    expect(got.length).toBe(dead);
    for (const id of ids) {
      const seqs = got.filter((r) => r.event.objectId === id).map((r) => r.event.sequence);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
  });

  it('leaves a delivery being sent right now (a live lease) to finish, and repeats count nothing twice', async () => {
    up = false;
    const ids = [await invoice()];
    const dead = await allDead(ids);
    const leased = await db.query(
      `UPDATE webhook_deliveries SET lease_until = now() + interval '1 minute', lease_owner = 'other-instance'
        WHERE id = (SELECT min(id) FROM webhook_deliveries WHERE entity_id = $1) RETURNING id`,
      [ids[0]],
    );
    const send = () =>
      ctx.http
        .post('/api/v1/admin/webhook-deliveries/redeliver')
        .set(admin())
        .send({ state: 'dead', objectType: 'invoice' });
    // Two at once: each row is queued by one of them only.
    const [a, b] = await Promise.all([send(), send()]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.redelivered + b.body.redelivered).toBe(dead - 1);
    const row = await db.query(`SELECT state, lease_owner FROM webhook_deliveries WHERE id = $1`, [
      leased.rows[0].id,
    ]);
    expect(row.rows[0]).toEqual({ state: 'dead', lease_owner: 'other-instance' });
    const again = await send().expect(200);
    expect(again.body).toEqual({ redelivered: 0 });
    await db.query(`UPDATE webhook_deliveries SET lease_until = NULL, lease_owner = NULL WHERE id = $1`, [
      leased.rows[0].id,
    ]);
    up = true;
    await send().expect(200);
    await eventually(async () => {
      await tick();
      expect((await states(ids[0])).every((s) => s === 'delivered')).toBe(true);
    }, 30000, 50);
  });

  it("the console's button sends dead deliveries again; without its token it changes nothing", async () => {
    up = false;
    const ids = [await invoice()];
    const dead = await allDead(ids);
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    const page = await ctx.http.get('/admin/ui/deliveries?state=dead').set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain('action="/admin/ui/deliveries/redeliver"');
    await ctx.http
      .post('/admin/ui/deliveries/redeliver')
      .set('Cookie', jar.header())
      .type('form')
      .send({ state: 'dead' })
      .expect(403);
    await ctx.http
      .post('/admin/ui/deliveries/redeliver')
      .set('Cookie', jar.header())
      .type('form')
      .send({ _csrf: csrf, state: 'delivered' })
      .expect(400);
    expect((await states(ids[0])).every((s) => s === 'dead')).toBe(true);
    const res = await ctx.http
      .post('/admin/ui/deliveries/redeliver')
      .set('Cookie', jar.header())
      .type('form')
      .send({ _csrf: csrf, state: 'dead', objectType: 'invoice', type: '' })
      .expect(303);
    expect(res.headers.location).toBe('/admin/ui/deliveries');
    const shown = await ctx.http.get('/admin/ui/deliveries').set('Cookie', jar.header()).expect(200);
    expect(shown.text).toMatch(/class="flash ok"[^>]*>\d+ dead deliver(y|ies) queued again\./);
    up = true;
    await eventually(async () => {
      await tick();
      expect((await states(ids[0])).every((s) => s === 'delivered')).toBe(true);
    }, 30000, 50);
    expect(receiver.received.filter((r) => r.event.objectId === ids[0] && r.at > 0).length).toBeGreaterThanOrEqual(dead);
  });
});
