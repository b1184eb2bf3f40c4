import express, { Request, Response, Router } from 'express';
import { clock } from '../common/clock';
import { DEFAULT_GATEWAY_CALLS, GatewayCall } from '../config/config';
import { CALL_HANDLERS, CALL_SERVICE } from './calls';
import { findPaymentPayway, findPayoutPayway, type Catalogue } from './payway-catalogue';
import { CallFault, parsePayway } from './faults';
import { isJsonObject, JsonIn, JsonObject, parseJson } from './json-text';
import { gatewayTimeoutPage, serverErrorPage } from './pages';
import {
  Envelope,
  errorEnvelope,
  GatewayError,
  invalid,
  maskAccount,
  okEnvelope,
  refused,
  RequestFields,
  shopNotFound,
  temporary,
} from './protocol';
import { SandboxRuntime, timeoutDelayMs } from './runtime';
import type { RequestLogEntry } from './sandbox.state';
import { requestSignature, signatureMatches } from './signature';

/**
 * `POST /gateway/v1/<path>`: the transport checks of the gateway (POST, JSON, shop, signature),
 * the faults (slow, broken or failed answers), the call itself, and the request log.
 */

const CALLS_BY_PATH = new Map(
  (
    Object.entries(DEFAULT_GATEWAY_CALLS) as [GatewayCall, { path: string; signed: string[] }][]
  ).map(([call, c]) => [c.path, { call, signed: c.signed }]),
);

interface CallSpec {
  call: GatewayCall;
  signed: string[];
}

export function gatewayRouter(rt: SandboxRuntime): Router {
  const router = express.Router();
  router.use(express.text({ type: () => true, limit: '1mb' }));
  router.use((req, res) => {
    handle(rt, req, res).catch((e: unknown) => {
      rt.log.error({ err: e, path: req.path }, 'sandbox call failed');
      if (!res.headersSent) res.status(500).type('html').send(serverErrorPage());
    });
  });
  return router;
}

function sendEnvelope(res: Response, envelope: Envelope): void {
  res.status(envelope.httpStatus).type('application/json').send(envelope.text);
}

/** False when the client went away (it timed out) while a slow answer was being prepared. */
function stillConnected(res: Response): boolean {
  return res.socket !== null && !res.socket.destroyed;
}

function isJsonContentType(header: string | undefined): boolean {
  return header !== undefined && /^application\/json\s*(;|$)/i.test(header.trim());
}

/** The body as logged: card number masked, cvv and sign removed. */
function loggedBody(body: JsonObject): JsonIn {
  const copy: JsonObject = { ...body };
  delete copy.sign;
  const card = copy.card;
  if (isJsonObject(card)) {
    const c: JsonObject = { ...card };
    delete c.cvv;
    if (typeof c.number === 'string') c.number = maskAccount(c.number);
    copy.card = c;
  }
  return copy;
}

function parseBody(req: Request): JsonObject {
  if (!isJsonContentType(req.headers['content-type']))
    throw invalid('Content-Type must be application/json');
  const text = typeof req.body === 'string' ? req.body : '';
  let body: JsonIn;
  try {
    body = parseJson(text);
  } catch {
    throw invalid('the body is not valid JSON');
  }
  if (!isJsonObject(body)) throw invalid('the body must be a JSON object');
  return body;
}

/** A scenario's fault applies only to a payway the catalogue lists (exactly as requested). */
function isListed(catalogue: Catalogue, payway: string): boolean {
  return (
    findPaymentPayway(catalogue, payway) !== undefined ||
    findPayoutPayway(catalogue, payway) !== undefined
  );
}

async function handle(rt: SandboxRuntime, req: Request, res: Response): Promise<void> {
  const started = Date.now();
  const path = req.path.replace(/^\/+/, '');
  const spec = CALLS_BY_PATH.get(path);
  if (spec === undefined) {
    sendEnvelope(res, { ...errorEnvelope(invalid(`unknown method ${path}`)), httpStatus: 404 });
    return;
  }
  if (req.method !== 'POST') {
    sendEnvelope(res, { ...errorEnvelope(invalid('only POST is accepted')), httpStatus: 405 });
    return;
  }
  let body: JsonObject;
  try {
    body = parseBody(req);
  } catch (e) {
    sendEnvelope(res, errorEnvelope(e as GatewayError));
    return;
  }

  const queued = rt.state.faults.take(path);
  const fault =
    queued?.fault ??
    (typeof body.payway === 'string' && isListed(rt.catalogue, body.payway)
      ? parsePayway(body.payway).fault
      : undefined);
  const delay = timeoutDelayMs(rt, queued?.delayMs);
  const entry: RequestLogEntry = {
    time: clock.date().toISOString(),
    path,
    body: loggedBody(body),
    signed_by: signerOf(rt, spec, body, req.headers.sign),
    http_status: null,
    result: null,
    error_code: null,
    fault: fault ?? null,
  };
  const traceparent = req.headers.traceparent;
  if (typeof traceparent === 'string' && /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(traceparent))
    entry.traceparent = traceparent;
  rt.state.requests.push(entry);
  const finish = (httpStatus: number | null, envelope?: Envelope): void => {
    entry.http_status = httpStatus;
    entry.result = envelope?.result ?? null;
    entry.error_code = envelope?.errorCode ?? null;
    rt.log.info(
      {
        path,
        http_status: httpStatus,
        result: entry.result,
        error_code: entry.error_code,
        fault,
        ms: Date.now() - started,
      },
      'sandbox gateway call',
    );
  };

  // Received (logged above), answered later: a slow gateway, whatever the call.
  if (rt.state.settings.latencyMs > 0) await rt.scheduler.sleepReal(rt.state.settings.latencyMs);

  // Faults where nothing is done.
  if (fault === 'http500') {
    finish(500);
    res.status(500).type('html').send(serverErrorPage());
    return;
  }
  if (fault === 'reset') {
    finish(null);
    req.socket.destroy();
    return;
  }
  if (fault === 'timeout_not_done') {
    await rt.scheduler.sleepReal(delay);
    finish(504);
    if (stillConnected(res)) res.status(504).type('html').send(gatewayTimeoutPage());
    return;
  }

  const envelope = perform(rt, spec, new RequestFields(body), req.headers.sign, fault);
  if (fault === 'reset_done') {
    finish(null, envelope);
    req.socket.destroy();
    return;
  }
  if (fault === 'timeout_done') await rt.scheduler.sleepReal(delay);
  finish(envelope.httpStatus, envelope);
  if (stillConnected(res)) sendEnvelope(res, envelope);
}

/** Authenticates and runs the call; the fatal and nonfatal faults shape its answer. */
function perform(
  rt: SandboxRuntime,
  spec: CallSpec,
  fields: RequestFields,
  signHeader: string | string[] | undefined,
  fault: CallFault | undefined,
): Envelope {
  try {
    const shopId = authenticate(rt, spec, fields, signHeader);
    if (fault === 'fatal') throw refused('the payment system refused the operation');
    const data = CALL_HANDLERS[spec.call]({ rt, fields, shopId, fault });
    return fault === 'nonfatal' ? errorEnvelope(temporary()) : okEnvelope(data);
  } catch (e) {
    if (e instanceof GatewayError) return errorEnvelope(e);
    throw e;
  }
}

function givenSign(body: JsonObject, signHeader: string | string[] | undefined): unknown {
  return body.sign ?? (typeof signHeader === 'string' ? signHeader : undefined);
}

/**
 * shop_id hosted here (else 11), then the signature with that shop's secret (else 10: another
 * shop's secret is as wrong as any), then the shop must offer the call's service (else 10).
 */
function authenticate(
  rt: SandboxRuntime,
  spec: CallSpec,
  fields: RequestFields,
  signHeader: string | string[] | undefined,
): number {
  const shopId = fields.int('shop_id');
  const shop = rt.shops.find((s) => s.id === shopId);
  if (shop === undefined) throw shopNotFound();
  const given = givenSign(fields.body, signHeader);
  if (typeof given !== 'string') throw invalid();
  if (!signatureMatches(requestSignature(fields.body, spec.signed, shop.secretKey), given))
    throw invalid();
  const service = CALL_SERVICE[spec.call];
  if (!shop.serves.has(service)) {
    throw refused(
      service === 'payout'
        ? `shop ${shopId} is not an agent shop: payouts and balances need the agent shop`
        : `shop ${shopId} is an agent shop: it takes no payments`,
    );
  }
  return shopId;
}

/** For the request log: which hosted shop's secret made this signature (tests check routing). */
function signerOf(
  rt: SandboxRuntime,
  spec: CallSpec,
  body: JsonObject,
  signHeader: string | string[] | undefined,
): number | null {
  const given = givenSign(body, signHeader);
  if (typeof given !== 'string') return null;
  const shop = rt.shops.find((s) =>
    signatureMatches(requestSignature(body, spec.signed, s.secretKey), given),
  );
  return shop?.id ?? null;
}
