// Seeds large tables for bench/large-tables.mjs: N shop events and M invoices in
// plain SQL with generate_series, in chunks (one statement each), into an already migrated
// database. Usage:
//   node bench/seed-large.mjs <DATABASE_URL> [events=1000000] [invoices=1000000] [shopId=4242]
// The rows look like a busy shop's last 80 days (inside RETENTION_EVENTS_DAYS): final invoices
// spread over time, one event per invoice in feed order with the invoice's view as its data.
import pg from 'pg';

const CHUNK = 100_000;

export async function seedLarge(databaseUrl, { events = 1_000_000, invoices = 1_000_000, shopId = 4242, log = () => undefined } = {}) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = Date.now();
  try {
    const tag = started.toString(36);
    for (let from = 1; from <= invoices; from += CHUNK) {
      const to = Math.min(invoices, from + CHUNK - 1);
      await client.query(
        `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, gateway_status, invoice_id, payment_id,
                amount, currency, payway, description, payer_price, ps_currency, pay_token, created_at, updated_at, processed_at)
         SELECT $3, 'seed-' || $4 || '-' || i, md5(i::text) || md5($4 || i::text),
                (ARRAY['succeeded','succeeded','succeeded','rejected','awaiting_payer'])[1 + i % 5],
                (ARRAY[4,4,4,6,2])[1 + i % 5], 100000000 + i, 200000000 + i,
                ((1 + i % 50000)::numeric / 100), 643, 'card_core_payin_rub', 'Seeded order',
                ((1 + i % 50000)::numeric / 100) * 1.03, 643, md5('t' || i::text),
                t, t, t
           FROM generate_series($1::int, $2::int) i,
                LATERAL (SELECT now() - interval '80 days' * (1 - i::float8 / $5)) c(t)`,
        [from, to, shopId, tag, invoices],
      );
      log(`invoices ${to}/${invoices}`);
    }
    const [{ base }] = (await client.query(`SELECT COALESCE(MAX(position), 0)::bigint AS base FROM events`)).rows;
    for (let from = 1; from <= events; from += CHUNK) {
      const to = Math.min(events, from + CHUNK - 1);
      await client.query(
        `INSERT INTO events (entity_type, entity_id, from_status, to_status, cause, type, sequence, data, position, created_at)
         SELECT 'invoice', 'seed-ev-' || $4 || '-' || i, 'awaiting_payer', 'succeeded', 'notification', 'invoice.succeeded', 1,
                jsonb_build_object('shopOrderId', 'seed-ev-' || $4 || '-' || i, 'invoiceId', (100000000 + i)::text,
                  'paymentId', (200000000 + i)::text, 'status', 'succeeded', 'gatewayStatus', 4,
                  'amount', ((1 + i % 50000)::numeric / 100)::text, 'currency', 643, 'currencyCode', 'RUB',
                  'payway', 'card_core_payin_rub', 'description', 'Seeded order', 'twoStep', false, 'metadata', '{}'::jsonb,
                  'refundedAmount', '0.00', 'refundPendingAmount', '0.00', 'refundStatus', 'none',
                  'needsAttention', false, 'attentionReason', null,
                  'createdAt', to_char(t, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'updatedAt', to_char(t, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
                $3::bigint + i, t
           FROM generate_series($1::int, $2::int) i,
                LATERAL (SELECT now() - interval '80 days' * (1 - i::float8 / $5)) c(t)`,
        [from, to, base, tag, events],
      );
      log(`events ${to}/${events}`);
    }
    await client.query('VACUUM ANALYZE invoices');
    await client.query('VACUUM ANALYZE events');
    return { seconds: (Date.now() - started) / 1000 };
  } finally {
    await client.end();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [url, events, invoices, shopId] = process.argv.slice(2);
  if (!url) {
    console.error('usage: node bench/seed-large.mjs <DATABASE_URL> [events] [invoices] [shopId]');
    process.exit(2);
  }
  const r = await seedLarge(url, {
    events: events ? Number(events) : undefined,
    invoices: invoices ? Number(invoices) : undefined,
    shopId: shopId ? Number(shopId) : undefined,
    log: (m) => console.log(m),
  });
  console.log(`seeded in ${r.seconds.toFixed(1)} s`);
}
