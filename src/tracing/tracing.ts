/**
 * OpenTelemetry tracing, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. Off, nothing of
 * OpenTelemetry is loaded and every hook that would open a span is not even installed: the
 * request path pays one property read. On, ./otel.ts (loaded then) exports spans over OTLP/HTTP.
 *
 * There is no ambient context (no AsyncLocalStorage: src/no-async-hooks.spec.ts): a span's parent
 * is handed over explicitly as a W3C `traceparent` text. A request's trace travels on the request
 * object (`request.trace`); a gateway call made for a request finds it by the shop's id of the
 * object the call is about (`shop_order_id`, `shop_refund_id`, `shop_payment_id`), which the
 * request named in its body or path (see `bindTrace`). Calls that carry no such id (charge,
 * unhold, a status by gateway id) and background work start traces of their own. The events a
 * request's writes record keep its span (the acting key's `traceparent`, src/common/actor.ts), and
 * their webhook deliveries are its children.
 */

import type { RequestTrace, SpanAttributes, SpanHandle, SpanKind, Tracing } from './tracing.types';

export type { RequestTrace, SpanAttributes, SpanHandle, SpanKind, Tracing };

/** Tracing of each running service, by its `otel` settings object (several services may share a process in tests). */
const byConfig = new WeakMap<object, Tracing>();

/** The tracing of the service with these settings; undefined: tracing is off. */
export function tracingOf(otel: object | undefined): Tracing | undefined {
  return otel === undefined ? undefined : byConfig.get(otel);
}

/** Starts tracing for these settings when an endpoint is set; loads OpenTelemetry only then. */
export async function startTracing(otel: { endpoint?: string; serviceName: string }): Promise<Tracing | undefined> {
  if (otel.endpoint === undefined) return undefined;
  const { otelTracing } = await import('./otel');
  const tracing = otelTracing({ endpoint: otel.endpoint, serviceName: otel.serviceName });
  byConfig.set(otel, tracing);
  return tracing;
}

/** The gateway fields that name the shop's object, and the request fields or parameters that carry the same id. */
export const OBJECT_ID_FIELDS = ['shop_order_id', 'shop_refund_id', 'shop_payment_id'] as const;
const REQUEST_ID_FIELDS: Record<(typeof OBJECT_ID_FIELDS)[number], string> = {
  shop_order_id: 'shopOrderId',
  shop_refund_id: 'shopRefundId',
  shop_payment_id: 'shopPaymentId',
};

/**
 * The traces of requests in flight, by the shop id of the object each is about: how a gateway
 * call made for a request finds its parent without an ambient context. Bounded: a request's
 * entries go when it is answered.
 */
export class TraceBindings {
  private readonly byObject = new Map<string, RequestTrace>();

  /** Binds the ids the request names (body fields, then path parameters) to its trace; returns the keys bound. */
  bind(trace: RequestTrace, body: unknown, params: unknown): string[] {
    const keys: string[] = [];
    for (const field of OBJECT_ID_FIELDS) {
      const name = REQUEST_ID_FIELDS[field];
      const value = valueOf(body, name) ?? valueOf(params, name);
      if (value === undefined) continue;
      const key = `${field}:${value}`;
      this.byObject.set(key, trace);
      keys.push(key);
    }
    return keys;
  }

  /** Forgets the request's bindings (only those still its own: a later request with the same id keeps its). */
  release(trace: RequestTrace, keys: readonly string[]): void {
    for (const key of keys) if (this.byObject.get(key) === trace) this.byObject.delete(key);
  }

  /** The `traceparent` of the request a gateway call with these fields is made for, if one is in flight. */
  parentOf(fields: Record<string, unknown>): string | undefined {
    for (const field of OBJECT_ID_FIELDS) {
      const value = fields[field];
      if (typeof value !== 'string') continue;
      const trace = this.byObject.get(`${field}:${value}`);
      if (trace) return trace.span.traceparent;
    }
    return undefined;
  }

  get size(): number {
    return this.byObject.size;
  }
}

function valueOf(holder: unknown, name: string): string | undefined {
  if (holder === null || typeof holder !== 'object') return undefined;
  const v = (holder as Record<string, unknown>)[name];
  return typeof v === 'string' && v.length > 0 && v.length <= 200 ? v : undefined;
}

/** The bindings of each running service's tracing. */
const bindings = new WeakMap<Tracing, TraceBindings>();

export function bindingsOf(tracing: Tracing): TraceBindings {
  let b = bindings.get(tracing);
  if (!b) {
    b = new TraceBindings();
    bindings.set(tracing, b);
  }
  return b;
}

/** The tracing of each application's scheduled jobs, by its scheduler (set by bootstrap's createApp). */
const byScheduler = new WeakMap<object, Tracing>();

export function traceJobs(scheduler: object, tracing: Tracing): void {
  byScheduler.set(scheduler, tracing);
}

/** The tracing of the jobs of this scheduler; undefined: tracing is off. */
export function jobTracing(scheduler: object): Tracing | undefined {
  return byScheduler.get(scheduler);
}
