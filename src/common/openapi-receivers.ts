import { addSandboxControls } from './openapi-sandbox';
import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * What the generated document needs beyond the routes' decorators, so a shop's generated client
 * compiles without casts (docs/api.md, "Typed for receivers"; Operations):
 *
 * - `ShopEvent`: the union of every event, named once (`oneOf` with an `objectType`
 *   discriminator), and every place that repeated it inline refers to it instead; an event object
 *   type the routes do not describe yet is declared here (`reconciliation`: `{id, date, status}`).
 * - `extras` (a payway's add-on fields) is a map of strings.
 * - tags in the order a shop reads them: invoices first, operations last.
 * - in sandbox mode, the sandbox's own routes (another port) under a `sandbox` tag.
 */
export function forReceivers(doc: OpenAPIObject, opts: { sandboxOrigin?: string } = {}): OpenAPIObject {
  const schemas = (doc.components ??= {}).schemas ??= {};
  const mapping: Record<string, string> = {};
  for (const [objectType, name] of EVENT_SCHEMAS) {
    if (schemas[name] === undefined && DECLARED[name]) schemas[name] = DECLARED[name];
    if (schemas[name] !== undefined) mapping[objectType] = `#/components/schemas/${name}`;
  }
  schemas.ShopEvent = {
    description:
      'Any shop event, as a webhook POSTs it and the feed returns it: tell them apart by `objectType` (or `type`), then `data` is that object',
    oneOf: Object.values(mapping).map(($ref) => ({ $ref })),
    discriminator: { propertyName: 'objectType', mapping },
  };
  replaceInlineUnions(doc, mapping);
  mapOfStrings(schemas, 'extras');
  orderTags(doc, opts.sandboxOrigin !== undefined);
  if (opts.sandboxOrigin !== undefined) {
    addSandboxRoutes(doc, opts.sandboxOrigin);
    addSandboxControls(doc, opts.sandboxOrigin);
  }
  return doc;
}

/** Every event object type and its schema's name. */
const EVENT_SCHEMAS: ReadonlyArray<[string, string]> = [
  ['invoice', 'InvoiceEvent'],
  ['refund', 'RefundEvent'],
  ['payout', 'PayoutEvent'],
  ['payout_batch', 'PayoutBatchEvent'],
  ['payment_token', 'PaymentTokenEvent'],
  ['reconciliation', 'ReconciliationEvent'],
  ['dispute', 'DisputeEvent'],
  ['payment_link', 'PaymentLinkEvent'],
];

const EVENT_BASE = {
  id: { type: 'string', example: 'evt_019ab3f2-6c1e-7d4a-9b2f-3c5e8a1d7f60' },
  createdAt: { type: 'string', format: 'date-time', example: '2026-01-15T10:02:00.000Z' },
  objectId: { type: 'string', example: '2026-01-14' },
  sequence: { type: 'number', example: 1 },
  keyId: { type: 'string', example: '9f86d081884c' },
};

/** Event schemas no route describes yet (declared, so a receiver's switch is complete). */
const DECLARED: Record<string, Record<string, unknown>> = {
  ReconciliationEvent: {
    type: 'object',
    description: "A day's books reconciled with the gateway",
    properties: {
      ...EVENT_BASE,
      type: { type: 'string', enum: ['reconciliation.completed'], example: 'reconciliation.completed' },
      objectType: { type: 'string', enum: ['reconciliation'], example: 'reconciliation' },
      data: {
        type: 'object',
        description: 'The reconciliation as `GET /admin/reconciliations/{id}` returns it',
        properties: {
          id: { type: 'string', example: 'rec_2026-01-14' },
          date: { type: 'string', format: 'date', example: '2026-01-14' },
          status: { type: 'string', enum: ['balanced', 'variances'], example: 'balanced' },
        },
        required: ['id', 'date', 'status'],
      },
    },
    required: ['id', 'type', 'createdAt', 'objectType', 'objectId', 'sequence', 'data'],
  },
};

/** An inline `oneOf` over event schemas discriminated by objectType becomes `$ref: ShopEvent`. */
function replaceInlineUnions(doc: OpenAPIObject, mapping: Record<string, string>): void {
  const eventRefs = new Set(Object.values(mapping));
  const isUnion = (v: Record<string, unknown>): boolean =>
    Array.isArray(v.oneOf) &&
    (v.discriminator as { propertyName?: string } | undefined)?.propertyName === 'objectType' &&
    (v.oneOf as Array<{ $ref?: string }>).every((s) => s.$ref !== undefined && eventRefs.has(s.$ref));
  const walk = (node: unknown, key: string | null): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, null));
    if (node === null || typeof node !== 'object') return node;
    const obj = node as Record<string, unknown>;
    if (key !== 'ShopEvent' && isUnion(obj)) return { $ref: '#/components/schemas/ShopEvent' };
    for (const [k, v] of Object.entries(obj)) obj[k] = walk(v, k);
    return obj;
  };
  walk(doc.paths, null);
  const schemas = doc.components!.schemas!;
  for (const [name, schema] of Object.entries(schemas)) if (name !== 'ShopEvent') schemas[name] = walk(schema, name) as never;
}

/** A property of that name in any schema is an object of string values. */
function mapOfStrings(schemas: Record<string, unknown>, property: string): void {
  for (const schema of Object.values(schemas)) {
    const props = (schema as { properties?: Record<string, Record<string, unknown>> }).properties;
    const p = props?.[property];
    if (p && (p.type === 'object' || p.type === undefined) && p.$ref === undefined) {
      p.type = 'object';
      p.additionalProperties = { type: 'string' };
    }
  }
}

const TAG_ORDER: ReadonlyArray<[string, string]> = [
  ['invoices', 'Payments: create, read, charge or release a hold'],
  ['refunds', 'Refunds of paid invoices'],
  ['payouts', 'Payouts, batches, quotes, balance'],
  ['payment ways', 'The payment ways the gateway offers'],
  ['events', 'Shop events: the feed (webhooks carry the same events)'],
  ['payer', "The payer's page"],
  ['webhooks', 'Notifications from the gateway'],
  ['admin', 'Operators: approvals, attention, deliveries, reports'],
  ['sandbox', 'The built-in gateway sandbox (sandbox mode only): drive payments while building'],
  ['operations', 'Health and metrics'],
];

/** Tags in reading order (the UI lists them so), and each operation listed under its first tag's place. */
function orderTags(doc: OpenAPIObject, sandbox: boolean): void {
  const used = new Set<string>();
  for (const item of Object.values(doc.paths))
    for (const op of Object.values(item as Record<string, { tags?: string[] }>)) for (const t of op?.tags ?? []) used.add(t);
  if (sandbox) used.add('sandbox');
  const known = TAG_ORDER.filter(([name]) => used.has(name)).map(([name, description]) => ({ name, description }));
  const others = [...used].filter((t) => !TAG_ORDER.some(([name]) => name === t)).sort().map((name) => ({ name }));
  doc.tags = [...known.slice(0, -1), ...others, ...known.slice(-1)];
  const rank = (path: string): number => {
    const ops = Object.values(doc.paths[path] as Record<string, { tags?: string[] }>);
    const tag = ops.find((o) => o?.tags?.length)?.tags?.[0];
    const i = doc.tags!.findIndex((t) => t.name === tag);
    return i < 0 ? doc.tags!.length : i;
  };
  doc.paths = Object.fromEntries(
    Object.keys(doc.paths)
      .map((p, i) => [p, i] as const)
      .sort(([a, i], [b, j]) => rank(a) - rank(b) || i - j)
      .map(([p]) => [p, doc.paths[p]]),
  );
}

const SANDBOX_INVOICE = {
  type: 'object',
  description: "The gateway's invoice record (snake_case, as the gateway writes it)",
  additionalProperties: true,
  example: { id: 1234567, shop_order_id: 'order-1001', status: 4, shop_amount: '100.00', expires_at: '2026-01-22T10:02:00+03:00' },
};

/** The sandbox's control routes a shop drives while building (served by the sandbox, on its own port). */
function addSandboxRoutes(doc: OpenAPIObject, origin: string): void {
  const id = {
    name: 'shopOrderId',
    in: 'path' as const,
    required: true,
    description: "The shop's order id (the gateway's invoice id works too)",
    schema: { type: 'string' },
    example: 'order-1001',
  };
  const envelope = (description: string) => ({
    description,
    content: {
      'application/json': {
        schema: { type: 'object', properties: { result: { type: 'boolean', example: true }, data: SANDBOX_INVOICE } },
      },
    },
  });
  const refused = (description: string) => ({
    description,
    content: {
      'application/json': {
        schema: { type: 'object', properties: { result: { type: 'boolean', example: false }, message: { type: 'string', example: 'no invoice with shop_order_id or invoice id "order-1"' } } },
      },
    },
  });
  const action = (verb: string, summary: string) => ({
    tags: ['sandbox'],
    summary,
    operationId: `sandbox_${verb}`,
    parameters: [id],
    security: [],
    responses: {
      200: envelope('The invoice after the payer acted'),
      404: refused('No such invoice'),
      409: refused('The invoice does not await payment'),
    },
  });
  const servers = [{ url: origin, description: 'The built-in gateway sandbox' }];
  doc.paths['/sandbox/invoices/{shopOrderId}'] = {
    servers,
    get: {
      tags: ['sandbox'],
      summary: "The sandbox's record of an invoice (status, expires_at of a hold, payment token)",
      operationId: 'sandbox_invoice',
      parameters: [id],
      security: [],
      responses: { 200: envelope('The invoice as invoice/check returns it'), 404: refused('No such invoice') },
    },
  } as never;
  doc.paths['/sandbox/invoices/{shopOrderId}/pay'] = { servers, post: action('pay', 'Pay an invoice as its payer would (a hold is held until SANDBOX_HOLD_TTL_S)') } as never;
  doc.paths['/sandbox/invoices/{shopOrderId}/decline'] = { servers, post: action('decline', 'Decline an invoice as its payer would') } as never;
  doc.paths['/sandbox/invoices/{shopOrderId}/chargeback'] = {
    servers,
    post: {
      tags: ['sandbox'],
      summary:
        "Report a chargeback of a paid invoice, as the gateway's manager would: the payment shop's available balance drops by the amount (the gateway's interface has no chargeback call). Record it with POST /api/v1/admin/invoices/{shopOrderId}/disputes; reconciliation shows the difference until the dispute is resolved lost or accepted",
      operationId: 'sandbox_chargeback',
      parameters: [id],
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['amount'],
              properties: { amount: { type: 'string', description: 'Decimal string above zero, at most what is left of the payment' } },
            },
            example: { amount: '30.00' },
          },
        },
      },
      responses: {
        200: {
          description: 'The chargeback taken: its amount, the invoice’s total charged back, the shop’s available balance after it',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { result: { type: 'boolean', example: true }, data: { type: 'object', additionalProperties: true } },
              },
              example: {
                result: true,
                data: { shop_order_id: 'order-1001', invoice_id: 1234567, shop_id: 1001, currency: 643, amount: 30.0, charged_back: 30.0, available: 970.0 },
              },
            },
          },
        },
        400: refused('amount is not a decimal string above zero'),
        404: refused('No such invoice'),
        409: refused('The invoice is not paid, or the amount is more than is left of the payment'),
      },
    },
  } as never;
  const reading = {
    now: { type: 'string', format: 'date-time', example: '2026-12-08T10:00:00.000Z' },
    offsetSeconds: { type: 'number', example: 604800 },
  };
  const clockAnswer = (description: string, properties: Record<string, unknown>) => ({
    description,
    content: {
      'application/json': {
        schema: { type: 'object', properties: { result: { type: 'boolean', example: true }, data: { type: 'object', properties } } },
      },
    },
  });
  doc.paths['/sandbox/clock'] = {
    servers,
    get: {
      tags: ['sandbox'],
      summary: "The sandbox clock: the service's time and how far it was moved",
      operationId: 'sandbox_clock',
      security: [],
      responses: { 200: clockAnswer('The clock', reading) },
    },
  } as never;
  doc.paths['/sandbox/clock/advance'] = {
    servers,
    post: {
      tags: ['sandbox'],
      summary: 'Move the service and the sandbox forward together; what fell due runs, in order, before the answer',
      operationId: 'sandbox_clock_advance',
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { type: 'object', required: ['seconds'], properties: { seconds: { type: 'number', minimum: 0, exclusiveMinimum: true } } },
            example: { seconds: 86400 },
          },
        },
      },
      responses: {
        200: clockAnswer('The clock after the move, the jobs that did something, the sandbox tasks run and the shop events emitted', {
          ...reading,
          advancedSeconds: { type: 'number', example: 86400 },
          jobs: { type: 'array', items: { type: 'object', properties: { job: { type: 'string', example: 'hold-policy' }, runs: { type: 'integer' }, results: { type: 'array', items: {} } } } },
          sandboxTasks: { type: 'integer' },
          events: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, type: { type: 'string', example: 'invoice.expired' }, objectType: { type: 'string' }, objectId: { type: 'string' } } } },
        }),
        400: refused('Not a move forward (seconds missing, 0 or below, or too large)'),
      },
    },
  } as never;
}
