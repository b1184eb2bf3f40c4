import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, REPLAYED_HEADER, RequestInProgress } from './errors';
import { logger } from './logger';
import { notificationsReceived } from '../metrics/metrics';
import { RateLimited } from './rate-limit';

export const PROBLEM_BASE = 'https://problems.piastrix-orchestrator.dev/';

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  correlationId?: string;
  /** The request's id (its x-request-id answer header): in every problem the filter sends. */
  requestId?: string;
  [key: string]: unknown;
}

/**
 * Every error leaves as RFC 9457 problem details (application/problem+json): domain errors,
 * validation errors, unknown routes, bad JSON and unexpected failures (500 with a correlation
 * id; no stack, SQL or gateway secrets in the body).
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    const res = http.getResponse<FastifyReply>();
    const problem = toProblem(exception, req.correlationId);
    problem.instance = req.routePath || req.url?.split('?')[0];
    // Every problem names its request: what a caller quotes to find the log line.
    problem.requestId = req.correlationId;
    if (problem.instance === '/webhooks/gateway' && isBodyParserError(exception)) {
      // Refused by the body parser before the webhook ran (malformed or oversize): still counted.
      // The webhook's own refusals are domain errors and are counted where they are raised.
      notificationsReceived.inc({ type: 'other', result: problem.status === 413 ? 'too_large' : 'bad_request' });
      logger.warn({ path: problem.instance, status: problem.status }, 'notification refused: body unreadable');
    }
    if (problem.status >= 500) {
      logger.error(
        { requestId: req.correlationId, traceId: req.trace?.traceId, path: problem.instance, err: describe(exception) },
        'request failed',
      );
    }
    if (res.sent || res.raw.headersSent) return;
    if (exception instanceof DomainError && exception.replayed) res.header(REPLAYED_HEADER, 'true');
    if (exception instanceof RequestInProgress) res.header('Retry-After', String(exception.retryAfterS));
    if (exception instanceof RateLimited) res.header('Retry-After', String(exception.retryAfterS));
    if (problem.status === 503) res.header('Retry-After', '1');
    void res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
  }
}

export function toProblem(exception: unknown, correlationId?: string): Problem {
  if (exception instanceof DomainError) {
    return {
      type: PROBLEM_BASE + exception.code,
      title: exception.title,
      status: exception.status,
      detail: exception.message,
      ...exception.extra,
    };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const body = exception.getResponse();
    const message =
      typeof body === 'object' && body !== null && 'message' in body ? (body as { message: unknown }).message : body;
    const detail = Array.isArray(message) ? message.join('; ') : String(message);
    return {
      type: PROBLEM_BASE + slug(status),
      title: HttpStatus[status] ? titleOf(status) : 'Error',
      status,
      detail,
    };
  }
  if (isDatabaseTimeLimit(exception)) {
    return {
      type: PROBLEM_BASE + 'service-busy',
      title: 'Service Unavailable',
      status: 503,
      detail: 'The database did not answer in time; retry shortly',
      correlationId,
    };
  }
  const status = typeof (exception as { status?: unknown })?.status === 'number' ? (exception as { status: number }).status : 500;
  if (status >= 400 && status < 500) {
    // The edge's body reader (BodyError: malformed JSON, too large) carries a 4xx status of its own.
    return { type: PROBLEM_BASE + slug(status), title: titleOf(status), status, detail: bodyParserDetail(exception) };
  }
  return {
    type: PROBLEM_BASE + 'internal-error',
    title: 'Internal Server Error',
    status: 500,
    detail: 'An unexpected error occurred. Quote the request id when reporting it.',
    correlationId,
  };
}

/**
 * A statement or lock wait cut off by DB_STATEMENT_TIMEOUT_MS / DB_LOCK_TIMEOUT_MS (SQLSTATE
 * 57014, 55P03), or no free connection within DB_POOL_ACQUIRE_TIMEOUT_MS: the service is busy,
 * not broken.
 */
function isDatabaseTimeLimit(exception: unknown): boolean {
  const e = exception as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== 'object') return false;
  if (e.code === '57014' || e.code === '55P03') return true;
  return typeof e.message === 'string' && e.message.includes('timeout exceeded when trying to connect');
}

/** The edge's body reader refused it (BodyError, `type: entity.*`), or Nest did with a 400 / 413. */
function isBodyParserError(exception: unknown): boolean {
  if (exception instanceof DomainError) return false;
  if (exception instanceof HttpException) return [400, 413].includes(exception.getStatus());
  const type = (exception as { type?: unknown } | null)?.type;
  return typeof type === 'string' && type.startsWith('entity.');
}

function bodyParserDetail(exception: unknown): string {
  const type = (exception as { type?: string }).type;
  if (type === 'entity.parse.failed') return 'The request body is not valid JSON';
  if (type === 'entity.too.large') return 'The request body is too large';
  return 'The request could not be read';
}

function titleOf(status: number): string {
  const name = HttpStatus[status] ?? 'Error';
  return name
    .toLowerCase()
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join(' ');
}

function slug(status: number): string {
  return (HttpStatus[status] ?? 'error').toLowerCase().replace(/_/g, '-');
}

function describe(e: unknown): Record<string, unknown> {
  if (e instanceof Error) return { name: e.name, message: e.message, stack: e.stack };
  return { value: String(e) };
}
