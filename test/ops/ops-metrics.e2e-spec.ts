import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { parse } from 'yaml';
import { raiseAttention } from '../../src/common/attention';
import { WebhookDispatcher } from '../../src/events/webhook-dispatcher';
import { STATE_GAUGES_SQL } from '../../src/metrics/state-gauges';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { admin, auth, PAYOUT_SHOP_ID, startTestApp, TestContext } from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';
import { exposedSeries, matcherLabels, metricNames } from '../support/promql-names';
import { eventually, WebhookReceiver } from '../support/webhook-receiver';

/**
 * The alert rules and the dashboard that ship in ops/ read metrics the service really
 * exports (with the labels they match on), and the new operations metrics tell the truth:
 * attention open and oldest, payout poll lateness and overdue, the pool, readiness.
 */
const ROOT = process.cwd();
const WHSEC = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
/** Series Prometheus makes itself for every target; the service cannot export them. */
const PROMETHEUS_OWN = new Set(['up']);
/** Labels Prometheus adds to every scraped series (the scrape job's target labels). */
const TARGET_LABELS = new Set(['job', 'instance']);

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const rules = (): Rule[] =>
  (
    parse(readFileSync(join(ROOT, 'ops/prometheus/alerts.yml'), 'utf8')) as {
      groups: Array<{ rules: Rule[] }>;
    }
  ).groups.flatMap((g) => g.rules);

interface Panel {
  title: string;
  type: string;
  targets?: Array<{ expr: string }>;
}

const dashboard = (): {
  panels: Panel[];
  templating: { list: Array<{ definition?: string }> };
} => JSON.parse(readFileSync(join(ROOT, 'ops/grafana/payments.json'), 'utf8')) as never;

/** Every PromQL expression that ships, with where it comes from. */
function shippedQueries(): Array<{ where: string; expr: string }> {
  const fromRules = rules().map((r) => ({ where: `alerts.yml ${r.alert}`, expr: r.expr }));
  const d = dashboard();
  const fromPanels = d.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `payments.json "${p.title}"`, expr: t.expr })),
  );
  // label_values(metric, label): the metric part only.
  const fromVariables = d.templating.list.flatMap((v) => {
    const m = /label_values\(\s*([A-Za-z_:][\w:]*)\s*,/.exec(v.definition ?? '');
    return m ? [{ where: 'payments.json variable', expr: m[1] }] : [];
  });
  return [...fromRules, ...fromPanels, ...fromVariables];
}

describe('the PromQL name tokenizer', () => {
  it('finds metric names and leaves functions, keywords, labels, ranges and variables out', () => {
    expect(
      metricNames(
        'histogram_quantile(0.9, sum by (le, path) (rate(a_bucket{job=~"$job",x="y z"}[$__rate_interval]))) > 120',
      ),
    ).toEqual(['a_bucket']);
    expect(
      metricNames(
        'max by (job, instance) (b) > 0 and on (job, instance) max without (state) (c{state="idle"}) == 0 unless d offset 5m',
      ).sort(),
    ).toEqual(['b', 'c', 'd']);
    expect(metricNames('absent(service_ready{job="payments"} == 1)')).toEqual(['service_ready']);
    expect(metricNames('sum(x) / ignoring(state) group_left(path) y_total * 1e3')).toEqual([
      'x',
      'y_total',
    ]);
    expect(matcherLabels('sum(rate(g_count{outcome!~"ok|x", path="a{b}"}[5m]))')).toEqual([
      { metric: 'g_count', labels: ['outcome', 'path'] },
    ]);
  });
});

describe('the shipped alert rules', () => {
  const docs = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
  const tests = parse(readFileSync(join(ROOT, 'ops/prometheus/alerts.test.yml'), 'utf8')) as {
    tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
  };
  const cases = tests.tests.flatMap((t) => t.alert_rule_test);

  it.each(rules().map((r) => [r.alert, r] as const))(
    '%s: for, severity, summary, description, a runbook in docs/operations.md, a firing and a quiet test',
    (name, rule) => {
      expect(rule.for).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning']).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary).toBeTruthy();
      expect(rule.annotations?.description).toBeTruthy();
      const anchor = name.toLowerCase();
      expect(rule.annotations?.runbook_url).toBe(`docs/operations.md#${anchor}`);
      // A GitHub-style anchor: the runbook's heading is the alert's name.
      expect(docs).toMatch(new RegExp(`^### ${name}$`, 'm'));
      const own = cases.filter((c) => c.alertname === name);
      expect(own.some((c) => c.exp_alerts.length > 0)).toBe(true);
      expect(own.some((c) => c.exp_alerts.length === 0)).toBe(true);
    },
  );
});

describe('/metrics against the shipped rules and dashboard', () => {
  let ctx: TestContext;
  let db: Client;
  const receiver = new WebhookReceiver();
  let seq = 0;
  const newId = (p: string): string => `${p}-${Date.now()}-${++seq}`;

  beforeAll(async () => {
    await receiver.start();
    ctx = await startTestApp({
      env: {
        SHOP_WEBHOOK_URL: receiver.url,
        SHOP_WEBHOOK_SECRET: WHSEC,
        DB_POOL_SIZE: '7',
        // Low enough that a few payer-page requests meet it (rate_limited_total{limit}).
        RATE_LIMIT_PUBLIC_PER_IP_RPS: '1',
        PAYOUT_POLL_INTERVAL_S: '30',
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

  async function scrape(): Promise<string> {
    const res = await ctx.http.get('/metrics');
    expect(res.status).toBe(200);
    return res.text;
  }

  function value(text: string, name: string, labels: Record<string, string> = {}): number | null {
    const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    for (const line of text.split('\n')) {
      if (!line.startsWith(name)) continue;
      const m = /^([\w:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!m || m[1] !== name) continue;
      const have = (m[2] ?? '').split(',');
      if (want.every((w) => have.includes(w))) return Number(m[3]);
    }
    return null;
  }

  /**
   * A little of everything: requests, gateway calls, a notification, a delivered event, a payout,
   * payer-page requests past the per-address limit, an attention flag raised the one way flags
   * are raised.
   */
  async function traffic(): Promise<string> {
    const shopOrderId = newId('ops-inv');
    const invoice = await ctx.http.post('/api/v1/invoices').set(auth()).send({
      shopOrderId,
      amount: '100.00',
      currency: 643,
      payway: PAYMENT.cardSuccess,
    });
    expect(invoice.status).toBe(201);
    const payoutId = newId('ops-po');
    const payout = await ctx.http.post('/api/v1/payouts').set(auth()).send({
      shopPaymentId: payoutId,
      amount: '1000.00',
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: PAYOUT.card,
      account: '4111111111111111',
    });
    expect(payout.status).toBe(202);
    const forged = await ctx.http
      .post('/webhooks/gateway?type=invoice')
      .set('content-type', 'application/json')
      .send(
        JSON.stringify({
          shop_id: '2001',
          shop_invoice_id: 'x',
          status: 'success',
          sign: 'forged',
        }),
      );
    expect(forged.status).toBeGreaterThanOrEqual(400);
    const pages = [];
    for (let i = 0; i < 5; i += 1) pages.push((await ctx.http.get(`/pay/${shopOrderId}`)).status);
    expect(pages).toContain(429);
    await ctx.service.app.get(DataSource).transaction(async (m) => {
      const [row] = (await m.query('SELECT id FROM invoices WHERE shop_order_id = $1', [
        shopOrderId,
      ])) as Array<{
        id: string;
      }>;
      await raiseAttention(
        m,
        { object: 'invoice', id: row.id, shopId: shopOrderId, status: 'succeeded' },
        'mismatch',
        'ops metrics test',
        'reconciliation',
      );
    });
    await eventually(
      async () => {
        await ctx.service.app.get(WebhookDispatcher).runOnce();
        expect(receiver.received.length).toBeGreaterThan(0);
      },
      20000,
      50,
    );
    return payoutId;
  }

  it('every metric and matcher label in alerts.yml and payments.json is exported', async () => {
    await traffic();
    // The books' series exist once a reconciliation has run (per currency of the agent shop).
    expect((await ctx.http.post('/api/v1/admin/reconciliations').set(admin()).send({})).status).toBe(201);
    const series = exposedSeries(await scrape());
    const missing: string[] = [];
    for (const { where, expr } of shippedQueries()) {
      for (const name of metricNames(expr))
        if (!PROMETHEUS_OWN.has(name) && !series.has(name)) missing.push(`${where}: ${name}`);
      for (const { metric, labels } of matcherLabels(expr)) {
        if (PROMETHEUS_OWN.has(metric)) continue;
        for (const label of labels)
          if (!TARGET_LABELS.has(label) && !series.get(metric)?.has(label))
            missing.push(`${where}: ${metric}{${label}}`);
      }
    }
    expect(missing).toEqual([]);
    // The tokenizer really saw the queries (an empty result would pass the check above).
    const all = new Set(shippedQueries().flatMap((q) => metricNames(q.expr)));
    for (const name of [
      'payments_attention_oldest_seconds',
      'payout_poll_lateness_seconds_bucket',
      'gateway_call_duration_seconds_count',
      'db_pool_waiting_requests',
      'service_ready',
      'shop_webhook_deliveries_total',
      'gateway_notifications_total',
      'http_request_duration_seconds_bucket',
    ])
      expect(all).toContain(name);
  });

  it('attention open/oldest, payout poll overdue and lateness, pool and readiness tell the truth', async () => {
    const payoutId = await traffic();
    // Let the state gauges' cache of any earlier scrape run out.
    await new Promise((r) => setTimeout(r, 5100));
    // One flagged invoice, flagged 10 minutes ago.
    await db.query(
      `UPDATE invoices SET needs_attention = false, attention_reason = NULL, attention_at = NULL`,
    );
    await db.query(
      `UPDATE invoices SET needs_attention = true, attention_reason = 'deadline: test',
              attention_at = now() - interval '10 minutes'
        WHERE id = (SELECT id FROM invoices ORDER BY created_at LIMIT 1)`,
    );
    await db.query(
      `UPDATE payouts SET next_poll_at = now() - interval '40 seconds', lease_until = NULL
        WHERE shop_payment_id = $1`,
      [payoutId],
    );
    // Another gateway shop's due payout: the poller never claims it, so it is not "overdue".
    await db.query(
      `UPDATE payouts SET shop_id = $2, next_poll_at = now() - interval '3 hours'
        WHERE id = (SELECT id FROM payouts WHERE shop_payment_id <> $1 ORDER BY created_at LIMIT 1)`,
      [payoutId, PAYOUT_SHOP_ID + 77],
    );

    const first = await scrape();
    expect(value(first, 'payments_attention_open', { object: 'invoice' })).toBe(1);
    expect(
      value(first, 'payments_attention_oldest_seconds', { object: 'invoice' }),
    ).toBeGreaterThanOrEqual(600);
    expect(value(first, 'payments_attention_oldest_seconds', { object: 'invoice' })).toBeLessThan(
      700,
    );
    expect(value(first, 'payments_attention_open', { object: 'refund' })).toBe(0);
    expect(value(first, 'payments_attention_oldest_seconds', { object: 'payout' })).toBe(0);
    const overdue = value(first, 'payout_poll_overdue_seconds');
    expect(overdue).toBeGreaterThanOrEqual(40);
    expect(overdue).toBeLessThan(120);
    expect(value(first, 'db_pool_max_connections')).toBe(7);
    expect(value(first, 'db_pool_connections', { state: 'open' })).toBeGreaterThanOrEqual(1);
    expect(value(first, 'db_pool_connections', { state: 'open' })).toBeLessThanOrEqual(7);
    expect(value(first, 'db_pool_waiting_requests')).toBe(0);
    expect(value(first, 'service_ready')).toBe(1);

    const countBefore = value(first, 'payout_poll_lateness_seconds_count') ?? 0;
    const sumBefore = value(first, 'payout_poll_lateness_seconds_sum') ?? 0;
    expect(await ctx.service.app.get(PayoutPoller).runOnce()).toBeGreaterThanOrEqual(1);
    const second = await scrape();
    expect(value(second, 'payout_poll_lateness_seconds_count')).toBe(countBefore + 1);
    const late = (value(second, 'payout_poll_lateness_seconds_sum') ?? 0) - sumBefore;
    expect(late).toBeGreaterThanOrEqual(40);
    expect(late).toBeLessThan(120);
    expect(value(second, 'payout_poll_lateness_seconds_bucket', { le: '30' })).toBe(
      value(first, 'payout_poll_lateness_seconds_bucket', { le: '30' }),
    );
    expect(value(second, 'payout_poll_lateness_seconds_bucket', { le: '60' })).toBe(
      (value(first, 'payout_poll_lateness_seconds_bucket', { le: '60' }) ?? 0) + 1,
    );
    // Within the cache window the database is not asked again: the resolved flag still shows.
    await db.query(`UPDATE invoices SET needs_attention = false, attention_at = NULL`);
    expect(value(second, 'payments_attention_open', { object: 'invoice' })).toBe(1);
    await new Promise((r) => setTimeout(r, 5100));
    const third = await scrape();
    expect(value(third, 'payments_attention_open', { object: 'invoice' })).toBe(0);
    expect(value(third, 'payments_attention_oldest_seconds', { object: 'invoice' })).toBe(0);
  }, 60000);

  it('service_ready follows the readiness check: 0 with a pending migration, 1 again after', async () => {
    const [last] = (
      await db.query<{ id: number; timestamp: string; name: string }>(
        'SELECT id, timestamp, name FROM migrations ORDER BY id DESC LIMIT 1',
      )
    ).rows;
    await db.query('DELETE FROM migrations WHERE id = $1', [last.id]);
    try {
      expect((await ctx.http.get('/health/ready')).status).toBe(503);
      expect(value(await scrape(), 'service_ready')).toBe(0);
    } finally {
      await db.query('INSERT INTO migrations (id, timestamp, name) VALUES ($1, $2, $3)', [
        last.id,
        last.timestamp,
        last.name,
      ]);
    }
    expect((await ctx.http.get('/health/ready')).status).toBe(200);
    expect(value(await scrape(), 'service_ready')).toBe(1);
  });

  it('the state gauges read indexes only: no part of the query needs a sequential scan', async () => {
    interface PlanNode {
      'Node Type': string;
      'Relation Name'?: string;
      Plans?: PlanNode[];
    }
    const seqScans = (n: PlanNode): string[] => [
      ...(n['Node Type'] === 'Seq Scan' ? [n['Relation Name'] ?? '?'] : []),
      ...(n.Plans ?? []).flatMap(seqScans),
    ];
    // With sequential scans priced out, the planner still picks one where no index serves.
    await db.query('BEGIN');
    try {
      await db.query('SET LOCAL enable_seqscan = off');
      const res = await db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (FORMAT JSON) ${STATE_GAUGES_SQL}`,
        [PAYOUT_SHOP_ID],
      );
      expect(seqScans(res.rows[0]['QUERY PLAN'][0].Plan)).toEqual([]);
    } finally {
      await db.query('ROLLBACK');
    }
  });
});
