import { randomUUID } from 'node:crypto';
import { connect, createServer } from 'node:net';
import { Client } from 'pg';
import {
  ADMIN_KEY,
  admin,
  auth,
  SHOP_KEY,
  startTestApp,
  unvalidatedHttp,
  type TestContext,
} from '../support/app';
import { rawRequest, sandboxRequests, sleep } from '../support/hostile';
import { PAYMENT, PAYOUT } from '../support/payways';
import { RELAY_LOCK } from '../../src/events/event-relay';
import { signIn } from '../console/console-session';

/**
 * Attacks against the running app, one describe per finding: batch uploads (scope
 * before the body, uploads per key, a slice at a time), webhook addresses with credentials, dates
 * that reached PostgreSQL unread, percent-encoded paths past the JSON-only rule, the console's
 * keyless budget, card numbers in free text, problem bodies without a request id, and the feed
 * against the webhooks.
 */

const PROBLEM = 'https://problems.piastrix-orchestrator.dev/';
const READ_KEY = 'test-read-only-key-0123456789';
const PAYMENTS_KEY = 'test-payments-only-key-0123456789';
const bearer = (key: string): Record<string, string> => ({ Authorization: `Bearer ${key}` });
const WHSEC = `whsec_${Buffer.from('hostile-three-webhook-secret-0123').toString('base64')}`;
const HOOK_TOKEN = 'hook-s3cret-token';

type Json = Record<string, unknown>;

/** A loopback port nobody listens on (taken, then closed): every delivery to it fails. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Sends a request's head and only the first `sent` bytes of a body declared `declared` bytes
 * long, then waits: resolves with the status line's code as soon as one comes, or null when none
 * came within `waitMs` (the server is still reading). `finish()` sends the rest.
 */
function partialRequest(
  url: string,
  target: string,
  headers: Record<string, string>,
  body: string,
  sent: number,
): {
  status: (waitMs: number) => Promise<number | null>;
  finish: () => Promise<number>;
  close: () => void;
} {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let text = '';
  const waiters: Array<() => void> = [];
  socket.on('data', (d: Buffer) => {
    text += d.toString('utf8');
    for (const w of waiters.splice(0)) w();
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    for (const w of waiters.splice(0)) w();
  });
  const head = [
    `POST ${target} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    'Connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  socket.write(`${head.join('\r\n')}\r\n\r\n${body.slice(0, sent)}`);
  const statusNow = (): number | null => {
    const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
    return m ? Number(m[1]) : null;
  };
  const status = async (waitMs: number): Promise<number | null> => {
    const deadline = Date.now() + waitMs;
    while (statusNow() === null && Date.now() < deadline && !socket.destroyed) {
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return statusNow();
  };
  return {
    status,
    finish: async () => {
      socket.write(body.slice(sent));
      const got = await status(60_000);
      if (got === null) throw new Error(`no answer to ${target}`);
      return got;
    },
    close: () => socket.destroy(),
  };
}

const CSV_HEADER = 'shopPaymentId,amount,amountType,shopCurrency,payway,account,description';
function csvBatch(rows: number, tag: string, description = 'd'.repeat(200)): string {
  const lines = Array.from(
    { length: rows },
    (_, i) => `${tag}-${i},100.00,ps_amount,643,"${PAYOUT.card}",4111111111111111,${description}`,
  );
  return `${CSV_HEADER}\n${lines.join('\n')}\n`;
}
function jsonBatch(rows: number, tag: string): string {
  return JSON.stringify({
    rows: Array.from({ length: rows }, (_, i) => ({
      shopPaymentId: `${tag}-${i}`,
      amount: '100.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account: '4111111111111111',
      description: 'd'.repeat(100),
    })),
  });
}

let ctx: TestContext;
let db: Client;
let hookPort: number;

beforeAll(async () => {
  hookPort = await closedPort();
  ctx = await startTestApp({
    env: {
      API_KEYS: `${SHOP_KEY},${READ_KEY}:read,${PAYMENTS_KEY}:payments`,
      SHOP_WEBHOOK_URL: `http://127.0.0.1:${hookPort}/hook?token=${HOOK_TOKEN}`,
      SHOP_WEBHOOK_SECRET: WHSEC,
      BATCH_UPLOADS_PER_KEY: '2',
    },
  });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
}, 120_000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

describe('payout batch uploads: scope before the body, uploads per key, no stall', () => {
  it('a read-only or payments-only key is refused 403 before its 1.4 MB body is read, however the path is spelled', async () => {
    const body = jsonBatch(5000, `ro-${randomUUID()}`);
    expect(body.length).toBeGreaterThan(1_000_000);
    for (const key of [READ_KEY, PAYMENTS_KEY]) {
      for (const target of [
        '/api/v1/payouts/batches?dryRun=true',
        '/%61pi/v1/payouts/%62atches',
        'http://127.0.0.1/api/v1/payouts/batches',
      ]) {
        // Only 1 kB of the body is ever sent: an answer proves nothing waited for the rest.
        const req = partialRequest(
          ctx.url,
          target,
          { ...bearer(key), 'Content-Type': 'application/json' },
          body,
          1024,
        );
        try {
          expect([key, target, await req.status(10_000)]).toEqual([key, target, 403]);
        } finally {
          req.close();
        }
      }
    }
    // The CSV form too.
    const csv = partialRequest(
      ctx.url,
      '/api/v1/payouts/batches',
      { ...bearer(READ_KEY), 'Content-Type': 'text/csv' },
      csvBatch(5000, 'ro'),
      1024,
    );
    try {
      expect(await csv.status(10_000)).toBe(403);
    } finally {
      csv.close();
    }
  });

  it('at most BATCH_UPLOADS_PER_KEY uploads of one key at once: the next is 429 with Retry-After; another key and a later upload are not', async () => {
    const tag = `conc-${randomUUID()}`;
    const body = csvBatch(50, tag);
    const held = [0, 1].map(() =>
      partialRequest(
        ctx.url,
        '/api/v1/payouts/batches?dryRun=true',
        { ...auth(), 'Content-Type': 'text/csv' },
        body,
        100,
      ),
    );
    try {
      // Both have been let in (their bodies are being read): no answer yet.
      for (const h of held) expect(await h.status(300)).toBeNull();
      for (const spelling of [
        '/api/v1/payouts/batches?dryRun=true',
        '/api/v1/payouts/%62atches?dryRun=true',
      ]) {
        const third = await rawRequest(
          ctx.url,
          'POST',
          spelling,
          { ...auth(), 'Content-Type': 'text/csv' },
          body,
        );
        expect([spelling, third.status]).toEqual([spelling, 429]);
        expect(third.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        const problem = JSON.parse(third.body) as Json;
        expect(problem).toMatchObject({ status: 429, type: `${PROBLEM}too-many-uploads` });
        expect(problem.requestId).toBe(third.headers['x-request-id']);
      }
      // Another key has its own uploads.
      const other = await ctx.http
        .post('/api/v1/payouts/batches?dryRun=true')
        .set(admin())
        .type('text/csv')
        .send(body);
      expect(other.status).toBe(200);
      // Other routes of the same key are not limited by it.
      expect((await ctx.http.get('/api/v1/payouts').set(auth())).status).toBe(200);
    } finally {
      const answers = await Promise.all(held.map((h) => h.finish()));
      expect(answers).toEqual([200, 200]);
    }
    // Their slots are given back once answered.
    const after = await ctx.http
      .post('/api/v1/payouts/batches?dryRun=true')
      .set(auth())
      .type('text/csv')
      .send(body);
    expect(after.status).toBe(200);
  });

  it('a 10,000-row CSV (2.5 MB, 200-character descriptions) and its JSON twin: dry run and real, every row read, while /health keeps answering', async () => {
    const tag = `big-${randomUUID()}`;
    const csv = csvBatch(10_000, tag);
    expect(csv.length).toBeGreaterThan(2_500_000);
    let pings = 0;
    let pinging = true;
    const pinger = (async () => {
      while (pinging) {
        await ctx.http.get('/health').expect(200);
        pings++;
        await sleep(10);
      }
    })();
    try {
      const dry = await ctx.http
        .post('/api/v1/payouts/batches?dryRun=true&limit=5')
        .set(auth())
        .type('text/csv')
        .send(csv);
      expect([dry.status, dry.body.counts]).toEqual([
        200,
        { total: 10_000, valid: 10_000, invalid: 0 },
      ]);
      const json = await ctx.http
        .post('/api/v1/payouts/batches?dryRun=true&limit=5')
        .set(auth())
        .type('application/json')
        .send(jsonBatch(10_000, `${tag}-j`));
      expect([json.status, json.body.counts]).toEqual([
        200,
        { total: 10_000, valid: 10_000, invalid: 0 },
      ]);
      // One bad row at the very end (the 10,000th) is found and named.
      const bad = `${csvBatch(9_999, `${tag}-b`)}${tag}-x,1.00,ps_amount,643,"${PAYOUT.card}",4111111111111111,\u0000\n`;
      const refused = await ctx.http
        .post('/api/v1/payouts/batches?dryRun=true')
        .set(auth())
        .type('text/csv')
        .send(bad);
      expect([refused.status, refused.body.errors]).toEqual([
        400,
        [{ field: 'rows.9999.description', message: 'must not contain NUL characters' }],
      ]);
      const real = await ctx.http
        .post(`/api/v1/payouts/batches?batchId=${tag}`)
        .set(auth())
        .type('text/csv')
        .send(csv);
      expect([real.status, real.body.rowCount ?? real.body.counts?.total]).toEqual([202, 10_000]);
      const stored = await db.query(
        `SELECT count(*)::int AS n FROM payout_batch_rows r JOIN payout_batches b ON b.id = r.batch_pk WHERE b.batch_id = $1`,
        [tag],
      );
      expect(stored.rows[0].n).toBe(10_000);
    } finally {
      pinging = false;
      await pinger;
    }
    expect(pings).toBeGreaterThan(0);
  }, 180_000);

  it('JSON bodies are read as JSON.parse reads them: malformed is a 400, a row with NUL names it, an extra field is refused', async () => {
    const post = (text: string) =>
      ctx.http
        .post('/api/v1/payouts/batches?dryRun=true')
        .set(auth())
        .type('application/json')
        .send(text);
    const malformed = await post('{"rows":[{"a":1},]}');
    expect([malformed.status, malformed.body.detail]).toEqual([
      400,
      'The request body is not valid JSON',
    ]);
    const nul = await post(JSON.stringify({ rows: [{ shopPaymentId: 'a\u0000' }] }));
    expect([nul.status, nul.body.errors]).toEqual([
      400,
      [{ field: 'rows.0.shopPaymentId', message: 'must not contain NUL characters' }],
    ]);
    const extra = await post(JSON.stringify({ rows: [], other: 1 }));
    expect(extra.status).toBe(400);
    const notObject = await post('[1,2]');
    expect([notObject.status, notObject.body.errors?.[0]?.field]).toEqual([400, 'body']);
  });
});

describe('webhook addresses: no credentials at start-up, no address secrets anywhere', () => {
  it('an address with user information is refused at start-up, naming the variable and never the password', async () => {
    for (const url of [
      'http://user:hook-pass@127.0.0.1:9/hook?token=x',
      'http://user@127.0.0.1:9/hook',
      `http://127.0.0.1:9/ok,https://u:hook-pass@shop.example/h`,
    ]) {
      let message = '';
      try {
        const started = await startTestApp({
          env: { SHOP_WEBHOOK_URL: url, SHOP_WEBHOOK_SECRET: WHSEC },
          sandbox: ctx.sandbox,
          databaseUrl: ctx.databaseUrl,
        });
        await started.close();
      } catch (e) {
        message = (e as Error).message;
      }
      expect([url, message]).toEqual([
        url,
        expect.stringMatching(/^Invalid configuration: SHOP_WEBHOOK_URL [^\n]*user information/),
      ]);
      expect(message).not.toContain('hook-pass');
    }
  });

  it("a failed delivery's address and error are shown without user information or query in the row, the API and the console", async () => {
    await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId: `wh-${randomUUID()}`,
        amount: '10.00',
        currency: 643,
        payway: PAYMENT.card,
      })
      .expect(201);
    const { WebhookDispatcher } = await import('../../src/events/webhook-dispatcher');
    await ctx.service.app.get(WebhookDispatcher).runOnce();
    // A row an older version wrote, with fetch's own words quoting the address.
    const [row] = (await db.query(`SELECT id FROM webhook_deliveries ORDER BY id DESC LIMIT 1`))
      .rows as Array<{ id: string }>;
    await db.query(
      `UPDATE webhook_deliveries SET state = 'failed', last_error = $2 WHERE id = $1`,
      [
        row.id,
        `TypeError: Request cannot be constructed from a URL that includes credentials: http://user:hook-pass@127.0.0.1:${hookPort}/hook?token=${HOOK_TOKEN}`,
      ],
    );
    const stored = (
      await db.query(
        `SELECT last_error FROM webhook_deliveries WHERE id <> $1 AND last_error IS NOT NULL`,
        [row.id],
      )
    ).rows as Array<{ last_error: string }>;
    for (const r of stored) expect(r.last_error).not.toMatch(/token|s3cret/);
    const api = await ctx.http.get('/api/v1/admin/webhook-deliveries').set(admin()).expect(200);
    const text = JSON.stringify(api.body);
    expect(text).toContain(`http://127.0.0.1:${hookPort}/hook`);
    for (const secret of [HOOK_TOKEN, 'hook-pass', 'user:', 'token='])
      expect(text).not.toContain(secret);
    const { jar } = await signIn(ctx, ADMIN_KEY);
    const page = await ctx.http.get('/admin/ui/deliveries').set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain(`http://127.0.0.1:${hookPort}/hook`);
    for (const secret of [HOOK_TOKEN, 'hook-pass', 'token='])
      expect(page.text).not.toContain(secret);
  });
});

describe('dates and times: one parser, a 400 naming the field, never a 500', () => {
  const BAD_TIMES = [
    '2026-W01-1',
    '20260101T000000Z',
    '2026-01-01T00:00:00,5Z',
    '2026',
    '2026-01',
    '2026-W53-7',
    '2026-01-01T00Z',
    '2026-01-01T00:00:00-23:59',
    '2026-01-01T00:00:00',
    '2026-02-30T00:00:00Z',
    '0000-01-01T00:00:00Z',
  ];

  it.each<[string, string, string]>([
    ['ledger entries', '/api/v1/admin/ledger/entries', 'from'],
    ['ledger entries', '/api/v1/admin/ledger/entries', 'to'],
    ['ledger balances', '/api/v1/admin/ledger/balances', 'at'],
    ['invoices', '/api/v1/invoices', 'createdFrom'],
    ['invoices', '/api/v1/invoices', 'createdTo'],
  ])(
    '%s ?%s=: every malformed time is a 400 naming it; accepted ones read alike',
    async (_what, path, field) => {
      const key = path.includes('/admin/') ? admin() : auth();
      for (const bad of BAD_TIMES) {
        const res = await ctx.http
          .get(path)
          .query({ [field]: bad })
          .set(key);
        expect([bad, res.status, res.body.errors?.[0]?.field]).toEqual([bad, 400, field]);
      }
      const answers = [];
      for (const good of [
        '2026-01-01T00:00:00Z',
        '2026-01-01T03:00:00+03:00',
        '2025-12-31T23:00-01:00',
        '2026-01-01T00:00:00.000000Z',
        '2026-01-01',
      ]) {
        const res = await ctx.http
          .get(path)
          .query({ [field]: good })
          .set(key);
        expect([good, res.status]).toEqual([good, 200]);
        answers.push(JSON.stringify(res.body.items ?? res.body.balances));
      }
      // The same instant however it is written: the same answer.
      expect(new Set(answers).size).toBe(1);
    },
  );

  it('bulk redelivery since: a time with an offset only (a bare day, no zone and the week forms are 400)', async () => {
    for (const bad of [...BAD_TIMES, '2026-01-01']) {
      const res = await ctx.http
        .post('/api/v1/admin/webhook-deliveries/redeliver')
        .set(admin())
        .send({ state: 'failed', since: bad });
      expect([bad, res.status, res.body.errors?.[0]?.field]).toEqual([bad, 400, 'since']);
    }
    const ok = await ctx.http
      .post('/api/v1/admin/webhook-deliveries/redeliver')
      .set(admin())
      .send({ state: 'dead', since: '2026-01-01T00:00:00+03:00' });
    expect(ok.status).toBe(200);
    expect(typeof ok.body.redelivered).toBe('number');
  });

  it("the console's bulk redelivery takes since, and refuses one without a zone", async () => {
    const { jar, csrf } = await signIn(ctx, ADMIN_KEY);
    const page = await ctx.http.get('/admin/ui/deliveries').set('Cookie', jar.header()).expect(200);
    expect(page.text).toContain('name="since"');
    const send = (since: string) =>
      ctx.http
        .post('/admin/ui/deliveries/redeliver')
        .set('Cookie', jar.header())
        .type('form')
        .send({ _csrf: csrf, state: 'failed', since });
    const bare = await send('2026-01-01');
    expect(bare.status).toBe(400);
    expect(bare.text).toMatch(/offset/);
    // A far future since matches nothing: none sent again.
    await db.query(`UPDATE webhook_deliveries SET state = 'failed' WHERE state = 'pending'`);
    const before = (
      await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'failed'`)
    ).rows[0].n as number;
    expect(before).toBeGreaterThan(0);
    const future = await send('2999-01-01T00:00:00Z');
    expect(future.status).toBe(303);
    expect(
      (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'failed'`))
        .rows[0].n,
    ).toBe(before);
  });

  it('a reconciliation of a day that has not begun is a 400, as the daily report', async () => {
    const tomorrow = new Date(Date.now() + 36 * 3600_000).toISOString().slice(0, 10);
    for (const date of ['9999-12-31', tomorrow]) {
      const rec = await ctx.http.post('/api/v1/admin/reconciliations').set(admin()).send({ date });
      expect([date, rec.status, rec.body.errors]).toEqual([
        date,
        400,
        [{ field: 'date', message: 'must not be in the future' }],
      ]);
      const report = await ctx.http.get('/api/v1/admin/reports/daily').query({ date }).set(admin());
      expect([date, report.status]).toEqual([date, 400]);
    }
    for (const date of ['2026-W01-1', '2026-02-30', '20260101']) {
      const rec = await ctx.http.post('/api/v1/admin/reconciliations').set(admin()).send({ date });
      expect([date, rec.status, rec.body.errors?.[0]?.field]).toEqual([date, 400, 'date']);
    }
  });
});

describe('edge checks read the path the router routes', () => {
  const form = 'shopOrderId=enc-1&amount=100&currency=643&payway=x';
  it.each([
    '/api/v1/invoices',
    '/%61pi/v1/invoices',
    '/api/v1/%69nvoices',
    '/%61%70%69/v1/invoices',
    'http://127.0.0.1/%61pi/v1/invoices',
  ])('POST %s with a form or CSV body is 415, as the JSON-only rule answers', async (target) => {
    for (const type of ['application/x-www-form-urlencoded', 'text/csv', 'text/plain']) {
      const res = await rawRequest(
        ctx.url,
        'POST',
        target,
        { ...auth(), 'Content-Type': type },
        form,
      );
      expect([target, type, res.status]).toEqual([target, type, 415]);
      expect(JSON.parse(res.body).type).toBe(`${PROBLEM}unsupported-media-type`);
    }
    const stored = await db.query(
      `SELECT count(*)::int AS n FROM invoices WHERE shop_order_id = 'enc-1'`,
    );
    expect(stored.rows[0].n).toBe(0);
  });

  it('the batch route spelled otherwise is still the batch route: its CSV is taken', async () => {
    const csv = csvBatch(2, `enc-${randomUUID()}`);
    const res = await rawRequest(
      ctx.url,
      'POST',
      '/api/v1/payouts/%62atches?dryRun=true',
      { ...auth(), 'Content-Type': 'text/csv' },
      csv,
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).counts).toEqual({ total: 2, valid: 2, invalid: 0 });
  });
});

describe("the console's pages and sign-in take the keyless per-address budget", () => {
  let limited: TestContext;
  beforeAll(async () => {
    limited = await startTestApp({
      env: { RATE_LIMIT_PUBLIC_PER_IP_RPS: '1', TRUST_PROXY: '1' },
      sandbox: ctx.sandbox,
      databaseUrl: ctx.databaseUrl,
    });
  });
  afterAll(() => limited?.close());

  it.each<
    [
      string,
      (ip: string) => Promise<{ status: number; headers: Record<string, string>; body: unknown }>,
    ]
  >([
    [
      'a page with a bogus session',
      (ip) =>
        limited.http
          .get('/admin')
          .set('X-Forwarded-For', ip)
          .set('Cookie', 'console_session=bogus-session-value'),
    ],
    ['the sign-in page', (ip) => limited.http.get('/admin/login').set('X-Forwarded-For', ip)],
    [
      'the sign-in form',
      (ip) =>
        limited.http
          .post('/admin/login')
          .set('X-Forwarded-For', ip)
          .type('form')
          .send({ key: 'guess', _csrf: 'x' }),
    ],
    [
      'an unknown console address',
      (ip) => limited.http.get('/admin/no-such-page').set('X-Forwarded-For', ip),
    ],
    ['an encoded spelling', (ip) => limited.http.get('/%61dmin/login').set('X-Forwarded-For', ip)],
  ])(
    '%s: past the budget 429 problem+json with Retry-After; another address is not affected',
    async (_what, send) => {
      const ip = `9.8.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await send(ip);
        statuses.push(res.status);
        if (res.status === 429) {
          expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
          expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        }
      }
      expect(statuses.slice(0, 2).every((s) => s !== 429)).toBe(true);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(5);
      expect((await send(`9.9.${Math.floor(Math.random() * 250)}.1`)).status).not.toBe(429);
    },
  );
});

describe('card numbers are never stored', () => {
  const PAN = '4111111111111111';
  const invoice = (extra: Json): Json => ({
    shopOrderId: `pan-${randomUUID()}`,
    amount: '10.00',
    currency: 643,
    payway: PAYMENT.card,
    ...extra,
  });

  it.each<[string, Json, string]>([
    ['description', { description: `card ${PAN} cvv 987` }, 'description'],
    ['description, spaced', { description: 'card 4111 1111 1111 1111' }, 'description'],
    ['description, dashed', { description: 'pan 5555-5555-5555-4444' }, 'description'],
    ['a metadata value', { metadata: { note: '4111 1111 1111 1111' } }, 'metadata.note'],
    ['a metadata cvv key', { metadata: { cvv: '987' } }, 'metadata.cvv'],
    ['a metadata CVC key', { metadata: { CVC: '987' } }, 'metadata.CVC'],
    ['a metadata cid key', { metadata: { Cid: '1234' } }, 'metadata.Cid'],
    ['an extras value', { extras: { phone: `x${PAN}` } }, 'extras.phone'],
  ])(
    'an invoice with a card number in %s is a 400 naming %s; nothing stored, no gateway call',
    async (_what, extra, field) => {
      const body = invoice(extra);
      const calls = (await sandboxRequests(ctx)).length;
      const res = await ctx.http.post('/api/v1/invoices').set(auth()).send(body);
      expect([res.status, res.body.errors?.map((e: { field: string }) => e.field)]).toEqual([
        400,
        [field],
      ]);
      expect(JSON.stringify(res.body)).not.toContain(PAN);
      const stored = await db.query(
        `SELECT count(*)::int AS n FROM invoices WHERE shop_order_id = $1`,
        [body.shopOrderId],
      );
      expect(stored.rows[0].n).toBe(0);
      expect((await sandboxRequests(ctx)).length).toBe(calls);
      // The quote (sent to the gateway, never stored) refuses it as well.
      if ('description' in extra) {
        const quote = await ctx.http
          .post('/api/v1/invoices/quote')
          .set(auth())
          .send({ ...body, metadata: undefined, extras: undefined });
        expect([quote.status, quote.body.errors?.[0]?.field]).toEqual([400, 'description']);
      }
    },
  );

  it('digits that are no card number (Luhn fails, too long, a phone, a date, a UUID) are taken', async () => {
    // The UUID's dashes join its digit groups into a run that passes the Luhn check: it was
    // refused as a card number (about one random UUID in 330).
    const uuid = 'a833759d-8c56-4372-9672-5010fecd17b2';
    const res = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send(
        invoice({
          description: `order 4111111111111112, ref 41111111111111110000123, +7 900 123-45-67, 2026-12-01, ${uuid}`,
          metadata: { cvvNote: 'x', order: '4111111111111112', ref: uuid },
        }),
      );
    expect([res.status, res.body.errors]).toEqual([201, undefined]);
  });

  it('refunds, payouts and batch rows (JSON and CSV) refuse them the same way', async () => {
    const paid = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send(invoice({ payway: PAYMENT.cardSuccess }))
      .expect(201);
    const refund = await ctx.http
      .post(`/api/v1/invoices/${paid.body.shopOrderId}/refunds`)
      .set(auth())
      .send({ shopRefundId: `r-${randomUUID()}`, amount: '1.00', metadata: { cvv2: '123' } });
    expect([refund.status, refund.body.errors?.[0]?.field]).toEqual([400, 'metadata.cvv2']);
    const payout = {
      shopPaymentId: `po-${randomUUID()}`,
      amount: '100.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account: PAN,
    };
    const single = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({ ...payout, description: `to ${PAN}` });
    expect([single.status, single.body.errors?.[0]?.field]).toEqual([400, 'description']);
    const meta = await ctx.http
      .post('/api/v1/payouts')
      .set(auth())
      .send({ ...payout, metadata: { cav2: '1' } });
    expect([meta.status, meta.body.errors?.[0]?.field]).toEqual([400, 'metadata.cav2']);
    const json = await ctx.http
      .post('/api/v1/payouts/batches')
      .set(auth())
      .send({
        rows: [
          payout,
          { ...payout, shopPaymentId: `${payout.shopPaymentId}-2`, metadata: { ref: PAN } },
        ],
      });
    expect([json.status, json.body.errors?.map((e: { field: string }) => e.field)]).toEqual([
      400,
      ['rows[2].metadata.ref'],
    ]);
    const csv = `${CSV_HEADER}\n${payout.shopPaymentId}-c,100.00,ps_amount,643,"${PAYOUT.card}",${PAN},"card ${PAN}"\n`;
    const csvRes = await ctx.http
      .post('/api/v1/payouts/batches')
      .set(auth())
      .type('text/csv')
      .send(csv);
    expect([csvRes.status, csvRes.body.errors?.map((e: { field: string }) => e.field)]).toEqual([
      400,
      ['rows[1].description'],
    ]);
    const stored = await db.query(
      `SELECT count(*)::int AS n FROM payouts WHERE shop_payment_id LIKE $1`,
      [`${payout.shopPaymentId}%`],
    );
    expect(stored.rows[0].n).toBe(0);
    // Nothing of it in any table.
    for (const table of ['invoices', 'refunds', 'payouts', 'payout_batch_rows', 'events']) {
      const found = await db.query(
        `SELECT count(*)::int AS n FROM ${table} t WHERE row_to_json(t)::text LIKE '%card ${PAN}%' OR row_to_json(t)::text LIKE '%to ${PAN}%'`,
      );
      expect([table, found.rows[0].n]).toEqual([table, 0]);
    }
  });
});

describe('every problem body carries its requestId, /admin included', () => {
  it.each([
    ['GET', '/admin/no-such-page'],
    ['GET', '/admin/nothing/here/either'],
    ['POST', '/admin/nope'],
    ['GET', '/api/v1/no-such-route'],
    ['GET', '/api/v1/admin/no-such-route'],
  ])('%s %s answered to a JSON client', async (method, path) => {
    const res = await rawRequest(ctx.url, method, path, {
      ...admin(),
      Accept: 'application/json',
      'X-Request-Id': 'hostile-3-req',
    });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(JSON.parse(res.body)).toMatchObject({ status: 404, requestId: 'hostile-3-req' });
  });
});

describe('the feed and the webhooks agree', () => {
  it('a key with every shop scope, and a read-only key, see reconciliation.completed; a payments key sees its types only', async () => {
    const rec = await ctx.http.post('/api/v1/admin/reconciliations').set(admin()).send({});
    expect(rec.status).toBe(201);
    for (const key of [SHOP_KEY, READ_KEY]) {
      const feed = await ctx.http
        .get('/api/v1/events')
        .query({ objectType: 'reconciliation', limit: 500 })
        .set(bearer(key));
      expect([key, feed.status]).toEqual([key, 200]);
      expect(feed.body.items.map((e: Json) => e.type)).toContain('reconciliation.completed');
    }
    const payments = await ctx.http
      .get('/api/v1/events')
      .query({ objectType: 'reconciliation' })
      .set(bearer(PAYMENTS_KEY));
    expect(payments.status).toBe(403);
    // What the webhooks were given is what the full key reads.
    const delivered = (
      await db.query(
        `SELECT DISTINCT e.entity_type AS t FROM webhook_deliveries d JOIN events e ON e.id = d.event_id`,
      )
    ).rows.map((r: { t: string }) => r.t);
    const all: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await ctx.http
        .get('/api/v1/events')
        .query({ limit: 500, ...(after ? { after } : {}) })
        .set(auth())
        .expect(200);
      if (res.body.items.length === 0) break;
      all.push(...res.body.items.map((e: Json) => String(e.objectType)));
      after = res.body.nextCursor;
    }
    for (const t of delivered) expect(all).toContain(t);
  });

  it('a feed read sees every event committed before it began, while a relay run holds the relay', async () => {
    const objectId = `feed-${randomUUID()}`;
    // An event committed now, not yet positioned.
    await db.query(
      `INSERT INTO events (entity_type, entity_id, from_status, to_status, cause, type, sequence, data)
       VALUES ('payout', $1, NULL, 'pending', 'api', 'payout.pending', 1, '{}')`,
      [objectId],
    );
    // Another reader's relay run in flight: it holds the relay lock.
    const holder = new Client({ connectionString: ctx.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1)', [RELAY_LOCK]);
      // The hand-written event has no object behind it: its empty data is not an answer's shape.
      const reads = [0, 1].map(() =>
        unvalidatedHttp(ctx).get('/api/v1/events').query({ objectId }).set(auth()),
      );
      await sleep(400);
      await holder.query('COMMIT');
      for (const res of await Promise.all(reads)) {
        expect(res.status).toBe(200);
        expect(res.body.items.map((e: Json) => e.objectId)).toEqual([objectId]);
      }
    } finally {
      await holder.end();
    }
  });
});
