import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry for the process; `/metrics` serves it in the Prometheus text format. */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Shop-facing HTTP requests by method, route and status code',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const gatewayCallDuration = new Histogram({
  name: 'gateway_call_duration_seconds',
  help: 'Calls to the payment gateway by path and outcome (ok, gateway_error, timeout, connect_error, bad_response)',
  labelNames: ['path', 'outcome'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export const notificationsReceived = new Counter({
  name: 'gateway_notifications_total',
  help: 'Gateway notifications received, by type and result (applied, duplicate, rejected, forbidden, bad_signature, unknown_shop, bad_request, too_large)',
  labelNames: ['type', 'result'] as const,
  registers: [registry],
});

export const reconcileRuns = new Counter({
  name: 'reconcile_items_total',
  help: 'Rows processed by the reconciliation jobs, by kind and outcome',
  labelNames: ['kind', 'outcome'] as const,
  registers: [registry],
});

export const dbWriteBatches = new Counter({
  name: 'db_write_batches_total',
  help: 'Writes of one event-loop turn sent together (BatchedWrite), by writer and outcome: one (a write alone), batch (one statement for several), row_by_row (a batch refused, its writes sent again alone), failed (a batch failed, its callers told)',
  labelNames: ['writer', 'outcome'] as const,
  registers: [registry],
});

export const rateLimited = new Counter({
  name: 'rate_limited_total',
  help: 'Requests refused with 429, by limit (key, pay, webhook, unauthenticated)',
  labelNames: ['limit'] as const,
  registers: [registry],
});

/** Set by RateLimitStore; the alerts use it to tell shared limits from per-instance ones. */
export const rateLimitStoreUp = new Gauge({
  name: 'rate_limit_store_up',
  help: 'Whether the rate-limit store answers: 1 yes (always with the in-memory store), 0 when Redis is unreachable and each instance limits on its own',
  registers: [registry],
});

export const consoleSignIns = new Counter({
  name: 'admin_console_signins_total',
  help: 'Admin console sign-in attempts by result (ok, wrong_key, shop_key, rate_limited, bad_csrf)',
  labelNames: ['result'] as const,
  registers: [registry],
});

export const attentionRaised = new Counter({
  name: 'payments_attention_raised_total',
  help: 'Invoices, refunds and payouts flagged for an operator, by object and reason',
  labelNames: ['object', 'reason'] as const,
  registers: [registry],
});

export const shopWebhookDeliveries = new Counter({
  name: 'shop_webhook_deliveries_total',
  help: 'Shop event deliveries attempted, by result (delivered, failed, dead)',
  labelNames: ['result'] as const,
  registers: [registry],
});

export const shopWebhookLag = new Gauge({
  name: 'shop_webhook_lag_seconds',
  help: 'Age of the oldest shop event delivery not yet acknowledged (0 when none is waiting)',
  registers: [registry],
});

export const shopWebhookDead = new Counter({
  name: 'shop_webhook_dead_total',
  help: 'Shop event deliveries given up (dead) after the retry window',
  registers: [registry],
});

// ---- Operations gauges: what ops/prometheus/alerts.yml pages on ----

export const attentionOpen = new Gauge({
  name: 'payments_attention_open',
  help: 'Invoices, refunds and payouts flagged for an operator now, by object (read from the database at scrape, cached a few seconds)',
  labelNames: ['object'] as const,
  registers: [registry],
});

export const attentionOldest = new Gauge({
  name: 'payments_attention_oldest_seconds',
  help: 'Age of the oldest open attention flag, by object (0 when none is open)',
  labelNames: ['object'] as const,
  registers: [registry],
});

export const payoutPollLateness = new Histogram({
  name: 'payout_poll_lateness_seconds',
  help: 'How long after its due time (next_poll_at) each payout was claimed for a status poll',
  buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
  registers: [registry],
});

export const payoutPollOverdue = new Gauge({
  name: 'payout_poll_overdue_seconds',
  help: 'How long the oldest due payout of the agent shop has been waiting for a poller to claim it (0 when none is waiting)',
  registers: [registry],
});

export const dbPoolConnections = new Gauge({
  name: 'db_pool_connections',
  help: 'Database connections of this instance by state (open, idle)',
  labelNames: ['state'] as const,
  registers: [registry],
});

export const dbPoolMax = new Gauge({
  name: 'db_pool_max_connections',
  help: 'Largest number of database connections this instance opens (DB_POOL_SIZE)',
  registers: [registry],
});

export const dbPoolWaiting = new Gauge({
  name: 'db_pool_waiting_requests',
  help: 'Queries of this instance waiting for a free database connection',
  registers: [registry],
});

export const serviceReady = new Gauge({
  name: 'service_ready',
  help: 'Whether the last readiness check passed (1) or failed (0): database answers, no pending migration',
  registers: [registry],
});

export const idempotencyConflicts = new Counter({
  name: 'idempotency_conflicts_total',
  help: 'Repeated creates with another body (conflict) and repeats of a locked id (locked), by object',
  labelNames: ['object', 'result'] as const,
  registers: [registry],
});

export const booksDifference = new Gauge({
  name: 'books_difference',
  help: 'Per currency, the sum of the absolute differences between the agent shop balance at the gateway and the ledger (agent_available, agent_frozen) at the last reconciliation',
  labelNames: ['currency'] as const,
  registers: [registry],
});

export const ledgerPositionMismatches = new Gauge({
  name: 'ledger_position_mismatches',
  help: 'Objects (invoices, refunds, payouts) whose ledger entries do not sum to the position their status implies, at the last check (GET /admin/ledger/check or a reconciliation)',
  registers: [registry],
});

export const reconciliationLastFinished = new Gauge({
  name: 'reconciliation_last_finished_timestamp_seconds',
  help: 'Unix time at which the last reconciliation with the gateway finished',
  registers: [registry],
});

export const reconciliationItems = new Gauge({
  name: 'reconciliation_items',
  help: 'Items (variances) of the last reconciliation, by kind (balance, status, amount, missing_ours, missing_gateway, foreign_record, position)',
  labelNames: ['kind'] as const,
  registers: [registry],
});
