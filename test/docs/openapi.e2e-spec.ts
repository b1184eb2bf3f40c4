// Over 500 lines on purpose: one service and database, started once, serve its tests; most of
// the file is the typed-client and handler fixtures those tests compile against the document.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { startService, type RunningService } from '../../src/bootstrap';
import { loadConfig } from '../../src/config/config';
import { generateOpenApi } from '../../src/openapi';
import { createTestDatabase } from '../support/database';
import { freePort } from '../support/ports';
import { PAYMENT, PAYOUT } from '../support/payways';

type Json = Record<string, unknown>;
type Schema = Json & {
  $ref?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
};
interface Media {
  schema?: Schema;
  example?: unknown;
  examples?: unknown;
}
interface Operation {
  parameters?: Array<{ name: string; in: string; schema?: Schema }>;
  requestBody?: { content?: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}

const PROBLEM_JSON = 'application/problem+json';
/** Liveness answers 200 or nothing at all: it has no error of its own to describe. */
const NO_PROBLEMS = new Set(['GET /health']);

/** A schema "has an example" when it carries one, or every property (through refs, arrays and allOf) does. */
function missingExamples(
  schema: Schema | undefined,
  doc: Json,
  at: string,
  seen = new Set<string>(),
): string[] {
  if (!schema) return [`${at}: no schema`];
  if (schema.example !== undefined || schema.examples !== undefined || Array.isArray(schema.enum))
    return [];
  if (schema.$ref) {
    if (seen.has(schema.$ref)) return [];
    const name = schema.$ref.split('/').pop()!;
    const target = ((doc.components as Json).schemas as Record<string, Schema>)[name];
    return missingExamples(target, doc, at, new Set([...seen, schema.$ref]));
  }
  if (schema.allOf) return schema.allOf.flatMap((s) => missingExamples(s, doc, at, seen));
  // One of several shapes (events by objectType, payways by direction): each needs its examples.
  if (schema.oneOf) return schema.oneOf.flatMap((s) => missingExamples(s, doc, at, seen));
  if (schema.type === 'array') return missingExamples(schema.items, doc, `${at}[]`, seen);
  if (schema.properties && Object.keys(schema.properties).length > 0) {
    return Object.entries(schema.properties).flatMap(([k, s]) =>
      missingExamples(s, doc, `${at}.${k}`, seen),
    );
  }
  return [`${at}: no example`];
}

function mediaProblems(
  content: Record<string, Media> | undefined,
  doc: Json,
  at: string,
): string[] {
  if (!content || Object.keys(content).length === 0) return [`${at}: no content`];
  return Object.entries(content).flatMap(([type, media]) => {
    if (!media.schema) return [`${at} ${type}: no schema`];
    if (media.example !== undefined || media.examples !== undefined) return [];
    return missingExamples(media.schema, doc, `${at} ${type}`);
  });
}

/** Every rule a route's description must meet; one line per breach, naming the route. */
export function contractProblems(doc: Json): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(
    doc.paths as Record<string, Record<string, Operation>>,
  )) {
    for (const [method, op] of Object.entries(item)) {
      const route = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses);
      const success = statuses.filter((s) => /^[23]\d\d$/.test(s));
      if (success.length === 0) out.push(`${route}: no success response`);
      for (const s of success.filter((x) => x.startsWith('2') && x !== '204')) {
        out.push(...mediaProblems(op.responses[s].content, doc, `${route} ${s}`));
      }
      if (op.requestBody)
        out.push(...mediaProblems(op.requestBody.content, doc, `${route} request body`));
      for (const p of op.parameters ?? []) {
        if (!p.schema) out.push(`${route}: parameter ${p.name} has no schema`);
      }
      const errors = statuses.filter((s) => /^[45]\d\d$/.test(s));
      if (errors.length === 0 && !NO_PROBLEMS.has(route))
        out.push(`${route}: no problem+json error responses`);
      // A page for people (the payer's pages) answers its refusals as pages too.
      const page = success.some((s) => op.responses[s].content?.['text/html'] !== undefined);
      for (const s of errors) {
        const content = op.responses[s].content ?? {};
        if (page && content['text/html'] && !content[PROBLEM_JSON]) continue;
        if (!content[PROBLEM_JSON]) out.push(`${route} ${s}: not application/problem+json`);
        else
          out.push(
            ...mediaProblems({ [PROBLEM_JSON]: content[PROBLEM_JSON] }, doc, `${route} ${s}`),
          );
      }
      if (/\{\w+\}/.test(path) && !errors.includes('404'))
        out.push(`${route}: a path parameter, but no 404`);
    }
  }
  return out;
}

/**
 * @apidevtools/swagger-parser, in a child process: it is CommonJS requiring an ES module, which
 * plain Node (>= 20.19) allows and Jest's module loader does not.
 */
async function validateWithSwaggerParser(doc: Json): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-validate-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  const script = `require('@apidevtools/swagger-parser').validate(process.argv[1]).then(
    () => console.log('valid'), (e) => { console.log(e.message); process.exit(1); })`;
  try {
    return await new Promise((resolve) => {
      execFile(
        process.execPath,
        ['-e', script, file],
        { cwd: process.cwd() },
        (_err, stdout, stderr) => resolve(`${stdout}${stderr}`.trim()),
      );
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A shop's client on the generated types: create invoice → get it → refund it → pay out. */
const CLIENT = `
import type { paths } from './api';

type Body<P extends keyof paths, M extends keyof paths[P]> =
  paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Answer<P extends keyof paths, M extends keyof paths[P], S extends number> =
  paths[P][M] extends { responses: { [K in S]: { content: { 'application/json': infer B } } } } ? B : never;

async function call<T>(base: string, key: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: 'Bearer ' + key, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(method + ' ' + path + ': ' + res.status);
  return (await res.json()) as T;
}

export async function scenario(base: string, key: string): Promise<string> {
  const create: Body<'/api/v1/invoices', 'post'> = {
    shopOrderId: 'order-1', amount: '100.00', currency: 643, payway: '${PAYMENT.card}', description: 'Books',
  };
  const extras: Record<string, string> = { phone: '+79001234567' };
  const withExtras: Body<'/api/v1/invoices', 'post'> = {
    shopOrderId: 'order-1w', amount: '100.00', currency: 643, payway: '${PAYMENT.wallet}', extras,
  };
  const phone: string | undefined = withExtras.extras?.phone;
  void phone;
  const created = await call<Answer<'/api/v1/invoices', 'post', 201>>(base, key, 'POST', '/api/v1/invoices', create);
  const id: string = created.shopOrderId;
  const invoice = await call<Answer<'/api/v1/invoices/{shopOrderId}', 'get', 200>>(
    base, key, 'GET', '/api/v1/invoices/' + encodeURIComponent(id),
  );
  const paid: 'succeeded' | 'other' = invoice.status === 'succeeded' ? 'succeeded' : 'other';
  const refundedSoFar: string = invoice.refundedAmount;
  const refundBody: Body<'/api/v1/invoices/{shopOrderId}/refunds', 'post'> = { shopRefundId: 'refund-1', amount: invoice.amount };
  const refund = await call<Answer<'/api/v1/invoices/{shopOrderId}/refunds', 'post', 201>>(
    base, key, 'POST', '/api/v1/invoices/' + encodeURIComponent(id) + '/refunds', refundBody,
  );
  const payoutBody: Body<'/api/v1/payouts', 'post'> = {
    shopPaymentId: 'payout-1', amount: '500.00', amountType: 'ps_amount', shopCurrency: 643, payway: '${PAYOUT.card}', account: '4111111111111111',
  };
  const payout = await call<Answer<'/api/v1/payouts', 'post', 202>>(base, key, 'POST', '/api/v1/payouts', payoutBody);
  const masked: string = payout.account;
  // @ts-expect-error amounts are decimal strings, never JSON numbers
  const wrong: Body<'/api/v1/invoices', 'post'> = { shopOrderId: 'order-2', amount: 100, currency: 643, payway: '${PAYMENT.card}' };
  void wrong;
  const ways = await call<Answer<'/api/v1/payways', 'get', 200>>(base, key, 'GET', '/api/v1/payways?direction=payment');
  const bounds: string[] =
    ways.direction === 'payment'
      ? ways.groups.flatMap((g) => g.payways.map((p) => (p.minAmount ?? '') + '..' + (p.maxAmount ?? '') + (p.isActive ? '' : ' inactive')))
      : ways.groups.flatMap((g) => g.payways.map((p) => Object.keys(p.accountInfoConfig).join(',')));
  return [paid, refundedSoFar, refund.status, refund.amount, payout.status, masked, ...bounds].join(' ');
}
`;

/**
 * A shop's webhook handler on the generated types: the event (webhook body or GET /events item)
 * is told apart by `objectType` or `type`, and `data` is read typed, without a cast.
 */
const WEBHOOK_HANDLER = `
import type { paths } from './api';

type Answer<P extends keyof paths, M extends keyof paths[P], S extends number> =
  paths[P][M] extends { responses: { [K in S]: { content: { 'application/json': infer B } } } } ? B : never;
export type ShopEvent = Answer<'/api/v1/events/{id}', 'get', 200>;
type FeedEvent = Answer<'/api/v1/events', 'get', 200>['items'][number];

export function byObject(event: ShopEvent): string {
  switch (event.objectType) {
    case 'invoice': {
      const status: 'succeeded' | 'rejected' | 'held' | (string & {}) = event.data.status;
      const order: string = event.data.shopOrderId;
      const price: string | null = event.data.payerPrice;
      const refundable: string = event.data.refundableAmount;
      const type: \`invoice.\${string}\` = event.type;
      return [type, order, status, price ?? '-', refundable].join(' ');
    }
    case 'refund': {
      const status: 'WAITING' | 'SUCCESS' | 'FAILED' = event.data.status;
      return [event.data.shopRefundId, event.data.shopOrderId, status, event.data.amount].join(' ');
    }
    case 'payout': {
      return [event.data.shopPaymentId, event.data.status, event.data.account].join(' ');
    }
    case 'payout_batch': {
      const sent: number = event.data.counts.sent;
      return [event.data.batchId, event.data.status, sent].join(' ');
    }
    case 'payment_token': {
      const status: 'active' | 'revoked' | 'expired' = event.data.status;
      const type: 'payment_token.revoked' = event.type;
      return [type, event.data.id, event.data.invoiceShopOrderId, status].join(' ');
    }
    case 'reconciliation': {
      const day: string = event.data.date;
      return [event.type, event.data.id, day, event.data.status].join(' ');
    }
    case 'dispute': {
      const status: 'open' | 'won' | 'lost' | 'accepted' = event.data.status;
      const type: 'dispute.opened' | 'dispute.won' | 'dispute.lost' | 'dispute.accepted' = event.type;
      return [type, event.data.id, event.data.invoice, status, event.data.amount].join(' ');
    }
    case 'payment_link': {
      const status: 'active' | 'paid' | 'expired' | 'deactivated' = event.data.status;
      const paidBy: string[] = event.data.invoices;
      return [event.type, event.data.id, event.data.amount, status, paidBy.join(',')].join(' ');
    }
    default: {
      const none: never = event;
      return none;
    }
  }
}

export function byType(event: FeedEvent): string {
  switch (event.type) {
    case 'invoice.succeeded':
      return event.data.shopOrderId + ' paid ' + event.data.amount;
    case 'refund.success':
      return event.data.shopRefundId + ' refunded of ' + event.data.shopOrderId;
    case 'payout.failed':
      return event.data.shopPaymentId + ' failed';
    default:
      return event.objectId;
  }
}
`;

/**
 * A webhook receiver typed by the named union alone (components.schemas.ShopEvent): a switch over
 * every event object type, exhaustive, reading each `data` without a cast; a problem body read
 * with its declared extension fields.
 */
const NAMED_UNION_HANDLER = `
import type { components } from './api';

type ShopEvent = components['schemas']['ShopEvent'];
type Problem = components['schemas']['ProblemDetails'];

export function receive(body: string): string {
  const event = JSON.parse(body) as ShopEvent;
  switch (event.objectType) {
    case 'invoice':
      return event.data.shopOrderId + ' ' + event.data.status;
    case 'refund':
      return event.data.shopRefundId + ' ' + event.data.status;
    case 'payout':
      return event.data.shopPaymentId + ' ' + event.data.status;
    case 'payout_batch':
      return event.data.batchId + ' ' + event.data.status;
    case 'payment_token':
      return event.data.id + ' ' + event.data.status;
    case 'reconciliation':
      return event.data.date + ' ' + event.data.status;
    case 'dispute':
      return event.data.invoice + ' ' + event.data.status;
    case 'payment_link':
      return event.data.id + ' ' + event.data.status;
    default: {
      const none: never = event;
      return none;
    }
  }
}

export function explain(problem: Problem): string {
  const paid: string | undefined = problem.paidAmount;
  const requested: string | undefined = problem.requestedAmount;
  const status: string | undefined = problem.currentStatus;
  const code: number | null | undefined = problem.gatewayErrorCode;
  const id: string | undefined = problem.requestId;
  return [problem.type, paid, requested, status, code, id].join(' ');
}
`;

/** The same handler reading a field the object does not have: it must not type-check. */
const WRONG_HANDLER = `
import type { paths } from './api';

type Answer<P extends keyof paths, M extends keyof paths[P], S extends number> =
  paths[P][M] extends { responses: { [K in S]: { content: { 'application/json': infer B } } } } ? B : never;
type ShopEvent = Answer<'/api/v1/events/{id}', 'get', 200>;

export function wrong(event: ShopEvent): string {
  switch (event.type) {
    case 'invoice.succeeded':
      return event.data.shopPaymentId;
    case 'refund.failed':
      return event.data.payerPrice ?? '';
    default:
      return event.objectType === 'payout' ? event.data.shopRefundId : '';
  }
}
`;

/** Type-checks the files (beside the client generated from `doc`); the diagnostics, one line each. */
async function typeCheck(doc: Json, files: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-client-'));
  try {
    writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(structuredClone(doc) as never)));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const program = ts.createProgram(
      Object.keys(files).map((name) => join(dir, name)),
      {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
        types: [],
        skipLibCheck: true,
      },
    );
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file
        ? `${d.file.fileName.slice(dir.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}`
        : '';
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('OpenAPI contract', () => {
  let service: RunningService;
  let drop: () => Promise<void>;
  let served: Json;

  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    service = await startService(
      loadConfig({
        PORT: String(await freePort()),
        DATABASE_URL: db.url,
        // No gateway call is made in this suite: a closed port stands in for the gateway.
        GATEWAY_BASE_URL: 'http://127.0.0.1:9/gateway/v1/',
        GATEWAY_SHOP_ID: '1',
        GATEWAY_SECRET_KEY: 'openapi-secret',
        API_KEYS: 'openapi-shop-key-0123',
        ADMIN_API_KEYS: 'openapi-admin-key-0123',
        SCHEDULER_ENABLED: 'false',
        DOCS_ENABLED: 'true',
        ALLOW_INSECURE_HTTP: 'true',
        DATA_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 3).toString('base64')}`,
      }),
      { host: '127.0.0.1' },
    );
    served = (await (await fetch(`${service.url}/docs-json`)).json()) as Json;
  });

  afterAll(async () => {
    await service?.close();
    await drop?.();
  });

  it('/docs-json is a valid OpenAPI 3 document', async () => {
    expect(served.openapi).toMatch(/^3\./);
    await expect(validateWithSwaggerParser(served)).resolves.toBe('valid');
  });

  it('describes every route with request and response schemas, examples and problem+json errors', () => {
    expect(Object.keys(served.paths as Json).length).toBeGreaterThan(20);
    expect(contractProblems(served)).toEqual([]);
  });

  it('the rules catch a route without examples, without problems, or with a plain-JSON error', () => {
    const broken = structuredClone(served) as { paths: Record<string, Record<string, Operation>> };
    const op = broken.paths['/api/v1/invoices'].post;
    op.requestBody!.content!['application/json'] = {
      schema: { type: 'object', properties: { amount: { type: 'string' } } },
    };
    op.responses['409'] = { content: { 'application/json': { schema: { type: 'object' } } } };
    broken.paths['/api/v1/balance'].get.responses = { '200': { content: {} } };
    expect(contractProblems(broken as unknown as Json).sort()).toEqual([
      'GET /api/v1/balance 200: no content',
      'GET /api/v1/balance: no problem+json error responses',
      'POST /api/v1/invoices 409: not application/problem+json',
      'POST /api/v1/invoices request body application/json.amount: no example',
    ]);
  });

  it('the committed openapi.json is what the service serves (`npm run openapi` rewrites it)', async () => {
    const committed = readFileSync(join(process.cwd(), 'openapi.json'), 'utf8');
    const current = `${JSON.stringify(served, null, 2)}\n`;
    if (committed !== current) {
      const seen = join(tmpdir(), 'openapi.served.json');
      writeFileSync(seen, current);
      throw new Error(
        `openapi.json is out of date: run \`npm run openapi\` and commit it (served document: ${seen})`,
      );
    }
    // The script builds the document without a database; it must be the same document.
    expect(await generateOpenApi()).toBe(current);
  });

  it('a client generated with openapi-typescript type-checks against the real shapes', async () => {
    expect(await typeCheck(served, { 'client.ts': CLIENT })).toEqual([]);
  });

  it('a generated-client webhook handler switches on objectType or type and reads data without a cast', async () => {
    expect(await typeCheck(served, { 'handler.ts': WEBHOOK_HANDLER })).toEqual([]);
  });

  it('a receiver typed by the named ShopEvent union switches over every event object type; problems declare their fields', async () => {
    expect(await typeCheck(served, { 'receiver.ts': NAMED_UNION_HANDLER })).toEqual([]);
  });

  it('the sandbox’s chargeback route is documented under `sandbox` with an example', async () => {
    const sandbox = JSON.parse(await generateOpenApi({ sandboxOrigin: 'http://localhost:4010' })) as Json;
    const paths = sandbox.paths as Record<string, Record<string, { tags?: string[]; requestBody?: Json }>>;
    const chargeback = paths['/sandbox/invoices/{shopOrderId}/chargeback'];
    expect(chargeback.post.tags).toEqual(['sandbox']);
    expect(JSON.stringify(chargeback.post.requestBody)).toContain('"example":{"amount":"30.00"}');
  });

  it('the named union covers every event object type, reconciliation included, and is what the routes refer to', () => {
    const schemas = (served.components as Json).schemas as Record<string, Schema>;
    const union = schemas.ShopEvent as Schema & { discriminator: { mapping: Record<string, string> } };
    expect(Object.keys(union.discriminator.mapping)).toEqual([
      'invoice',
      'refund',
      'payout',
      'payout_batch',
      'payment_token',
      'reconciliation',
      'dispute',
      'payment_link',
    ]);
    expect(union.oneOf).toHaveLength(8);
    expect(schemas.ReconciliationEvent.properties!.data.required).toEqual(['id', 'date', 'status']);
    // Nowhere else is the union spelled out inline.
    const text = JSON.stringify({ ...served, components: { schemas: { ...schemas, ShopEvent: undefined } } });
    expect(text).not.toContain('"propertyName":"objectType"');
  });

  it('extras is a map of strings; problem extension fields are declared', () => {
    const schemas = (served.components as Json).schemas as Record<string, Schema>;
    const extras = Object.values(schemas).find((s) => s.properties?.extras)!.properties!.extras;
    expect(extras).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
    for (const field of ['requestId', 'paidAmount', 'requestedAmount', 'currentStatus', 'gatewayErrorCode', 'gatewayMessage', 'fatal', 'errors'])
      expect(Object.keys(schemas.ProblemDetails.properties!)).toContain(field);
  });

  it('invoices come first in /docs; the sandbox routes are listed under `sandbox` in sandbox mode only', async () => {
    const tags = (served.tags as Array<{ name: string }>).map((t) => t.name);
    expect(tags[0]).toBe('invoices');
    expect(tags).not.toContain('sandbox');
    const firstPath = Object.keys(served.paths as Json)[0];
    expect(firstPath).toMatch(/^\/api\/v1\/invoices/);
    expect(JSON.stringify(served.paths)).not.toContain('/sandbox/');

    const sandbox = JSON.parse(await generateOpenApi({ sandboxOrigin: 'http://localhost:4010' })) as Json;
    const paths = sandbox.paths as Record<string, Record<string, { tags?: string[] }> & { servers?: Array<{ url: string }> }>;
    expect((sandbox.tags as Array<{ name: string }>).map((t) => t.name)).toContain('sandbox');
    const pay = paths['/sandbox/invoices/{shopOrderId}/pay'];
    expect(pay.post.tags).toEqual(['sandbox']);
    expect(pay.servers).toEqual([expect.objectContaining({ url: 'http://localhost:4010' })]);
    await expect(validateWithSwaggerParser(sandbox)).resolves.toBe('valid');
  });

  it('a handler reading a field its object does not have fails to type-check, naming the field', async () => {
    const errors = await typeCheck(served, { 'wrong.ts': WRONG_HANDLER });
    expect(errors).toEqual([
      expect.stringMatching(/^wrong\.ts:11 .*'shopPaymentId'/),
      expect.stringMatching(/^wrong\.ts:13 .*'payerPrice'/),
      expect.stringMatching(/^wrong\.ts:15 .*'shopRefundId'/),
    ]);
  });

  it('every event shape is typed: oneOf by objectType, type enums per object, data the object’s schema', () => {
    const schemas = (served.components as Json).schemas as Record<string, Schema>;
    const ref = ((served.paths as Json)['/api/v1/events/{id}'] as Record<string, Operation>).get
      .responses['200'].content!['application/json'].schema!;
    expect(ref).toEqual({ $ref: '#/components/schemas/ShopEvent' });
    const event = schemas.ShopEvent;
    expect(event.discriminator).toEqual({
      propertyName: 'objectType',
      mapping: {
        invoice: '#/components/schemas/InvoiceEvent',
        refund: '#/components/schemas/RefundEvent',
        payout: '#/components/schemas/PayoutEvent',
        payout_batch: '#/components/schemas/PayoutBatchEvent',
        payment_token: '#/components/schemas/PaymentTokenEvent',
        reconciliation: '#/components/schemas/ReconciliationEvent',
        dispute: '#/components/schemas/DisputeEvent',
        payment_link: '#/components/schemas/PaymentLinkEvent',
      },
    });
    expect(schemas.PayoutBatchEvent.properties!.type.enum).toEqual(['payout_batch.completed']);
    expect(JSON.stringify(schemas.PayoutBatchEvent.properties!.data)).toContain(
      '"#/components/schemas/PayoutBatch"',
    );
    const page = schemas.ShopEventPage.properties!.items.items!;
    expect(page).toEqual(ref);
    for (const [objectType, name, data] of [
      ['invoice', 'InvoiceEvent', 'Invoice'],
      ['refund', 'RefundEvent', 'RefundView'],
      ['payout', 'PayoutEvent', 'PayoutView'],
      ['payment_token', 'PaymentTokenEvent', 'PaymentToken'],
      ['dispute', 'DisputeEvent', 'DisputeView'],
      ['payment_link', 'PaymentLinkEvent', 'PaymentLink'],
    ]) {
      const props = schemas[name].properties!;
      expect(props.objectType.enum).toEqual([objectType]);
      const types = props.type.enum as string[];
      expect(types.length).toBeGreaterThan(objectType === 'payment_token' ? 0 : 2);
      expect(types.every((t) => t.startsWith(`${objectType}.`))).toBe(true);
      expect(JSON.stringify(props.data)).toContain(`"#/components/schemas/${data}"`);
      expect(props.data.additionalProperties).toBeUndefined();
    }
  });

  it('the bearer scheme is an opaque API key, not a JWT', () => {
    const schemes = (served.components as Json).securitySchemes as Record<string, Json>;
    expect(schemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.bearer.bearerFormat).toBeUndefined();
    expect(String(schemes.bearer.description)).toMatch(/opaque/);
    expect(JSON.stringify(served)).not.toMatch(/JWT/i);
  });
});
