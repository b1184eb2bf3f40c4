import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
  help: 'Gateway notifications received, by type and result (applied, duplicate, rejected, forbidden, bad_signature, bad_request, too_large)',
  labelNames: ['type', 'result'] as const,
  registers: [registry],
});

export const reconcileRuns = new Counter({
  name: 'reconcile_items_total',
  help: 'Rows processed by the reconciliation jobs, by kind and outcome',
  labelNames: ['kind', 'outcome'] as const,
  registers: [registry],
});
