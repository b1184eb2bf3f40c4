import type { IncomingMessage, Server } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { HttpLimits } from '../config/config';
import type { ApiKeyTable } from './auth.guard';
import { RateLimited, type RateLimiter } from './rate-limit';
import { toProblem } from './problem.filter';

/**
 * What runs before Express reads a body: the cache rule of every answer, and the budget of
 * callers without a key. Body parsing runs before Nest's guards, so a keyless 64 kB body would be
 * parsed (10–40 ms) only to be refused with 401; here it is never parsed.
 */

/**
 * Answers carry tokens (payUrl?t=, recurrent tokens for admins), payer pages and console pages:
 * none may be kept by a browser or a shared cache. Set first, for every answer including errors;
 * a handler may still loosen it for a static asset (the console's stylesheet). The API docs' own
 * assets are left to Swagger's defaults.
 */
export function noStoreMiddleware(req: Request, res: Response, next: NextFunction): void {
  if (req.path !== '/docs' && !req.path.startsWith('/docs/') && req.path !== '/docs-json') {
    res.setHeader('Cache-Control', 'no-store');
  }
  next();
}

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

const KEYLESS = Symbol('keyless');
type Marked = IncomingMessage & { [KEYLESS]?: true };

/**
 * Every request to a guarded route (anything but the public ones, whatever its spelling) without
 * a valid key — none, a wrong one, a misspelt scheme — takes a token from its address's budget
 * (RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS) and, past it, is answered 429 here. Within budget it
 * goes on to be refused by the guard (401) or to find no route (404), its body left unread.
 */
export function keylessGate(keys: ApiKeyTable, limiter: RateLimiter): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (isPublicPath(req.path) || keys.actorOf(req.headers.authorization) !== null) {
      next();
      return;
    }
    (req as Marked)[KEYLESS] = true;
    void limiter.takeUnauthenticated(req.ip).then(
      () => next(),
      (e: unknown) => {
        if (!(e instanceof RateLimited)) {
          next(e);
          return;
        }
        const problem = toProblem(e);
        problem.instance = req.path.slice(0, 200);
        // The unread body is not worth keeping the connection for.
        res
          .status(429)
          .set('Retry-After', String(e.retryAfterS))
          .set('Connection', 'close')
          .type('application/problem+json')
          .send(JSON.stringify(problem));
      },
    );
  };
}

/** A body parser's `type` test: the media type, and never for a request the gate marked keyless. */
export function parsedUnlessKeyless(mediaType: string): (req: IncomingMessage) => boolean {
  return (req) => (req as Marked)[KEYLESS] !== true && Boolean((req as Request).is(mediaType));
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
