/**
 * The request's own span, installed by the HTTP edge (src/common/http-edge.ts) only when tracing
 * is on: nothing of it runs otherwise.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bindingsOf, type Tracing } from './tracing';

/** A W3C traceparent as a caller may send it (version 00 and later-version forms of the same length). */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * With tracing on: a server span per request, child of the caller's `traceparent` when it sends
 * a well-formed one; the ids of the objects the request names bound to it while it runs, so the
 * gateway calls made for it are its children (src/tracing/tracing.ts).
 */
export function installRequestSpans(fastify: FastifyInstance, tracing: Tracing): void {
  const bindings = bindingsOf(tracing);
  const bound = new WeakMap<FastifyRequest, string[]>();
  fastify.addHook('onRequest', (request, _reply, done) => {
    const incoming = request.headers.traceparent;
    const parent =
      typeof incoming === 'string' && TRACEPARENT.test(incoming) ? incoming : undefined;
    const span = tracing.startSpan(request.method, 'server', parent, {
      'http.request.method': request.method,
      'request.id': request.correlationId,
    });
    request.trace = { traceId: span.traceId, span };
    done();
  });
  fastify.addHook('preHandler', (request, _reply, done) => {
    if (request.trace)
      bound.set(request, bindings.bind(request.trace, request.body, request.params));
    done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const t = request.trace;
    if (t) {
      const route = request.routeOptions.url ?? 'unmatched';
      t.span.updateName(`${request.method} ${route}`);
      t.span.setAttributes({
        'http.route': route,
        'http.response.status_code': reply.statusCode,
        'key.id': (request.actor ?? request.keyActor)?.keyId,
      });
      t.span.end(reply.statusCode >= 500 ? `HTTP ${reply.statusCode}` : undefined);
      const keys = bound.get(request);
      if (keys) bindings.release(t, keys);
    }
    done();
  });
}
