import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import { isIP, type Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpLimits } from '../config/config';
import { httpRequestDuration } from '../metrics/metrics';
import type { ApiKeyTable } from './auth.guard';
import {
  inputProblem,
  isBatchUpload,
  unsupportedBody,
  PAYOUT_BATCH_BODY_LIMIT,
  PAYOUT_BATCH_ROUTE,
} from './input-guard';
import { PROBLEM_BASE, toProblem } from './problem.filter';
import { RateLimited, type RateLimiter } from './rate-limit';
import type { Actor } from './actor';
import { accessLogger } from './logger';
import type { RequestTrace, Tracing } from '../tracing/tracing';
import { installRequestSpans } from '../tracing/request-spans';
import { ValidationFailed } from './errors';
import { routedPath } from './routed-path';
import { installUploadGate } from './upload-gate';

/**
 * The HTTP edge on Fastify (Express's per-request machinery alone held a bare read to
 * under half of node:http). Everything here runs before a handler, in Fastify's hooks, in this
 * order:
 *
 * - onRequest: the fixed response headers (cache rule, security headers, X-Request-Id) and the
 *   request timer; the budget of callers without a key; JSON-only bodies under /api/v1 (415).
 * - body parsing: JSON, forms and CSV read by one reader with the route's limit (64 kB, the batch
 *   route 5 MB), the raw bytes kept for the webhook's signature; a keyless request's body is
 *   never read.
 * - preValidation: what no field may hold (NUL, lone surrogates, depth, width, reserved keys).
 *
 * No request context is opened: the guard puts the acting key on the request, and the handler
 * passes it on (src/common/actor.ts).
 */

/** Every route but the payout batch upload reads at most this many bytes of body. */
export const BODY_LIMIT = 64 * 1024;

/** Routes open without a bearer key (each limits itself): webhook, payer page, health, metrics, console, docs. */
const PUBLIC_PATHS = new Set([
  '/health',
  '/health/ready',
  '/metrics',
  '/webhooks/gateway',
  '/admin',
  '/docs',
  '/docs-json',
]);
const PUBLIC_PREFIXES = ['/pay/', '/admin/', '/docs/'];

/** Exact spellings only (routing is case-sensitive and strict): any other spelling is no public route. */
export function isPublicPath(path: string): boolean {
  return PUBLIC_PATHS.has(path) || PUBLIC_PREFIXES.some((p) => path.startsWith(p));
}

/** The console's pages, sign-in and assets (the admin JSON routes are under /api/v1/admin). */
function isConsolePath(path: string): boolean {
  return path === '/admin' || path.startsWith('/admin/');
}

function isDocsPath(path: string): boolean {
  return path === '/docs' || path.startsWith('/docs/') || path === '/docs-json';
}


declare module 'fastify' {
  interface FastifyRequest {
    correlationId: string;
    /** The path as the router routes it (routedPath), worked out once: every edge check reads it. */
    routePath: string;
    /** The body exactly as received (the webhook's signature is computed on it). */
    rawBody: Buffer | undefined;
    /** Set by the gate: no valid key on a guarded route; its body is never read. */
    keyless: boolean;
    /** The gate's reading of the Authorization header (undefined: not read), for the guard. */
    keyActor: Actor | null | undefined;
    /** Set by the guard: the key this request acts for (`@Acting()`); undefined on public routes. */
    actor: Actor | undefined;
    startedAt: bigint;
    /** With tracing on: this request's span and trace ids (src/tracing); undefined when off. */
    trace: RequestTrace | undefined;
  }
}

export interface EdgeOptions {
  /** Response headers that do not depend on the request (helmet's, worked out once). */
  fixedHeaders: Record<string, string>;
  /** Absent in preview (no providers): every request is let through to the guard. */
  gate?: { keys: ApiKeyTable; limiter: RateLimiter; batchUploadsPerKey: number };
  /** Tracing on (OTEL_EXPORTER_OTLP_ENDPOINT): a span per request. Absent: no hook for it at all. */
  tracing?: Tracing;
}

export function installEdge(fastify: FastifyInstance, opts: EdgeOptions): void {
  fastify.decorateRequest('correlationId', '');
  fastify.decorateRequest('routePath', '');
  fastify.decorateRequest('rawBody', undefined);
  fastify.decorateRequest('keyless', false);
  fastify.decorateRequest('keyActor', undefined);
  fastify.decorateRequest('actor', undefined);
  fastify.decorateRequest('startedAt', BigInt(0));
  fastify.decorateRequest('trace', undefined);

  const apiHeaders: Record<string, string> = { ...opts.fixedHeaders, 'cache-control': 'no-store' };
  const docsHeaders: Record<string, string> = { ...opts.fixedHeaders };

  // Answers carry tokens (payUrl?t=, recurrent tokens for admins), payer pages and console pages:
  // none may be kept by a browser or a shared cache. Set first, for every answer including
  // errors; a handler may still loosen it for a static asset (the console's stylesheet). The API
  // docs' own assets are left to Swagger's defaults.
  fastify.addHook('onRequest', (request, reply, done) => {
    request.startedAt = process.hrtime.bigint();
    request.correlationId = requestIdOf(request.headers['x-request-id']);
    request.routePath = routedPath(request.url);
    reply.headers(isDocsPath(request.routePath) ? docsHeaders : apiHeaders);
    reply.header('x-request-id', request.correlationId);
    done();
  });

  if (opts.tracing) installRequestSpans(fastify, opts.tracing);

  fastify.addHook('onResponse', (request, reply, done) => {
    const nanos = process.hrtime.bigint() - request.startedAt;
    const route = request.routeOptions.url ?? 'unmatched';
    httpRequestDuration.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      Number(nanos) / 1e9,
    );
    // The line's fields are worked out only when it is written (LOG_LEVEL info or lower).
    if (accessLogger.isLevelEnabled('info') && isAccessLogged(request.routePath))
      accessLine(request, route, reply.statusCode, nanos);
    done();
  });

  if (opts.gate) {
    const { keys, limiter } = opts.gate;
    // Every request to a guarded route (anything but the public ones, whatever its spelling)
    // without a valid key (none, a wrong one, a misspelt scheme) takes a token from its address's
    // budget (RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS) and, past it, is answered 429 here. Within
    // budget it goes on to be refused by the guard (401) or to find no route (404), its body
    // left unread.
    // The console (/admin, its pages and its sign-in) has no bearer key either: every request to
    // it takes a token from its address's keyless budget (RATE_LIMIT_PUBLIC_PER_IP_RPS, as /pay),
    // before a session cookie is hashed or looked up.
    fastify.addHook('onRequest', (request, reply, done) => {
      let take: Promise<void>;
      if (isConsolePath(request.routePath)) {
        take = limiter.takeForAddress(request.ip, 'console');
      } else if (isPublicPath(request.routePath)) {
        done();
        return;
      } else {
        // Read once per request: the guard takes this reading instead of hashing the key again.
        request.keyActor = keys.actorOf(request.headers.authorization);
        if (request.keyActor !== null) {
          done();
          return;
        }
        request.keyless = true;
        take = limiter.takeUnauthenticated(request.ip);
      }
      take.then(
        () => done(),
        (e: unknown) => {
          if (!(e instanceof RateLimited)) {
            done(e as Error);
            return;
          }
          const problem = toProblem(e);
          problem.instance = request.routePath.slice(0, 200);
          problem.requestId = request.correlationId;
          // The unread body is not worth keeping the connection for.
          void reply
            .code(429)
            .header('retry-after', String(e.retryAfterS))
            .header('connection', 'close')
            .type('application/problem+json')
            .send(JSON.stringify(problem));
        },
      );
    });
  }

  // The batch upload's access rule and its uploads per key, before its large body is read.
  if (opts.gate) installUploadGate(fastify, opts.gate.batchUploadsPerKey);

  // A body on a JSON route that is not application/json is a 415 naming its type, before anything
  // reads it (see unsupportedBody).
  fastify.addHook('onRequest', (request, _reply, done) => {
    done(unsupportedBody(request.method, request.routePath, request.headers) ?? undefined);
  });

  installBodyParsers(fastify);

  fastify.addHook('preValidation', (request, _reply, done) => {
    // The batch upload's rows are walked by its handler, a slice at a time (valueProblem).
    const body = isBatchUpload(request.method, request.routePath) ? undefined : request.body;
    const problem = inputProblem(request.url, request.query, body);
    done(problem ? new ValidationFailed([problem]) : undefined);
  });

  // While the server drains (bootstrap's close), every answer closes its connection: the client
  // opens its next one elsewhere, and no kept-alive connection is reaped under a request it just
  // sent.
  const drain = { on: false };
  DRAINING.set(fastify, drain);
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (drain.on) reply.header('connection', 'close');
    done(null, payload);
  });

  const table: Array<[string, string]> = [];
  ROUTES.set(fastify, table);
  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    // Fastify's own HEAD twin of every GET is no route of ours (none is declared).
    for (const m of methods) if (m !== 'HEAD') table.push([m, route.url]);
    // The one route that takes a large body (shared/API.md, Payouts).
    if (route.url === PAYOUT_BATCH_ROUTE.path && methods.includes(PAYOUT_BATCH_ROUTE.method)) {
      route.bodyLimit = PAYOUT_BATCH_BODY_LIMIT;
    }
  });
}

/**
 * The caller's own request id when it is 1 to 64 characters of [A-Za-z0-9._-] (safe in a header,
 * a log line and a JSON body as it is); anything else (too long, CR/LF, other characters,
 * several headers) is replaced by a new one.
 */
export function requestIdOf(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Requests that get an access line: all but health probes, metrics scrapes and the API docs' assets. */
function isAccessLogged(url: string): boolean {
  return !(url.startsWith('/health') || url.startsWith('/metrics') || url.startsWith('/docs'));
}

/**
 * One line per request: what was asked (method and route pattern, never the path's values or the
 * query, which may hold a token), the answer's status, how long it took, who asked (the key's id,
 * never the key; the client address as TRUST_PROXY reads it) and the request id the caller got.
 */
function accessLine(request: FastifyRequest, route: string, status: number, nanos: bigint): void {
  accessLogger.info(
    {
      method: request.method,
      route,
      status,
      durationMs: Math.round(Number(nanos) / 1e4) / 100,
      keyId: (request.actor ?? request.keyActor)?.keyId,
      requestId: request.correlationId,
      traceId: request.trace?.traceId,
      // From X-Forwarded-For when TRUST_PROXY trusts a proxy, which a caller writes: only an address is logged.
      ip: isIP(request.ip) !== 0 ? request.ip : '[not an address]',
    },
    'request',
  );
}

const ROUTES = new WeakMap<FastifyInstance, Array<[string, string]>>();
const DRAINING = new WeakMap<FastifyInstance, { on: boolean }>();

/** From now on every answer of this server closes its connection (see installEdge). */
export function startDraining(fastify: FastifyInstance): void {
  const drain = DRAINING.get(fastify);
  if (drain) drain.on = true;
}

/** Every route registered on the server, as [METHOD, path] (tests walk them all). */
export function registeredRoutes(fastify: FastifyInstance): ReadonlyArray<[string, string]> {
  return ROUTES.get(fastify) ?? [];
}

/** A body the reader refused: the status and the problem's detail, as body-parser's errors had them. */
export class BodyError extends Error {
  constructor(
    readonly status: number,
    readonly type:
      'entity.parse.failed' | 'entity.too.large' | 'request.aborted' | 'request.size.invalid',
  ) {
    super(type);
  }
}

/**
 * JSON, forms (the console and a form-encoded notification) and CSV (the batch route only; the
 * 415 hook refuses it elsewhere). One reader for all: the route's byte limit, the raw bytes kept,
 * a keyless request's body never read.
 */
function installBodyParsers(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  const parse =
    (decode: (text: string) => unknown) =>
    (
      request: FastifyRequest,
      payload: IncomingMessage,
      done: (err: Error | null, body?: unknown) => void,
    ): void => {
      if (request.keyless) {
        done(null, undefined);
        return;
      }
      readBody(payload, request.routeOptions.bodyLimit ?? BODY_LIMIT).then((raw) => {
        request.rawBody = raw;
        // The batch upload's body (up to 5 MB, JSON or CSV) is its text: the handler parses it a
        // slice at a time, after the guard (src/payouts/payout-batch-json.ts, payout-batch-csv.ts).
        if (isBatchUpload(request.method, request.routePath)) {
          done(null, raw.toString('utf8'));
          return;
        }
        let body: unknown;
        try {
          body = decode(raw.toString('utf8'));
        } catch {
          done(new BodyError(400, 'entity.parse.failed'));
          return;
        }
        done(null, body);
      }, done);
    };
  fastify.addContentTypeParser('application/json', parse(strictJson));
  fastify.addContentTypeParser(
    'application/x-www-form-urlencoded',
    parse((text) => parseQueryString(text)),
  );
  fastify.addContentTypeParser(
    'text/csv',
    parse((text) => text),
  );
  // Any other type is read by no route: left unread (the webhook then refuses an empty body,
  // a form post of the console finds no fields), as the 415 hook already refused it under /api/v1.
  fastify.addContentTypeParser(
    '*',
    (
      _request: FastifyRequest,
      _payload: IncomingMessage,
      done: (err: Error | null, body?: unknown) => void,
    ) => done(null, undefined),
  );
}

/** As body-parser's strict JSON: an object or an array, nothing else at the top. */
function strictJson(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') throw new SyntaxError('not a JSON object or array');
  return JSON.parse(text);
}

/**
 * Reads a request body of at most `limit` bytes: a declared length above it is refused before a
 * byte is read, a stream that grows past it is refused where it does (and left unread: the
 * connection is closed after the answer).
 */
export function readBody(stream: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = stream.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      stream.pause();
      reject(new BodyError(413, 'entity.too.large'));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = (): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        cleanup();
        stream.pause();
        reject(new BodyError(413, 'entity.too.large'));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      if (declared !== undefined && Number(declared) !== received) {
        reject(new BodyError(400, 'request.size.invalid'));
        return;
      }
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
    };
    const onError = (e: Error): void => {
      cleanup();
      reject(e);
    };
    const onAborted = (): void => {
      cleanup();
      reject(new BodyError(400, 'request.aborted'));
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('aborted', onAborted);
  });
}

/**
 * The server's time and connection limits. Node checks the two time limits on a timer
 * (`connectionsCheckingInterval`, 30 s by default, read when the server starts listening): run it
 * often enough that a limit holds to within a quarter of itself.
 */
export function applyHttpLimits(server: Server, limits: HttpLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    Math.max(25, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4)));
}

/**
 * What the router refuses before any hook runs (a path whose percent-encoding is not UTF-8, a
 * path parameter over 2,048 characters): a 400 problem+json with the fixed headers.
 */
export function problemOnFrameworkError(fixedHeaders: Record<string, string>) {
  return (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void => {
    const detail =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'A path parameter is too long'
        : 'The request path is not valid';
    // No hook ran: the request id is read here.
    const requestId = requestIdOf(request.headers['x-request-id']);
    void reply
      .headers({ ...fixedHeaders, 'cache-control': 'no-store', 'x-request-id': requestId })
      .code(400)
      .type('application/problem+json')
      .send(
        JSON.stringify({
          type: `${PROBLEM_BASE}bad-request`,
          title: 'Bad Request',
          status: 400,
          detail,
          instance: routedPath(request.raw.url ?? '').slice(0, 200),
          requestId,
        }),
      );
  };
}

const CLIENT_ERRORS: Record<
  string,
  { status: number; type: string; title: string; detail: string }
> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    type: 'request-header-fields-too-large',
    title: 'Request Header Fields Too Large',
    detail: 'The request line or headers are too large',
  },
  // HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS ran out before the request was complete.
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    type: 'request-timeout',
    title: 'Request Timeout',
    detail: 'The request was not received in time',
  },
  default: {
    status: 400,
    type: 'bad-request',
    title: 'Bad Request',
    detail: 'The request could not be parsed',
  },
};

/**
 * Requests Node's HTTP parser refuses before any route sees them (headers or URL too large,
 * malformed request line) still get a problem+json answer instead of a bare status line.
 */
export function problemOnClientError(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) return;
  const answer = CLIENT_ERRORS[err.code ?? ''] ?? CLIENT_ERRORS.default;
  // The request could not be read, so neither could its id: a new one.
  const requestId = randomUUID();
  const body = JSON.stringify({
    type: `${PROBLEM_BASE}${answer.type}`,
    title: answer.title,
    status: answer.status,
    detail: answer.detail,
    requestId,
  });
  socket.end(
    `HTTP/1.1 ${answer.status} ${answer.title}\r\n` +
      `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}
