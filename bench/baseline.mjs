// The benchmark's baseline (npm run bench): a bare Node server with node:http and pg, no Nest, no
// TypeORM, doing per request the durable work of the service route it stands beside. What the
// service does beyond this (validation, idempotency, audit, state machine, events) is what the
// ratio of the two prices. Three routes:
//
// - POST /api/v1/invoices (P1, P2's reference): insert the row, call the same gateway
//   (invoice/create, signed), write its answer onto the row, reply 201.
// - POST /webhooks/gateway (P3): verify the notification's signature as the service does (spec,
//   Events), then in one transaction store the raw notification (deduplicated on what the
//   signature covers, so a redelivery lands on the same row) and move the invoice
//   awaiting_payer → succeeded; reply 200 OK.
// - GET /api/v1/invoices/{shopOrderId} (READ): the primary-key read of the service's own
//   `invoices` row (the run points this process at the service's database) and its JSON view.
//
// With BASELINE_RECORD=1 the two writing routes also keep what the service keeps of them (an
// information row of the bench, not a goal's reference): a create stores its whole answer (the
// object's view, for an exact replay) and, in the statement that writes the gateway's answer, an
// event row holding that view (the feed's and the webhooks' record); a notification's invoice
// change writes its event row, with the row as JSON, and the payment's ledger entry (one row
// with its two legs) in the same statement. What the ratio to
// this variant leaves is the price of the rest: framework, validation, idempotency checks, state
// machine, audit details.
//
// Settings by env: PORT, DATABASE_URL, API_KEY, GATEWAY_BASE_URL, GATEWAY_SHOP_ID,
// GATEWAY_SECRET_KEY, PUBLIC_BASE_URL, DB_POOL_SIZE (default 20, the service's default pool),
// BASELINE_RECORD (above).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import pg from 'pg';

const env = process.env;
const shopId = Number(env.GATEWAY_SHOP_ID);
const secret = env.GATEWAY_SECRET_KEY;
const gateway = new URL('invoice/create', env.GATEWAY_BASE_URL);
const publicBaseUrl = env.PUBLIC_BASE_URL;
const webhookUrl = `${publicBaseUrl}/webhooks/gateway`;
const bearer = Buffer.from(`Bearer ${env.API_KEY}`, 'utf8');
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DB_POOL_SIZE ?? 20) });
const agent = new Agent({ keepAlive: true });
const SIGNED = ['amount', 'currency', 'payway', 'shop_id', 'shop_order_id'];
const RECORD = env.BASELINE_RECORD === '1';

await pool.query(`CREATE TABLE IF NOT EXISTS baseline_invoices (
  id bigserial PRIMARY KEY,
  shop_order_id text NOT NULL UNIQUE,
  amount numeric NOT NULL,
  currency integer NOT NULL,
  payway text NOT NULL,
  status text NOT NULL,
  invoice_id bigint,
  payment_id bigint,
  client_price numeric,
  answer jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  processed_at timestamptz,
  response_body jsonb)`);
await pool.query(`CREATE TABLE IF NOT EXISTS baseline_events (
  id bigserial PRIMARY KEY,
  entity_id text NOT NULL,
  type text NOT NULL,
  view jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now())`);
// BASELINE_RECORD: a payment's double entry, one row with its legs (as the service keeps it).
await pool.query(`CREATE TABLE IF NOT EXISTS baseline_ledger (
  id bigserial PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  kind text NOT NULL,
  object_id text NOT NULL,
  legs jsonb NOT NULL,
  UNIQUE (object_id, kind))`);
await pool.query(`CREATE TABLE IF NOT EXISTS baseline_notifications (
  id bigserial PRIMARY KEY,
  content_key char(64) NOT NULL UNIQUE,
  payload jsonb NOT NULL,
  shop_order_id text,
  delivery_count integer NOT NULL DEFAULT 1,
  received_at timestamptz NOT NULL DEFAULT now(),
  last_received_at timestamptz NOT NULL DEFAULT now())`);

function sign(body) {
  const text = [...SIGNED].sort().map((k) => String(body[k])).join(':');
  return createHash('sha256').update(text + secret, 'utf8').digest('hex');
}

/** Constant-time comparison of two strings; unequal lengths are unequal at the same cost. */
function sameText(a, b) {
  const x = Buffer.isBuffer(a) ? a : Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  if (x.length !== y.length) {
    timingSafeEqual(x, x);
    return false;
  }
  return timingSafeEqual(x, y);
}

function callGateway(body) {
  const text = JSON.stringify({ ...body, sign: sign(body) });
  return new Promise((resolve, reject) => {
    const req = request(
      gateway,
      { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) } },
      (res) => {
        let out = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (out += c));
        res.on('end', () => {
          try {
            resolve(JSON.parse(out));
          } catch (e) {
            reject(e);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (text += c));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

function reply(res, status, body) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const type = typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

class Refused extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// ------------------------------------------------------------------ POST /api/v1/invoices

async function createInvoice(dto) {
  const { rows } = await pool.query(
    `INSERT INTO baseline_invoices (shop_order_id, amount, currency, payway, status) VALUES ($1, $2, $3, $4, 'pending') RETURNING id`,
    [dto.shopOrderId, dto.amount, dto.currency, dto.payway],
  );
  const answer = await callGateway({
    shop_id: shopId,
    shop_order_id: dto.shopOrderId,
    amount: dto.amount,
    currency: dto.currency,
    payway: dto.payway,
    description: dto.description,
    callback_url: webhookUrl,
    callback_rejected_url: webhookUrl,
  });
  const status = answer.result === true ? 'awaiting_payer' : 'unknown';
  if (RECORD) {
    const view = createdView(dto, status, answer);
    await pool.query({
      name: 'answer-with-event',
      text: `WITH u AS (
               UPDATE baseline_invoices SET status = $2, invoice_id = $3, answer = $4, response_body = $5, updated_at = now()
                WHERE id = $1 RETURNING shop_order_id)
             INSERT INTO baseline_events (entity_id, type, view) SELECT shop_order_id, $6, $5 FROM u`,
      values: [rows[0].id, status, answer.data?.id ?? null, answer, view, `invoice.${status}`],
    });
    return view;
  }
  await pool.query(
    `UPDATE baseline_invoices SET status = $2, invoice_id = $3, answer = $4, updated_at = now() WHERE id = $1`,
    [rows[0].id, status, answer.data?.id ?? null, answer],
  );
  return { shopOrderId: dto.shopOrderId, status, amount: dto.amount, currency: dto.currency, invoiceId: answer.data?.id ?? null };
}

/** A created invoice's view with the service's fields (BASELINE_RECORD: its answer and its event). */
function createdView(dto, status, answer) {
  const now = new Date().toISOString();
  const redirect = answer.data?.data ? { url: answer.data.url ?? null, method: answer.data.method ?? null, params: answer.data.data } : null;
  return {
    shopOrderId: dto.shopOrderId,
    invoiceId: answer.data?.id ?? null,
    paymentId: null,
    status,
    gatewayStatus: answer.data?.status ?? null,
    amount: dto.amount,
    currency: dto.currency,
    currencyCode: CURRENCY_CODES.get(dto.currency) ?? null,
    payway: dto.payway,
    description: dto.description ?? null,
    twoStep: false,
    metadata: {},
    payerPrice: null,
    psCurrency: null,
    refundedAmount: '0',
    refundPendingAmount: '0',
    refundableAmount: '0',
    refundStatus: 'none',
    redirect,
    payUrl: redirect ? `${publicBaseUrl}/pay/${encodeURIComponent(dto.shopOrderId)}?t=${randomBytes(24).toString('base64url')}` : null,
    paymentToken: null,
    createdAt: now,
    updatedAt: now,
    processedAt: null,
    holdExpiresAt: null,
    needsAttention: false,
    attentionReason: null,
  };
}

// ------------------------------------------------------------------ POST /webhooks/gateway

/**
 * The notification's sign string (spec, Events rule 2; dist/src/gateway/notification-signature.js):
 * every key but `sign` whose value is neither null nor empty, sorted, values joined with `:`.
 * Values are taken as text; the service keeps a JSON number's own digits (lossless parse), which
 * is the same text for the string-valued bodies the gateway sends and the bench replays.
 */
function signString(fields) {
  return Object.keys(fields)
    .filter((k) => k !== 'sign' && fields[k] !== null && fields[k] !== '')
    .sort()
    .map((k) => (typeof fields[k] === 'string' ? fields[k] : JSON.stringify(fields[k])))
    .join(':');
}

async function applyNotification(text) {
  const fields = JSON.parse(text);
  if (typeof fields.sign !== 'string') throw new Refused(400, 'missing sign');
  if (fields.shop_id !== String(shopId)) throw new Refused(400, 'not our shop');
  const expected = createHash('sha256').update(signString(fields) + secret, 'utf8').digest('hex');
  if (!sameText(expected, fields.sign.toLowerCase())) throw new Refused(400, 'bad sign');
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // The digest is the dedupe key: the same signed content is the same notification.
    await client.query(
      `INSERT INTO baseline_notifications (content_key, payload, shop_order_id) VALUES ($1, $2, $3)
       ON CONFLICT (content_key) DO UPDATE
         SET delivery_count = baseline_notifications.delivery_count + 1, last_received_at = now()`,
      [expected, text, fields.shop_order_id],
    );
    // Values checked against the invoice in the same statement; a redelivery changes nothing.
    if (fields.status === 'success' && RECORD) {
      await client.query({
        name: 'succeed-with-event',
        text: `WITH u AS (
                 UPDATE baseline_invoices
                    SET status = 'succeeded', payment_id = $3, client_price = $4, updated_at = now(), processed_at = now()
                  WHERE shop_order_id = $1 AND status = 'awaiting_payer' AND amount = $2::numeric
                  RETURNING *),
               e AS (INSERT INTO baseline_events (entity_id, type, view)
                 SELECT shop_order_id, 'invoice.succeeded', to_jsonb(u) - 'answer' - 'response_body' FROM u)
               INSERT INTO baseline_ledger (kind, object_id, legs)
               SELECT 'invoice.succeeded', shop_order_id, jsonb_build_array(
                 jsonb_build_object('account', 'gateway_payment_shop', 'currency', currency, 'amount', amount),
                 jsonb_build_object('account', 'sales', 'currency', currency, 'amount', -amount)) FROM u
               ON CONFLICT DO NOTHING`,
        values: [fields.shop_order_id, fields.shop_amount, fields.payment_id, fields.client_price],
      });
    } else if (fields.status === 'success') {
      await client.query(
        `UPDATE baseline_invoices
            SET status = 'succeeded', payment_id = $3, client_price = $4, updated_at = now(), processed_at = now()
          WHERE shop_order_id = $1 AND status = 'awaiting_payer' AND amount = $2::numeric`,
        [fields.shop_order_id, fields.shop_amount, fields.payment_id, fields.client_price],
      );
    }
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

// ------------------------------------------------------------------ GET /api/v1/invoices/{id}

const CURRENCY_CODES = new Map([
  [643, 'RUB'],
  [840, 'USD'],
  [978, 'EUR'],
]);

/** `value` (a numeric's text) written with `scale` fraction digits, as text: no float on money. */
function withScale(value, scale) {
  const [whole, fraction = ''] = value.split('.');
  return scale === 0 ? whole : `${whole}.${fraction.padEnd(scale, '0').slice(0, scale)}`;
}

async function readInvoice(shopOrderId) {
  const { rows } = await pool.query({
    name: 'read-invoice',
    text: `SELECT shop_order_id, invoice_id, payment_id, status, gateway_status, amount, currency, payway, description,
                  two_step, metadata, payer_price, ps_currency, refunded_amount, refund_pending_amount, disputed_amount, redirect,
                  pay_token, payment_token IS NOT NULL AS has_token, payment_token_info, created_at, updated_at,
                  processed_at, hold_expires_at, needs_attention, attention_reason
             FROM invoices WHERE shop_id = $1 AND shop_order_id = $2`,
    values: [shopId, shopOrderId],
  });
  const r = rows[0];
  if (r === undefined) return null;
  const scale = r.amount.includes('.') ? r.amount.length - r.amount.indexOf('.') - 1 : 0;
  const info = r.payment_token_info;
  // Only a succeeded invoice is refundable; the bench's rows are not, so no decimal arithmetic.
  const refundable = r.status === 'succeeded' && r.refunded_amount === '0' && r.refund_pending_amount === '0' && r.disputed_amount === '0' ? r.amount : '0';
  return {
    shopOrderId: r.shop_order_id,
    invoiceId: r.invoice_id,
    paymentId: r.payment_id,
    status: r.status,
    gatewayStatus: r.gateway_status,
    amount: r.amount,
    currency: r.currency,
    currencyCode: CURRENCY_CODES.get(r.currency) ?? null,
    payway: r.payway,
    description: r.description,
    twoStep: r.two_step,
    metadata: r.metadata ?? {},
    payerPrice: r.payer_price,
    psCurrency: r.ps_currency,
    refundedAmount: withScale(r.refunded_amount, scale),
    refundPendingAmount: withScale(r.refund_pending_amount, scale),
    disputedAmount: withScale(r.disputed_amount, scale),
    refundableAmount: withScale(refundable, scale),
    refundStatus: r.refunded_amount === '0' ? 'none' : 'partial',
    redirect: r.redirect,
    payUrl: r.redirect ? `${publicBaseUrl}/pay/${encodeURIComponent(r.shop_order_id)}?t=${r.pay_token}` : null,
    paymentToken: r.has_token || info ? { account: info?.account ?? null, expiresAt: info?.expiresAt ?? null } : null,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    processedAt: r.processed_at ? r.processed_at.toISOString() : null,
    holdExpiresAt: r.hold_expires_at ? r.hold_expires_at.toISOString() : null,
    needsAttention: r.needs_attention,
    attentionReason: r.attention_reason,
  };
}

// ------------------------------------------------------------------ server

function route(req) {
  const path = req.url.split('?')[0];
  if (req.method === 'POST' && path === '/webhooks/gateway') {
    return readBody(req)
      .then(applyNotification)
      .then(() => [200, 'OK']);
  }
  // The shop routes check the key (constant time), as any script facing the internet must.
  if (path.startsWith('/api/v1/') && !sameText(bearer, req.headers.authorization ?? '')) return Promise.resolve([401, { title: 'Unauthorized' }]);
  if (req.method === 'POST' && path === '/api/v1/invoices') {
    return readBody(req)
      .then((text) => createInvoice(JSON.parse(text)))
      .then((view) => [201, view]);
  }
  if (req.method === 'GET' && path.startsWith('/api/v1/invoices/') && path.indexOf('/', 17) < 0) {
    return readInvoice(decodeURIComponent(path.slice(17))).then((view) => (view ? [200, view] : [404, { title: 'Not found' }]));
  }
  return Promise.resolve([404, { title: 'Not found' }]);
}

const server = createServer((req, res) => {
  route(req).then(
    ([status, body]) => reply(res, status, body),
    (e) => reply(res, e instanceof Refused ? e.status : 500, { title: 'failed', detail: e.message }),
  );
});
server.keepAliveTimeout = 65_000;
server.listen(Number(env.PORT), '127.0.0.1', () => console.log(`baseline listening on ${env.PORT}`));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
