/** The tracing interfaces (tracing.ts starts it; otel.ts is the OpenTelemetry one). */

export type SpanKind = 'server' | 'client' | 'internal';
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** One open span. */
export interface SpanHandle {
  readonly traceId: string;
  /** The `traceparent` header value naming this span as the parent of what it calls. */
  readonly traceparent: string;
  setAttributes(attrs: SpanAttributes): void;
  updateName(name: string): void;
  /** Ends the span; `error` marks it failed (a message, never a body or a secret). */
  end(error?: string): void;
}

/** What a request carries with tracing on (`request.trace`). */
export interface RequestTrace {
  readonly traceId: string;
  readonly span: SpanHandle;
}

export interface Tracing {
  /** Opens a span; `parent` is a `traceparent` text (anything unparseable starts a new trace). */
  startSpan(name: string, kind: SpanKind, parent?: string, attrs?: SpanAttributes): SpanHandle;
  /** Sends what is still buffered and stops. */
  shutdown(): Promise<void>;
}
