import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { httpRequestDuration } from '../metrics/metrics';

/** Gives every request a correlation id (X-Request-Id in and out) and times it for /metrics. */
export function correlationMiddleware(req: Request & { correlationId?: string }, res: Response, next: NextFunction): void {
  const incoming = req.header('x-request-id');
  req.correlationId = incoming && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', req.correlationId);
  const end = httpRequestDuration.startTimer();
  res.on('finish', () => {
    const route = (req as Request & { route?: { path?: string } }).route?.path ?? 'unmatched';
    end({ method: req.method, route: `${req.baseUrl ?? ''}${route}`, status: String(res.statusCode) });
  });
  next();
}
