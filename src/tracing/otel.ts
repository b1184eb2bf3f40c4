import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanAttributes, SpanHandle, SpanKind as Kind, Tracing } from './tracing.types';

/**
 * Tracing on (loaded by ./tracing.ts only when OTEL_EXPORTER_OTLP_ENDPOINT is set): spans batched
 * and sent as OTLP/HTTP JSON to `<endpoint>/v1/traces`. No global provider, propagator or context
 * manager is registered: parents are passed explicitly as `traceparent` texts. The standard
 * OTEL_BSP_* variables tune the batching.
 */
export function otelTracing(opts: { endpoint: string; serviceName: string }): Tracing {
  const exporter = new OTLPTraceExporter({ url: `${opts.endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('piastrix-orchestrator');
  return {
    startSpan(name: string, kind: Kind, parent?: string, attrs?: SpanAttributes): SpanHandle {
      const remote = parent === undefined ? null : parseTraceParent(parent);
      const context = remote ? trace.setSpanContext(ROOT_CONTEXT, { ...remote, isRemote: true }) : ROOT_CONTEXT;
      const span = tracer.startSpan(name, { kind: KINDS[kind], attributes: defined(attrs) }, context);
      return handle(span);
    },
    shutdown: () => provider.shutdown(),
  };
}

const KINDS: Record<Kind, SpanKind> = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL };

function handle(span: Span): SpanHandle {
  const ctx = span.spanContext();
  return {
    traceId: ctx.traceId,
    traceparent: `00-${ctx.traceId}-${ctx.spanId}-${(ctx.traceFlags & 0xff).toString(16).padStart(2, '0')}`,
    setAttributes: (attrs) => void span.setAttributes(defined(attrs)),
    updateName: (name) => void span.updateName(name),
    end(error?: string) {
      if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      span.end();
    },
  };
}

function defined(attrs: SpanAttributes | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  if (attrs) for (const [k, v] of Object.entries(attrs)) if (v !== undefined) out[k] = v;
  return out;
}
