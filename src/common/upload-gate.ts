import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allows, Forbidden } from './auth.guard';
import { DomainError } from './errors';
import { isBatchUpload, PAYOUT_BATCH_ROUTE } from './input-guard';
import { toProblem } from './problem.filter';

export class TooManyUploads extends DomainError {
  constructor(limit: number) {
    super(
      'too-many-uploads',
      429,
      'Too Many Requests',
      `At most ${limit} payout batch uploads of one key run at once (BATCH_UPLOADS_PER_KEY): retry when one has been answered`,
    );
  }
}

/** Seconds a caller refused for uploads in flight is told to wait. */
const UPLOAD_RETRY_AFTER_S = 1;

/**
 * The payout batch upload's own gate, before a byte of its body (up to 5 MB) is read
 * (shared/API.md, Limits): a key whose role and scopes the route does not allow is refused here
 * by the route's own access rule (the guard would refuse it too, after the body was read, parsed
 * and walked), and at most `uploadsPerKey` uploads of one key (dry runs included) run at once in
 * this instance; more are a 429. A slot is given back when the answer has gone (or the connection
 * closed). Keyless callers never get here with a body: the key gate left theirs unread.
 */
export function installUploadGate(fastify: FastifyInstance, uploadsPerKey: number): void {
  const running = new Map<string, number>();
  fastify.addHook('onRequest', (request, reply, done) => {
    const actor = request.keyActor;
    if (!actor || !isBatchUpload(request.method, request.routePath)) {
      done();
      return;
    }
    if (!allows(actor, { kind: 'scopes', anyOf: PAYOUT_BATCH_ROUTE.scopes }, false)) {
      refuse(request, reply, new Forbidden(`This route needs a key with the scope ${PAYOUT_BATCH_ROUTE.scopes.join(' or ')}`));
      return;
    }
    const now = running.get(actor.keyId) ?? 0;
    if (now >= uploadsPerKey) {
      reply.header('retry-after', String(UPLOAD_RETRY_AFTER_S));
      refuse(request, reply, new TooManyUploads(uploadsPerKey));
      return;
    }
    running.set(actor.keyId, now + 1);
    let held = true;
    reply.raw.once('close', () => {
      if (!held) return;
      held = false;
      const left = (running.get(actor.keyId) ?? 1) - 1;
      if (left <= 0) running.delete(actor.keyId);
      else running.set(actor.keyId, left);
    });
    done();
  });
}

/** The refusal as problem+json with the request's id; the unread body is not worth the connection. */
function refuse(request: FastifyRequest, reply: FastifyReply, e: DomainError): void {
  const problem = toProblem(e);
  problem.instance = request.routePath.slice(0, 200);
  problem.requestId = request.correlationId;
  void reply
    .code(e.status)
    .header('connection', 'close')
    .type('application/problem+json')
    .send(JSON.stringify(problem));
}
