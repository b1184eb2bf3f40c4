// Over 500 lines on purpose: one subject (sealed secrets across schema versions and key changes)
// with one sandbox and the legacy-sealing helpers its tests share.
import { spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { KeyRing, parseKeyRing } from '../../src/common/key-ring';
import { deriveKey, seal as sealLegacy } from '../../src/common/sealed';
import { dataSourceOptions } from '../../src/database/data-source';
import { signNotificationFields } from '../../src/gateway';
import { InitialSchema1795270554236 } from '../../src/database/migrations/1795270554236-InitialSchema';
import { PAYMENT_TOKEN_INDEX } from '../../src/invoices/payment-token';
import { openNotificationFields } from '../../src/notifications/notification-payload';
import { accountContext } from '../../src/payouts/account-seal';
import type { CreatePayoutDto } from '../../src/payouts/dto/payout-requests.dto';
import {
  canonicalPayoutRequest,
  legacyCanonicalPayoutRequest,
  PAYOUT_REQUEST_INDEX,
} from '../../src/payouts/payout-fingerprint';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import {
  ADMIN_KEY,
  auth,
  SECRET,
  SHOP_ID,
  SHOP_KEY,
  startTestApp,
  type TestContext,
  tokenOf,
} from '../support/app';
import { createTestDatabase } from '../support/database';
import { PAYMENT, PAYOUT } from '../support/payways';

/**
 * Secrets at rest across versions and keys: a database written by the previous version (clear
 * tokens, accounts sealed with the key derived from the gateway secret) is sealed at start-up;
 * a key rotation under load, then dropping the old key, leaves every open payout completing.
 */
const CARD = '4111111111111111';
const key = (fill: number): string => Buffer.alloc(32, fill).toString('base64');
const OLD = `old:${key(3)}`;
const NEW = `new:${key(4)}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let sandbox: SandboxHandle;

// The upgrade is from the one-shop versions, so this suite runs one gateway shop.
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, shopId: SHOP_ID, secretKey: SECRET, timeScale: 0.001 });
});

afterAll(async () => {
  await sandbox?.close();
});

async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

/** Every text and jsonb value of every table, as one string. */
async function dumpText(url: string): Promise<string> {
  const cols = await query<{ table_name: string; column_name: string }>(
    url,
    `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = 'public' AND data_type IN ('text', 'character varying', 'character', 'jsonb', 'json')`,
  );
  const parts: string[] = [];
  for (const c of cols) {
    const rows = await query<{ v: string | null }>(
      url,
      `SELECT "${c.column_name}"::text AS v FROM "${c.table_name}"`,
    );
    for (const r of rows) if (r.v !== null) parts.push(r.v);
  }
  return parts.join('\n');
}

async function pollUntilAllFinal(
  ctx: TestContext,
  ids: string[],
  maxMs = 30_000,
): Promise<string[]> {
  const poller = ctx.service.app.get(PayoutPoller);
  const until = Date.now() + maxMs;
  for (;;) {
    await poller.runOnce();
    const statuses = await Promise.all(
      ids.map(async (id) => {
        const res = await ctx.http.get(`/api/v1/payouts/${id}`).set(auth());
        return res.body.status as string;
      }),
    );
    if (statuses.every((s) => s === 'succeeded') || Date.now() > until) return statuses;
    await sleep(150);
  }
}

async function fault(body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${sandbox.origin}/sandbox/faults`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

/** A payment notification as the gateway sends it, carrying a recurrent token. */
function paymentNotification(shopOrderId: string, token: string): Record<string, string> {
  return {
    shop_id: String(SHOP_ID),
    shop_order_id: shopOrderId,
    shop_amount: '100.00',
    shop_refund: '0',
    shop_currency: '643',
    payment_id: '987654',
    client_price: '104.00',
    ps_currency: '643',
    payway: PAYMENT.card,
    ps_data: JSON.stringify({ account: '411111******1111', payment_token: token }),
    created: '2026-01-01T10:00:00+03:00',
    updated: '2026-01-01T10:05:00+03:00',
    status: 'success',
  };
}

function postNotification(ctx: TestContext, fields: Record<string, string>) {
  return ctx.http
    .post('/webhooks/gateway?type=invoice')
    .set('content-type', 'application/json')
    .send(JSON.stringify({ ...fields, sign: signNotificationFields(fields, SECRET) }));
}

/** An invoice row waiting for its payer, as the invoices module leaves it. */
async function insertInvoice(url: string, shopOrderId: string): Promise<void> {
  await query(
    url,
    `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token)
     VALUES ($1, $2, repeat('f', 64), 'awaiting_payer', '100.00', 643, $4, $3)`,
    [SHOP_ID, shopOrderId, `pay-token-${shopOrderId}`, PAYMENT.card],
  );
}

describe('from the previous schema, with data in it', () => {
  it('seals clear tokens and re-seals accounts of the derived key at start-up; the payout completes', async () => {
    const db = await createTestDatabase({ empty: true });
    let ctx: TestContext | undefined;
    try {
      // The previous version: its migrations, its way of writing rows.
      const old = new DataSource({
        ...dataSourceOptions(db.url),
        migrations: [InitialSchema1795270554236],
      });
      await old.initialize();
      await old.runMigrations();
      const legacyKey = deriveKey(SECRET, 'payout-account');
      const [payout] = (await old.query(
        `INSERT INTO payouts (shop_id, shop_payment_id, request_fingerprint, status, amount, amount_type, shop_currency,
           payway, account_masked, account_sealed, create_attempts, next_poll_at, poll_deadline)
         VALUES ($1, 'legacy-po-1', repeat('0', 64), 'unknown', '100', 'ps_amount', 643, $3,
           '411111******1111', $2, 1, now(), now() + interval '1 hour') RETURNING id`,
        [SHOP_ID, sealLegacy(JSON.stringify({ account: CARD }), legacyKey), PAYOUT.card],
      )) as Array<{ id: string }>;
      const [invoice] = (await old.query(
        `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, amount, currency, payway, pay_token,
           payment_token, payment_token_info)
         VALUES ($1, 'legacy-inv-1', repeat('0', 64), 'succeeded', '10.00', 643, $2, 'pay-token-legacy',
           'tok_legacy_1', '{"account":"411111******1111"}') RETURNING id`,
        [SHOP_ID, PAYMENT.card],
      )) as Array<{ id: string }>;
      const psData = '{"account":"411111******1111","payment_token":"tok_legacy_1"}';
      const [notification] = (await old.query(
        `INSERT INTO notifications (type, content_key, payload, content_type, verified, status, shop_order_id)
         VALUES ('invoice', repeat('a', 64), $1, 'application/json', true, 'applied', 'legacy-inv-1') RETURNING id`,
        [JSON.stringify({ shop_order_id: 'legacy-inv-1', ps_data: psData })],
      )) as Array<{ id: string }>;
      await old.destroy();

      ctx = await startTestApp({
        sandbox,
        shops: 'single',
        databaseUrl: db.url,
        env: { PAYOUT_POLL_INTERVAL_S: '0.2' },
      });
      const keys = ctx.service.app.get(KeyRing);

      const dump = await dumpText(db.url);
      expect(dump).not.toContain('tok_legacy_1');
      expect(dump).not.toContain(CARD);
      const [p] = await query<{ account_sealed: string }>(
        db.url,
        `SELECT account_sealed FROM payouts WHERE id = $1`,
        [payout.id],
      );
      expect(p.account_sealed).toMatch(/^k1\.test1\./);
      expect(JSON.parse(keys.unseal(p.account_sealed, accountContext(payout.id)))).toEqual({
        account: CARD,
      });
      const [inv] = await query<Record<string, unknown>>(
        db.url,
        `SELECT * FROM invoices WHERE id = $1`,
        [invoice.id],
      );
      expect(tokenOf(ctx, inv)).toBe('tok_legacy_1');
      expect(inv.payment_token_hash).toBe(keys.blindIndex('tok_legacy_1', PAYMENT_TOKEN_INDEX));
      const [n] = await query<{ payload: Record<string, string> }>(
        db.url,
        `SELECT payload FROM notifications WHERE id = $1`,
        [notification.id],
      );
      expect(openNotificationFields(keys, notification.id, n.payload).ps_data).toBe(psData);

      // The re-sealed account works: the lost create is repeated with it and the payout completes.
      expect(await pollUntilAllFinal(ctx, ['legacy-po-1'])).toEqual(['succeeded']);
      const sent = sandbox.state.requests.find(
        (r) =>
          r.path === 'withdraw/create' &&
          (r.body as Record<string, unknown>).shop_payment_id === 'legacy-po-1',
      );
      expect((sent?.body as Record<string, unknown>).account).toBe(CARD);

      // A second start finds nothing left to do.
      await ctx.close();
      ctx = undefined;
      const before = await dumpText(db.url);
      ctx = await startTestApp({ sandbox, databaseUrl: db.url, shops: 'single' });
      expect(await dumpText(db.url)).toBe(before);
    } finally {
      await ctx?.close();
      await db.drop();
    }
  }, 120_000);
});

describe('a stored notification', () => {
  it('keeps the token sealed (verified first), and a replay still applies it', async () => {
    const ctx = await startTestApp({ sandbox, shops: 'single' });
    try {
      const shopOrderId = `ord-${Date.now()}`;
      const fields = paymentNotification(shopOrderId, 'tok_replayed_1');
      const post = () => postNotification(ctx, fields);
      // Arrives before the invoice exists here: verified, stored, rejected.
      expect((await post()).status).toBe(200);
      const [stored] = await query<{ id: string; payload: Record<string, string>; status: string }>(
        ctx.databaseUrl,
        `SELECT id, payload, status FROM notifications WHERE shop_order_id = $1`,
        [shopOrderId],
      );
      expect(stored.status).toBe('rejected');
      expect(stored.payload.ps_data).toMatch(/^k1\.test1\./);
      expect(JSON.stringify(stored.payload)).not.toContain('tok_replayed_1');
      // Moved to another row, the sealed value does not open.
      const keys = ctx.service.app.get(KeyRing);
      expect(() => openNotificationFields(keys, randomUUID(), stored.payload)).toThrow();

      await insertInvoice(ctx.databaseUrl, shopOrderId);
      const replay = await ctx.http
        .post(`/api/v1/admin/notifications/${stored.id}/replay`)
        .set({ Authorization: `Bearer ${ADMIN_KEY}` });
      expect(replay.status).toBe(200);
      expect(replay.body.status).toBe('applied');
      const [inv] = await query<Record<string, unknown>>(
        ctx.databaseUrl,
        `SELECT * FROM invoices WHERE shop_order_id = $1`,
        [shopOrderId],
      );
      expect(inv.status).toBe('succeeded');
      expect(tokenOf(ctx, inv)).toBe('tok_replayed_1');
      // A redelivery of the same notification is recognised: one row, still sealed.
      expect((await post()).status).toBe(200);
      const rows = await query<{ delivery_count: number }>(
        ctx.databaseUrl,
        `SELECT delivery_count FROM notifications WHERE shop_order_id = $1`,
        [shopOrderId],
      );
      expect(rows).toEqual([{ delivery_count: 2 }]);
    } finally {
      await ctx.close();
    }
  }, 60_000);
});

describe('sealed values moved between rows', () => {
  it('a token swapped into another invoice row is never used nor shown; swapped back, it is', async () => {
    const ctx = await startTestApp({ sandbox, shops: 'single' });
    try {
      const a = `ord-a-${Date.now()}`;
      const b = `ord-b-${Date.now()}`;
      for (const [id, token] of [
        [a, 'tok_of_invoice_a'],
        [b, 'tok_of_invoice_b'],
      ]) {
        await insertInvoice(ctx.databaseUrl, id);
        expect((await postNotification(ctx, paymentNotification(id, token))).status).toBe(200);
      }
      const admin = { Authorization: `Bearer ${ADMIN_KEY}` };
      const shownToken = async (id: string): Promise<unknown> => {
        const res = await ctx.http.get(`/api/v1/invoices/${id}`).set(admin);
        expect(res.status).toBe(200);
        expect(res.body.status).toBe('succeeded');
        return (res.body.paymentToken as { token?: string } | null)?.token;
      };
      expect(await shownToken(a)).toBe('tok_of_invoice_a');

      // A database writer swaps the two sealed tokens (each still a valid ciphertext).
      const swap = `UPDATE invoices SET payment_token = CASE shop_order_id WHEN $1 THEN
          (SELECT payment_token FROM invoices WHERE shop_order_id = $2) ELSE
          (SELECT payment_token FROM invoices WHERE shop_order_id = $1) END
        WHERE shop_order_id IN ($1, $2)`;
      await query(ctx.databaseUrl, swap, [a, b]);

      // Shown: the invoice, without a token (neither its own nor the other's).
      for (const id of [a, b]) expect(await shownToken(id)).toBeUndefined();
      // Used: refused, naming the field; no row, no gateway call.
      const before = sandbox.state.requests.length;
      const c = `ord-c-${Date.now()}`;
      const charge = await ctx.http.post('/api/v1/invoices').set(auth()).send({
        shopOrderId: c,
        amount: '10.00',
        currency: 643,
        payway: PAYMENT.card,
        paymentTokenFrom: a,
      });
      expect(charge.status).toBe(409);
      expect(charge.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(charge.body.errors).toEqual([expect.objectContaining({ field: 'paymentTokenFrom' })]);
      expect(JSON.stringify(charge.body)).not.toMatch(/tok_of_invoice/);
      expect(sandbox.state.requests.slice(before)).toEqual([]);
      const rows = await query(ctx.databaseUrl, `SELECT 1 FROM invoices WHERE shop_order_id = $1`, [
        c,
      ]);
      expect(rows).toEqual([]);

      // Swapped back, each opens again: the refusal was the binding to the row, nothing else.
      await query(ctx.databaseUrl, swap, [a, b]);
      expect(await shownToken(a)).toBe('tok_of_invoice_a');
      expect(await shownToken(b)).toBe('tok_of_invoice_b');
    } finally {
      await ctx.close();
    }
  }, 60_000);
});

describe('payout create repeats across key changes', () => {
  const body = (id: string, amount = '100.00') => ({
    shopPaymentId: id,
    amount,
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway: PAYOUT.card,
    account: CARD,
  });

  it('replays the same body (not 409) after a key-ring rotation and for rows fingerprinted before the ring; another body is 409', async () => {
    const database = await createTestDatabase();
    const primary = `test1:${key(7)}`;
    let ctx = await startTestApp({
      sandbox,
      shops: 'single',
      databaseUrl: database.url,
      env: { DATA_ENCRYPTION_KEYS: primary },
    });
    try {
      const p = `po-ring-${Date.now()}`;
      const legacy = `po-legacy-${Date.now()}`;
      const first = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(p));
      expect(first.status).toBeGreaterThanOrEqual(200);
      expect(first.status).toBeLessThan(300);
      const second = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(legacy));
      expect(second.status).toBe(first.status);

      // The fingerprint is an HMAC under the key ring: nothing of the gateway secret in it.
      const [stored] = await query<{ request_fingerprint: string }>(
        database.url,
        `SELECT request_fingerprint FROM payouts WHERE shop_payment_id = $1`,
        [p],
      );
      const ring = new KeyRing(parseKeyRing(primary));
      expect(stored.request_fingerprint).toBe(
        ring.blindIndex(canonicalPayoutRequest(body(p) as CreatePayoutDto), PAYOUT_REQUEST_INDEX),
      );
      // A row of the version before the ring: fingerprinted under the gateway secret.
      await query(
        database.url,
        `UPDATE payouts SET request_fingerprint = $1 WHERE shop_payment_id = $2`,
        [
          createHmac('sha256', deriveKey(SECRET, 'payout-fingerprint'))
            .update(legacyCanonicalPayoutRequest(body(legacy) as CreatePayoutDto))
            .digest('hex'),
          legacy,
        ],
      );
      await ctx.close();

      // A new primary key; the old one still opens (a rotation in progress).
      ctx = await startTestApp({
        sandbox,
        shops: 'single',
        databaseUrl: database.url,
        env: { DATA_ENCRYPTION_KEYS: `next:${key(8)},${primary}` },
      });
      const calls = sandbox.state.requests.length;
      for (const [id, answer] of [
        [p, first],
        [legacy, second],
      ] as const) {
        const again = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id));
        expect(again.status).toBe(answer.status);
        expect(again.body).toEqual(answer.body);
        const other = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(id, '100.01'));
        expect(other.status).toBe(409);
        expect(other.body.type).toMatch(/idempotency-conflict$/);
      }
      expect(
        sandbox.state.requests.slice(calls).filter((r) => r.path === 'withdraw/create'),
      ).toEqual([]);
      await ctx.close();

      // The gateway secret rotated as well: a repeat is still recognised (the fingerprint never
      // depended on it). Rows fingerprinted before the ring only match under the secret they
      // were written with.
      ctx = await startTestApp({
        sandbox,
        shops: 'single',
        databaseUrl: database.url,
        env: {
          DATA_ENCRYPTION_KEYS: `next:${key(8)},${primary}`,
          GATEWAY_SECRET_KEY: 'the-shops-rotated-gateway-secret',
        },
      });
      const again = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(p));
      expect(again.status).toBe(first.status);
      expect(again.body).toEqual(first.body);
      const other = await ctx.http.post('/api/v1/payouts').set(auth()).send(body(p, '100.01'));
      expect(other.status).toBe(409);
    } finally {
      await ctx.close();
      await database.drop();
    }
  }, 60_000);
});

describe('keys:rotate', () => {
  function rotate(
    databaseUrl: string,
    keys: string,
  ): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['dist/src/keys/rotate-main.js'], {
        env: {
          PATH: process.env.PATH ?? '',
          DATABASE_URL: databaseUrl,
          GATEWAY_BASE_URL: sandbox.baseUrl,
          GATEWAY_SHOP_ID: String(SHOP_ID),
          GATEWAY_SECRET_KEY: SECRET,
          API_KEYS: SHOP_KEY,
          ADMIN_API_KEYS: ADMIN_KEY,
          ALLOW_INSECURE_HTTP: 'true',
          DATA_ENCRYPTION_KEYS: keys,
          KEYS_ROTATE_BATCH: '3',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      child.on('exit', (code) => resolve({ code, output }));
    });
  }

  const payout = (ctx: TestContext, id: string) =>
    ctx.http.post('/api/v1/payouts').set(auth()).send({
      shopPaymentId: id,
      amount: '100.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account: CARD,
    });

  it('keeps payout idempotency: after keys:rotate and the old key dropped, a repeat replays (amounts by value), another body is 409', async () => {
    const db = await createTestDatabase();
    const body = (id: string, over: Record<string, unknown> = {}) => ({
      shopPaymentId: id,
      amount: '100.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account: CARD,
      ...over,
    });
    let ctx: TestContext | undefined;
    try {
      ctx = await startTestApp({
        sandbox,
        shops: 'single',
        databaseUrl: db.url,
        env: { DATA_ENCRYPTION_KEYS: OLD },
      });
      const send = (c: TestContext, b: Record<string, unknown>) =>
        c.http.post('/api/v1/payouts').set(auth()).send(b);
      const p = `idem-rot-${Date.now()}`;
      const spelled = `${p}-spelled`;
      const legacy = `${p}-legacy`;
      const first = await send(ctx, body(p));
      expect(first.status).toBe(202);
      const firstSpelled = await send(ctx, body(spelled, { amount: '100.0' }));
      expect(firstSpelled.status).toBe(202);
      const firstLegacy = await send(ctx, body(legacy));
      expect(firstLegacy.status).toBe(202);
      // A row of an earlier version: the amount as spelled, no key recorded.
      await query(
        db.url,
        `UPDATE payouts SET request_fingerprint = $1, request_fingerprint_key = NULL WHERE shop_payment_id = $2`,
        [
          new KeyRing(parseKeyRing(OLD)).blindIndex(
            legacyCanonicalPayoutRequest(body(legacy) as CreatePayoutDto),
            PAYOUT_REQUEST_INDEX,
          ),
          legacy,
        ],
      );
      await ctx.close();
      ctx = undefined;

      const rotation = await rotate(db.url, `${NEW},${OLD}`);
      expect(rotation).toMatchObject({ code: 0 });
      expect(rotation.output).toMatch(/payouts\.request_fingerprint: 3/);
      const stored = await query<{ request_fingerprint_key: string }>(
        db.url,
        `SELECT request_fingerprint_key FROM payouts`,
      );
      expect(stored.map((r) => r.request_fingerprint_key)).toEqual(['new', 'new', 'new']);
      // A re-run finds nothing to do.
      const again = await rotate(db.url, NEW);
      expect(again).toMatchObject({ code: 0 });
      expect(again.output).toMatch(/payouts\.request_fingerprint: 0/);

      // The old key dropped: only the new one is left.
      ctx = await startTestApp({
        sandbox,
        shops: 'single',
        databaseUrl: db.url,
        env: { DATA_ENCRYPTION_KEYS: NEW },
      });
      const calls = sandbox.state.requests.length;
      const repeat = await send(ctx, body(p));
      expect(repeat.status).toBe(202);
      expect(repeat.body).toEqual(first.body);
      const repeatLegacy = await send(ctx, body(legacy));
      expect(repeatLegacy.status).toBe(202);
      expect(repeatLegacy.body).toEqual(firstLegacy.body);
      // Amounts compare by value: "100.0" then "100.00" is the same request.
      const respelled = await send(ctx, body(spelled, { amount: '100.00' }));
      expect(respelled.status).toBe(202);
      expect(respelled.body).toEqual(firstSpelled.body);
      const otherAccount = await send(ctx, body(p, { account: '5555555555554444' }));
      expect(otherAccount.status).toBe(409);
      expect(otherAccount.body.type).toMatch(/idempotency-conflict$/);
      const otherAmount = await send(ctx, body(spelled, { amount: '100.01' }));
      expect(otherAmount.status).toBe(409);
      expect(
        sandbox.state.requests.slice(calls).filter((r) => r.path === 'withdraw/create'),
      ).toEqual([]);
    } finally {
      await ctx?.close();
      await db.drop();
    }
  }, 120_000);

  it('rotates under load; with the old key dropped every open payout still completes', async () => {
    const db = await createTestDatabase();
    // The queued resets land on whichever payout creates next, so one payout may meet more
    // than two of them: the create cap (default 3) is not what this test is about.
    const env = { PAYOUT_POLL_INTERVAL_S: '0.2', PAYOUT_MAX_CREATES: '20' };
    let ctx: TestContext | undefined;
    try {
      // Under the old key: payouts whose create was lost (the account is needed again later).
      ctx = await startTestApp({
        sandbox,
        shops: 'single',
        databaseUrl: db.url,
        env: { ...env, DATA_ENCRYPTION_KEYS: OLD },
      });
      const open: string[] = [];
      await fault({ path: 'withdraw/create', fault: 'reset', times: 2 * 8 });
      for (let i = 0; i < 8; i += 1) {
        const id = `rot-old-${i}`;
        expect((await payout(ctx, id)).status).toBe(202);
        open.push(id);
      }
      // ...and a recurrent token, from a notification kept with it.
      await insertInvoice(db.url, 'rot-inv');
      expect(
        (await postNotification(ctx, paymentNotification('rot-inv', 'tok_rotated_1'))).status,
      ).toBe(200);
      await ctx.close();

      // Step 1: the new key first, the old one still there to open.
      ctx = await startTestApp({
        sandbox,
        shops: 'single',
        databaseUrl: db.url,
        env: { ...env, DATA_ENCRYPTION_KEYS: `${NEW},${OLD}` },
      });
      // Step 2: rotate while payouts are created and polled.
      let rotating = true;
      const rotation = rotate(db.url, `${NEW},${OLD}`).finally(() => (rotating = false));
      const live = ctx;
      // Creates keep coming for as long as the rotation runs (at least ten).
      const load = (async () => {
        for (let i = 0; (rotating || i < 10) && i < 200; i += 1) {
          await fault({ path: 'withdraw/create', fault: 'reset', times: 2 });
          const id = `rot-live-${i}`;
          expect((await payout(live, id)).status).toBe(202);
          open.push(id);
        }
      })();
      const [result] = await Promise.all([rotation, load]);
      expect(result).toMatchObject({ code: 0 });
      expect(result.output).toContain('payouts.account_sealed');
      expect(result.output).not.toContain(CARD);
      await ctx.close();

      const sealed = await query<{ account_sealed: string }>(
        db.url,
        `SELECT account_sealed FROM payouts`,
      );
      expect(sealed.length).toBe(open.length);
      expect(sealed.every((r) => r.account_sealed.startsWith('k1.new.'))).toBe(true);
      const [token] = await query<{ payment_token: string }>(
        db.url,
        `SELECT payment_token FROM invoices WHERE shop_order_id = 'rot-inv'`,
      );
      expect(token.payment_token).toMatch(/^k1\.new\./);
      const [stored] = await query<{ ps_data: string }>(
        db.url,
        `SELECT payload->>'ps_data' AS ps_data FROM notifications WHERE shop_order_id = 'rot-inv'`,
      );
      expect(stored.ps_data).toMatch(/^k1\.new\./);

      // Step 3: the old key dropped.
      ctx = await startTestApp({
        sandbox,
        shops: 'single',
        databaseUrl: db.url,
        env: { ...env, DATA_ENCRYPTION_KEYS: NEW },
      });
      expect(await pollUntilAllFinal(ctx, open)).toEqual(open.map(() => 'succeeded'));
      const keys = ctx.service.app.get(KeyRing);
      const [inv] = await query<Record<string, unknown>>(
        db.url,
        `SELECT * FROM invoices WHERE shop_order_id = 'rot-inv'`,
      );
      expect(tokenOf(ctx, inv)).toBe('tok_rotated_1');
      // The blind index moved with it: look-ups by token still find the invoice.
      expect(inv.payment_token_hash).toBe(keys.blindIndex('tok_rotated_1', PAYMENT_TOKEN_INDEX));
      const [n] = await query<{ id: string; payload: Record<string, string> }>(
        db.url,
        `SELECT id, payload FROM notifications WHERE shop_order_id = 'rot-inv'`,
      );
      expect(JSON.parse(openNotificationFields(keys, n.id, n.payload).ps_data)).toMatchObject({
        payment_token: 'tok_rotated_1',
      });
      // A second rotation has nothing to do.
      expect(await rotate(db.url, NEW)).toMatchObject({ code: 0 });
    } finally {
      await ctx?.close();
      await db.drop();
    }
  }, 180_000);
});
