import type { FastifyReply, FastifyRequest } from 'fastify';
import { REPLAYED_HEADER } from './errors';
import type { JsonText } from './json-text';

/**
 * The idempotent replay in one place: what a create stores for an identical repeat (its status
 * code and body, on the row's response_code and response_body), how it is read back, and how it
 * is sent. Every create (invoices, refunds, payouts, payout batches) and every path of one (the
 * one-statement usual answer, the answer written under the row lock) goes through these.
 */

/** A create's answer: replayed as is (code and body) for an identical repeat. */
export interface StoredAnswer<B = unknown> {
  code: number;
  body: B;
  /** The body's JSON text, when this request made it already (sent as it is). */
  text?: string;
  /** Given to a repeat (sent with `Idempotent-Replayed: true`), not made by this request. */
  replayed?: boolean;
}

/** The row's columns that hold the answer an identical repeat is given. */
export interface StoredAnswerColumns<B = unknown> {
  responseCode: number;
  responseBody: B;
}

/**
 * The stored replay answer of a create: the columns to write on the row, and the answer this
 * request gives (the same code and body, so the first answer and every replay agree).
 */
export function storedAnswer<B>(
  code: number,
  body: B,
): { columns: StoredAnswerColumns<B>; answer: StoredAnswer<B> } {
  return { columns: { responseCode: code, responseBody: body }, answer: { code, body } };
}

/**
 * storedAnswer with the body's JSON made once (JsonText): the row stores that text and the reply
 * sends it, instead of each serialising the body again.
 */
export function storedAnswerText<B>(
  code: number,
  body: JsonText<B>,
): { columns: StoredAnswerColumns<JsonText<B>>; answer: StoredAnswer<B> } {
  return {
    columns: { responseCode: code, responseBody: body },
    answer: { code, body: body.value, text: body.text },
  };
}

/** The answer stored on a row, or null when none is stored yet. */
export function storedAnswerOf<B = unknown>(row: {
  responseCode: number | null;
  responseBody: unknown;
}): StoredAnswer<B> | null {
  return row.responseCode === null ? null : { code: row.responseCode, body: row.responseBody as B };
}

/**
 * The answer a repeat is given: `answer` marked replayed (sent with `Idempotent-Replayed: true`).
 * Every create's repeat is built by this, whatever body its object replays.
 */
export function replayedAnswer<A extends StoredAnswer>(answer: A): A {
  return { ...answer, replayed: true };
}

/**
 * Sends a create's answer (first or replayed): its status, `Idempotent-Replayed` for a replay,
 * and for a problem the problem+json type with THIS request's `requestId` (its x-request-id
 * answer header), never the one of the request that stored it. Returns the body to send.
 */
export function sendStoredAnswer<B>(
  req: FastifyRequest,
  res: FastifyReply,
  answer: StoredAnswer<B>,
): B {
  res.status(answer.code);
  if (answer.replayed === true) res.header(REPLAYED_HEADER, 'true');
  if (answer.code < 400) {
    if (answer.text === undefined) return answer.body;
    // The text JSON.stringify(body) gives, sent as fastify sends a serialised body.
    res.type('application/json; charset=utf-8');
    return answer.text as B;
  }
  res.type('application/problem+json');
  return { ...(answer.body as object), requestId: req.correlationId } as B;
}
