import { NotFoundException } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toProblem } from '../common/problem.filter';
import { renderPage } from './console-render';

/** Whether the caller is a browser asking for a page (Accept names text/html). */
export function wantsHtml(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  return typeof accept === 'string' && /\btext\/html\b/i.test(accept);
}

/**
 * Any other address under /admin: a browser gets an HTML "not found" page (signed in or not, it
 * says nothing about what exists), an API client the same problem+json 404 as any unknown route.
 * A plain Fastify route, after the console's own: its routes (static or with parameters) always
 * win over this wildcard, and the admin API under /api/v1 is not under it.
 */
export function addConsoleNotFound(fastify: FastifyInstance): void {
  fastify.route({
    method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    url: '/admin/*',
    handler: (req: FastifyRequest, res: FastifyReply) => {
      const path = (req.url ?? '').split('?')[0];
      if (!wantsHtml(req)) {
        const problem = toProblem(new NotFoundException(`Cannot ${req.method} ${path}`));
        problem.instance = path;
        return res.status(404).type('application/problem+json').send(JSON.stringify(problem));
      }
      return res
        .status(404)
        .header('Cache-Control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(
          renderPage('message', {
            title: 'Not found',
            text: 'There is no such page in the console.',
            back: '/admin',
          }),
        );
    },
  });
}
