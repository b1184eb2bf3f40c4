// READ: GET /invoices/{id} over seeded rows against the bare baseline reading the same rows.
import { createDatabase, stopProcess, withClient } from '../support.mjs';
import { atLeast, cpuRow, failures, fmt, loadFigure, ratioOf, syscallRow } from '../lib/format.mjs';
import { auth, warmAndLoad } from '../lib/load.mjs';
import { dbServer, migrate, startBaseline, startService } from '../lib/processes.mjs';
import { DURATION_S, PAYMENT_PAYWAY, READ_INVOICES, SEEDED_CHECKS, SHOP_ID } from '../lib/settings.mjs';
import { details, row } from '../lib/state.mjs';

/** One invoice's view from `url`, its payUrl's origin (each server's own address) left out. */
export async function viewOf(url, shopOrderId) {
  const res = await fetch(`${url}/api/v1/invoices/${shopOrderId}`, { headers: auth });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}/api/v1/invoices/${shopOrderId}: ${res.status} ${text.slice(0, 300)}`);
  const view = JSON.parse(text);
  if (typeof view.payUrl === 'string') view.payUrl = view.payUrl.replace(/^https?:\/\/[^/]+/, '');
  return view;
}

/**
 * GET /api/v1/invoices/{shopOrderId} of random ids among READ_INVOICES seeded rows: the bare
 * baseline reads the very same rows (this database, by primary key) and writes their view.
 */
export async function seededReadDatabase(name) {
  const db = await createDatabase(dbServer.serverUrl, name);
  await migrate(db);
  // Rows as a create leaves them awaiting the payer: gateway ids, a redirect (so a payUrl), answer.
  await withClient(db, (c) =>
    c.query(
      `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, gateway_status, invoice_id, amount, currency, payway,
         description, pay_token, redirect, response_code, response_body, next_check_at, check_deadline)
       SELECT $1, 'read-' || g, md5(g::text) || md5(g::text), 'awaiting_payer', 2, 600000000 + g, '100.00', 643, $2,
              'Bench order', md5('t' || g), jsonb_build_object('method', 'GET', 'url', 'https://pay.example/' || g, 'params', '{}'::jsonb),
              201, '{}', ${SEEDED_CHECKS}
         FROM generate_series(0, $3 - 1) g`,
      [SHOP_ID, PAYMENT_PAYWAY, READ_INVOICES],
    ),
  );
  // The day's books as a steady day has them: reconciled already (here: claimed by another
  // instance for a day). Otherwise the service's start would reconcile the due day over these
  // rows while the reads are measured, asking the gateway about each of them (invoice/check,
  // which the sandbox answers "absent"): a daily job's work priced as the reads'.
  await withClient(db, (c) =>
    c.query(
      `INSERT INTO reconciliation_days (date, lease_until)
         SELECT d::date, now() + interval '1 day' FROM generate_series(current_date - 1, current_date, interval '1 day') d
       ON CONFLICT DO NOTHING`,
    ),
  );
  await withClient(db, (c) => c.query('ANALYZE invoices'));
  return db;
}

export const readLoad = () => ({
  connections: 64,
  durationS: DURATION_S,
  method: 'GET',
  headers: auth,
  path: '/api/v1/invoices/read-0',
  pathOf: () => `/api/v1/invoices/read-${Math.floor(Math.random() * READ_INVOICES)}`,
});

export async function reads() {
  const db = await seededReadDatabase('bench_read');
  const opts = readLoad();
  const baseline = await startBaseline(db);
  const baseView = await viewOf(baseline.url, 'read-0');
  const b = await warmAndLoad(baseline.url, { ...opts, pid: baseline.pid });
  await stopProcess(baseline);
  row('baseline: bare node:http + pg, GET /invoices/{id}, 64 conn', loadFigure(b), 'reference', '', null);

  const service = await startService(db);
  const view = await viewOf(service.url, 'read-0');
  const r = await warmAndLoad(service.url, { ...opts, pid: service.pid });
  await stopProcess(service);
  // The baseline must write what the service writes, or the ratio compares different work.
  const differing = Object.keys({ ...view, ...baseView }).filter((k) => JSON.stringify(view[k]) !== JSON.stringify(baseView[k]));
  details.read = { ...r, invoices: READ_INVOICES, viewsDiffer: differing, baseline: b };
  const ratio = ratioOf(r.rps, b.rps);
  const note = differing.length > 0 ? `; views differ in ${differing.join(', ')}` : '';
  row(`READ GET /invoices/{id}, ${fmt(READ_INVOICES)} rows, 64 conn: req/s`, `${fmt(r.rps)} vs ${fmt(b.rps)} req/s, p99 ${fmt(r.p99)} vs ${fmt(b.p99)} ms${failures(r)}${note}`, '≥ 1.5 × baseline', atLeast(ratio), ratio !== null && ratio >= 1.5 && differing.length === 0);
  cpuRow('READ', r, b);
  syscallRow('READ', [['READ', r, b]]);
}
