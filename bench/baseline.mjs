// The benchmark's baseline (npm run bench): a bare Node server with node:http and pg, no Nest, no
// TypeORM, doing the durable work of POST /api/v1/invoices per request: insert the row, call the
// same gateway (invoice/create, signed), write its answer onto the row, reply 201. What the
// service does beyond this (validation, idempotency, audit, state machine) is what the ratio
// of the two prices.
//
// Settings by env: PORT, DATABASE_URL, GATEWAY_BASE_URL, GATEWAY_SHOP_ID, GATEWAY_SECRET_KEY,
// PUBLIC_BASE_URL, DB_POOL_SIZE (default 20, the service's default pool).
import { createHash } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import pg from 'pg';

const env = process.env;
const shopId = Number(env.GATEWAY_SHOP_ID);
const secret = env.GATEWAY_SECRET_KEY;
const gateway = new URL('invoice/create', env.GATEWAY_BASE_URL);
const webhookUrl = `${env.PUBLIC_BASE_URL}/webhooks/gateway`;
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DB_POOL_SIZE ?? 20) });
const agent = new Agent({ keepAlive: true });
const SIGNED = ['amount', 'currency', 'payway', 'shop_id', 'shop_order_id'];

await pool.query(`CREATE TABLE IF NOT EXISTS baseline_invoices (
  id bigserial PRIMARY KEY,
  shop_order_id text NOT NULL UNIQUE,
  amount numeric NOT NULL,
  currency integer NOT NULL,
  payway text NOT NULL,
  status text NOT NULL,
  invoice_id bigint,
  answer jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now())`);

function sign(body) {
  const text = [...SIGNED].sort().map((k) => String(body[k])).join(':');
  return createHash('sha256').update(text + secret, 'utf8').digest('hex');
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
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

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
  await pool.query(
    `UPDATE baseline_invoices SET status = $2, invoice_id = $3, answer = $4, updated_at = now() WHERE id = $1`,
    [rows[0].id, status, answer.data?.id ?? null, answer],
  );
  return { shopOrderId: dto.shopOrderId, status, amount: dto.amount, currency: dto.currency, invoiceId: answer.data?.id ?? null };
}

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/api/v1/invoices') return reply(res, 404, { title: 'Not found' });
  readBody(req)
    .then((text) => createInvoice(JSON.parse(text)))
    .then(
      (view) => reply(res, 201, view),
      (e) => reply(res, 502, { title: 'failed', detail: e.message }),
    );
});
server.keepAliveTimeout = 65_000;
server.listen(Number(env.PORT), '127.0.0.1', () => console.log(`baseline listening on ${env.PORT}`));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
