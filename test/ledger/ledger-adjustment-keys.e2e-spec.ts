import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ADMIN_KEY, startTestApp, TestContext } from '../support/app';

/**
 * An adjustment under an `Idempotency-Key` posts once: a retried request (a time-out, a second
 * click, several at once) answers the entry posted first; the same key with another request is a
 * 409 that posts nothing; a malformed key is a 400 that posts nothing. Keys are per admin key.
 */

const OTHER_ADMIN = 'test-admin-key-other-0123456789';

let ctx: TestContext;
let db: Client;

beforeAll(async () => {
  ctx = await startTestApp({ env: { ADMIN_API_KEYS: `${ADMIN_KEY},${OTHER_ADMIN}` } });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
}, 60000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

const as = (key: string, idempotencyKey?: string): Record<string, string> => ({
  Authorization: `Bearer ${key}`,
  ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }),
});

const topUp = (note: string, amount = '25.00'): Record<string, unknown> => ({
  account: 'agent_available',
  currency: 643,
  amount,
  note,
});

async function entriesNoted(note: string): Promise<number> {
  const r = await db.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE note = $1`, [note]);
  return r.rows[0].n as number;
}

describe('adjustments under an Idempotency-Key', () => {
  it('a repeat answers the first entry and posts nothing; without a key every request posts', async () => {
    const key = randomUUID();
    const note = `top-up ${key}`;
    const first = await ctx.http
      .post('/api/v1/admin/ledger/adjustments')
      .set(as(ADMIN_KEY, key))
      .send(topUp(note));
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // The same request, the amount written another way (the same value).
    const again = await ctx.http
      .post('/api/v1/admin/ledger/adjustments')
      .set(as(ADMIN_KEY, key))
      .send(topUp(note, '25.0'));
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await entriesNoted(note)).toBe(1);
    // No key: two requests are two adjustments, as the contract has it.
    const plain = `no key ${key}`;
    for (let i = 0; i < 2; i++)
      await ctx.http
        .post('/api/v1/admin/ledger/adjustments')
        .set(as(ADMIN_KEY))
        .send(topUp(plain))
        .expect(201);
    expect(await entriesNoted(plain)).toBe(2);
  });

  it('eight at once post one entry, and every answer names it', async () => {
    const key = randomUUID();
    const note = `at once ${key}`;
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        ctx.http.post('/api/v1/admin/ledger/adjustments').set(as(ADMIN_KEY, key)).send(topUp(note)),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    expect(new Set(answers.map((a) => a.body.id as string)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(7);
    expect(await entriesNoted(note)).toBe(1);
  });

  it('the same key with another request is a 409 that posts nothing, whatever differs', async () => {
    const key = randomUUID();
    const note = `first ${key}`;
    await ctx.http
      .post('/api/v1/admin/ledger/adjustments')
      .set(as(ADMIN_KEY, key))
      .send(topUp(note))
      .expect(201);
    const before = (await db.query(`SELECT count(*)::int AS n FROM ledger_entries`)).rows[0].n;
    const others: [Record<string, unknown>, string][] = [
      [topUp(note, '25.01'), 'amount'],
      [topUp(note, '-25.00'), 'amount'],
      [{ ...topUp(note), currency: 840 }, 'currency'],
      [{ ...topUp(note), account: 'payout_fees' }, 'account'],
      [topUp(`${note} `), 'note'],
    ];
    for (const [body, field] of others) {
      const res = await ctx.http
        .post('/api/v1/admin/ledger/adjustments')
        .set(as(ADMIN_KEY, key))
        .send(body);
      expect(res.status).toBe(409);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.type).toMatch(/idempotency-conflict$/);
      expect(res.body.detail).toContain('Idempotency-Key');
      // What differs from the first entry, and only that.
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    }
    expect((await db.query(`SELECT count(*)::int AS n FROM ledger_entries`)).rows[0].n).toBe(
      before,
    );
  });

  it('keys are per admin key: another admin’s same key is its own adjustment', async () => {
    const key = randomUUID();
    const note = `shared key ${key}`;
    const mine = await ctx.http
      .post('/api/v1/admin/ledger/adjustments')
      .set(as(ADMIN_KEY, key))
      .send(topUp(note))
      .expect(201);
    const theirs = await ctx.http
      .post('/api/v1/admin/ledger/adjustments')
      .set(as(OTHER_ADMIN, key))
      .send(topUp(note))
      .expect(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(await entriesNoted(note)).toBe(2);
  });

  it('a malformed key is a 400 naming the header, and posts nothing', async () => {
    const note = `bad key ${randomUUID()}`;
    const bad = ['', ' ', 'x'.repeat(256), 'naïve', 'tab\there', 'ключ'];
    for (const value of bad) {
      const res = await ctx.http
        .post('/api/v1/admin/ledger/adjustments')
        .set({ Authorization: `Bearer ${ADMIN_KEY}` })
        // As UTF-8 bytes on the wire (a client sends no other way).
        .set('Idempotency-Key', Buffer.from(value, 'utf8').toString('latin1'))
        .send(topUp(note));
      expect({ value, status: res.status }).toEqual({ value, status: 400 });
      expect(JSON.stringify(res.body.errors)).toContain('Idempotency-Key');
    }
    // Sent twice (two header lines), even with the same value.
    const twice = await rawPost('/api/v1/admin/ledger/adjustments', JSON.stringify(topUp(note)), [
      ['Authorization', `Bearer ${ADMIN_KEY}`],
      ['Idempotency-Key', 'k1'],
      ['Idempotency-Key', 'k1'],
    ]);
    expect(twice).toEqual({ status: 400, body: expect.stringContaining('Idempotency-Key') });
    // A bad key and a bad body: both named, nothing posted.
    const both = await ctx.http
      .post('/api/v1/admin/ledger/adjustments')
      .set({ Authorization: `Bearer ${ADMIN_KEY}`, 'Idempotency-Key': 'x'.repeat(300) })
      .send({ account: 'agent_available', currency: 643, amount: '1.005', note });
    expect(both.status).toBe(400);
    expect(both.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'Idempotency-Key',
      'amount',
    ]);
    expect(await entriesNoted(note)).toBe(0);
  });
});

/** A POST with header lines as given (repeated names kept), answered as status and text. */
async function rawPost(
  path: string,
  body: string,
  headers: [string, string][],
): Promise<{ status: number; body: string }> {
  const { request } = await import('node:http');
  const { port } = new URL(ctx.url);
  return new Promise((resolve, reject) => {
    // Raw header lines: Node adds none of its own (Host, Content-Length) to these.
    const flat: string[] = [
      'Host',
      `127.0.0.1:${port}`,
      'Content-Type',
      'application/json',
      'Content-Length',
      String(Buffer.byteLength(body)),
    ];
    for (const [k, v] of headers) flat.push(k, v);
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers: flat }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}
