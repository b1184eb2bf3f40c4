import { Client } from 'pg';
import { admin, ADMIN_KEY, auth, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';
import { WebhookReceiver } from '../support/webhook-receiver';
import { hidden, signIn } from './console-session';

/**
 * Deliveries to an address SHOP_WEBHOOK_URL no longer names: the Deliveries page says so and an
 * operator drops them in bulk (a ticked confirmation, CSRF): dead, never sent again, audited
 * with the operator's key; deliveries to the configured address (however its query is
 * written), delivered ones and one being sent right now are left alone.
 */
let ctx: TestContext;
let db: Client;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  // Nothing is acknowledged: the configured address's deliveries stay owed too.
  receiver.respond = () => 500;
  ctx = await startTestApp({
    env: {
      SHOP_WEBHOOK_URL: receiver.url,
      SHOP_WEBHOOK_SECRET: `whsec_${Buffer.alloc(24, 5).toString('base64')}`,
    },
  });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
  await receiver?.close();
});

const stateOf = async (url: string): Promise<Array<{ state: string; last_error: string | null }>> =>
  (await db.query(`SELECT state, last_error FROM webhook_deliveries WHERE url = $1 ORDER BY id`, [url])).rows as never;

it('drops every delivery still owed to an unconfigured address, audited; leaves the rest', async () => {
  await ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({ shopOrderId: `drop-${Date.now()}`, amount: '10.00', currency: 643, payway: PAYMENT.cardSuccess })
    .expect(201);
  const [ev] = (await db.query(`SELECT id, entity_type, entity_id, sequence FROM events WHERE type IS NOT NULL ORDER BY id LIMIT 1`)).rows;
  const OLD = 'http://old-shop.example/hooks';
  const OLD_WITH_SECRETS = 'http://user:s3cret@old-two.example/h?token=abc';
  const SAME_AS_CONFIGURED = `${receiver.url}?v=2`;
  const LEASED = 'http://old-three.example/hooks';
  const insert = (url: string, state: string, leased = false) =>
    db.query(
      `INSERT INTO webhook_deliveries (event_id, url, entity_type, entity_id, sequence, state, lease_until, lease_owner, delivered_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [ev.id, url, ev.entity_type, ev.entity_id, ev.sequence, state, leased ? new Date(Date.now() + 3_600_000) : null, leased ? 'another-instance' : null, state === 'delivered' ? new Date() : null],
    );
  await insert(OLD, 'pending');
  await insert(OLD_WITH_SECRETS, 'failed');
  await insert(SAME_AS_CONFIGURED, 'pending');
  await insert(LEASED, 'pending', true);
  await insert('http://delivered-once.example/hooks', 'delivered');

  const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
  const page = await ctx.http.get('/admin/ui/deliveries').set('Cookie', jar.header()).expect(200);
  expect(page.text).toContain('id="unconfigured-deliveries"');
  expect(page.text).toContain('id="drop-unconfigured"');
  expect(page.text).not.toContain('s3cret');
  expect(hidden(page.text, '_csrf')).toBe(csrf);

  // Without the token, or without the ticked box: refused, nothing changes.
  await ctx.http.post('/admin/ui/deliveries/drop-unconfigured').set('Cookie', jar.header()).type('form').send({ confirm: 'yes' }).expect(403);
  await ctx.http.post('/admin/ui/deliveries/drop-unconfigured').set('Cookie', jar.header()).type('form').send({ _csrf: csrf }).expect(400);
  expect((await stateOf(OLD))[0].state).toBe('pending');
  // Not without a console session (a shop key is no session).
  await ctx.http.post('/admin/ui/deliveries/drop-unconfigured').set(auth()).type('form').send({ _csrf: csrf, confirm: 'yes' }).then((r) => expect([302, 303, 401, 403]).toContain(r.status));
  expect((await stateOf(OLD))[0].state).toBe('pending');

  const done = await ctx.http
    .post('/admin/ui/deliveries/drop-unconfigured')
    .set('Cookie', jar.header())
    .type('form')
    .send({ _csrf: csrf, confirm: 'yes' })
    .expect(303);
  const after = await ctx.http.get(done.headers.location as string).set('Cookie', jar.header()).expect(200);
  expect(after.text).toContain('2 deliveries dropped');
  expect(after.text).not.toContain('s3cret');
  // The one being sent right now is still owed, and still said so.
  expect(after.text).toMatch(/id="unconfigured-deliveries">1 delivery waits/);

  for (const url of [OLD, OLD_WITH_SECRETS]) {
    const rows = await stateOf(url);
    expect(rows).toEqual([{ state: 'dead', last_error: expect.stringContaining('no longer configured') }]);
  }
  expect((await stateOf(SAME_AS_CONFIGURED))[0].state).toBe('pending');
  expect((await stateOf(LEASED))[0].state).toBe('pending');
  expect((await stateOf('http://delivered-once.example/hooks'))[0].state).toBe('delivered');
  expect((await stateOf(receiver.url)).every((r) => r.state !== 'dead')).toBe(true);

  // Audited per address, with the operator's key id, never the address's secrets.
  const audit = await db.query(
    `SELECT entity_id, key_id, details FROM events WHERE entity_type = 'webhook_delivery' ORDER BY entity_id`,
  );
  expect(audit.rows).toEqual([
    { entity_id: 'http://old-shop.example/hooks', key_id: expect.stringMatching(/^[0-9a-f]{12}$/), details: expect.objectContaining({ action: 'drop', deliveries: 1 }) },
    { entity_id: 'http://old-two.example/h', key_id: expect.stringMatching(/^[0-9a-f]{12}$/), details: expect.objectContaining({ action: 'drop', deliveries: 1 }) },
  ]);
  // The admin audit view shows it (its answer is held to the document).
  const view = await ctx.http.get('/api/v1/admin/events?entityType=webhook_delivery').set(admin()).expect(200);
  expect(JSON.stringify(view.body)).toContain('old-shop.example');

  // Again: nothing left to drop.
  const again = await ctx.http
    .post('/admin/ui/deliveries/drop-unconfigured')
    .set('Cookie', jar.header())
    .type('form')
    .send({ _csrf: csrf, confirm: 'yes' })
    .expect(303);
  const page2 = await ctx.http.get(again.headers.location as string).set('Cookie', jar.header()).expect(200);
  expect(page2.text).toContain('Nothing dropped');
});
