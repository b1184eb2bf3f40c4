import { NotFoundException } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toProblem } from '../common/problem.filter';
import { renderPage } from './console-render';

/** Whether the caller is a browser asking for a page (Accept names text/html). */
export function wantsHtml(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  return typeof accept === 'string' && /\btext\/html\b/i.test(accept);
}

/** The answer to any other address under /admin (see addConsoleNotFound). */
function notFound(req: FastifyRequest, res: FastifyReply): FastifyReply {
  const path = req.routePath || (req.url ?? '').split('?')[0];
  res.header('Cache-Control', 'no-store');
  if (!wantsHtml(req)) {
    const problem = toProblem(new NotFoundException(`Cannot ${req.method} ${path}`));
    problem.instance = path;
    // As every problem body: the request's id (shared/API.md, Request ids).
    problem.requestId = req.correlationId;
    return res.status(404).type('application/problem+json').send(JSON.stringify(problem));
  }
  return res
    .status(404)
    .type('text/html; charset=utf-8')
    .send(
      renderPage('message', {
        title: 'Not found',
        text: 'There is no such page in the console.',
        back: '/admin',
      }),
    );
}

/**
 * Any other address under /admin: a browser gets an HTML "not found" page (signed in or not, it
 * says nothing about what exists), an API client the same problem+json 404 as any unknown route.
 * Fastify's not-found handler of the /admin prefix, not a route: the console's routes answer
 * their own addresses, and the admin API under /api/v1 is not under this prefix.
 */
export function addConsoleNotFound(fastify: FastifyInstance): void {
  void fastify.register(
    (scope, _opts, done) => {
      scope.setNotFoundHandler(notFound);
      done();
    },
    { prefix: '/admin' },
  );
}
