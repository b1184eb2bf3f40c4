import { applyDecorators, type INestApplication, type Type } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
  DocumentBuilder,
  getSchemaPath,
  type OpenAPIObject,
  SwaggerModule,
} from '@nestjs/swagger';
import type { ContentObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { forReceivers } from './openapi-receivers';
import { PROBLEM_BASE } from './problem.filter';

/**
 * OpenAPI building blocks for routes. A new route needs: its request DTO with an `example` on
 * every property, a response schema class (`@ApiOkResponse({ type: XView })`, or
 * `pageOf(XView)` for lists) with an `example` on every property, and `@ApiProblems(...)` naming
 * the error statuses it can answer. test/docs/openapi.e2e-spec.ts fails, naming the route, otherwise.
 */

export const PROBLEM_JSON = 'application/problem+json';

export class FieldErrorSchema {
  @ApiProperty({ example: 'amount' }) field: string;
  @ApiProperty({ example: 'must be a decimal string such as "100.10"' }) message: string;
}

/** RFC 9457 problem details, as ProblemFilter writes them; extension members vary by `type`. */
export class ProblemDetails {
  @ApiProperty({ format: 'uri', example: `${PROBLEM_BASE}validation-failed` }) type: string;
  @ApiProperty({ example: 'Request validation failed' }) title: string;
  @ApiProperty({ example: 400 }) status: number;
  @ApiProperty({ example: 'amount: must be a decimal string such as "100.10"' }) detail: string;
  @ApiPropertyOptional({ description: 'The request path', example: '/api/v1/invoices' })
  instance?: string;
  @ApiPropertyOptional({
    description: 'On 500 and 503: the request id again (older name)',
    example: '0b6f8f4e-4c1e-4f1a-9a59-2f7f1d0f3a11',
  })
  correlationId?: string;
  @ApiPropertyOptional({
    description:
      "Every problem: the request's id, as its x-request-id answer header (the caller's own when it was 1-64 characters of [A-Za-z0-9._-]); the access log line carries it",
    example: 'shop-req-20260115-0001',
  })
  requestId?: string;
  @ApiPropertyOptional({ description: 'refund-exceeds-paid-amount, refund-exceeds-refundable: the amount paid', example: '100.00' })
  paidAmount?: string;
  @ApiPropertyOptional({ description: 'refund-exceeds-paid-amount, refund-exceeds-refundable: refunded or still pending', example: '60.00' })
  refundedOrPending?: string;
  @ApiPropertyOptional({ description: 'refund-exceeds-paid-amount: the amount this refund asked for', example: '50.00' })
  requestedAmount?: string;
  @ApiPropertyOptional({
    description:
      'refund-exceeds-refundable (and refund-exceeds-paid-amount, "0.00" there): the invoice’s disputes open, lost or accepted, which no refund may take',
    example: '30.00',
  })
  disputedAmount?: string;
  @ApiPropertyOptional({ description: 'gateway-evidence-required: what the gateway answered', example: 'no answer (connect refused)' })
  gatewayAnswer?: string;
  @ApiPropertyOptional({ description: 'gateway-evidence-required: the evidence the chosen status needs', example: "the gateway's record of this payout saying failed (the gateway could not be asked)" })
  missing?: string;
  @ApiPropertyOptional({ description: 'cap-exceeded: the cap (daily or recipientDaily)', example: 'daily' })
  cap?: string;
  @ApiPropertyOptional({ description: 'cap-exceeded, insufficient-balance: the currency (ISO 4217 numeric)', example: 643 })
  currency?: number;
  @ApiPropertyOptional({ description: 'cap-exceeded: the cap', example: '100000.00' })
  limit?: string;
  @ApiPropertyOptional({ description: 'cap-exceeded: used of it today (UTC)', example: '95000.00' })
  used?: string;
  @ApiPropertyOptional({ description: 'cap-exceeded: still allowed today', example: '5000.00' })
  remaining?: string;
  @ApiPropertyOptional({ description: 'cap-exceeded: what this payout asked for', example: '7000.00' })
  requested?: string;
  @ApiPropertyOptional({ description: 'insufficient-balance: the agent shop balance', example: '1000.00' })
  available?: string;
  @ApiPropertyOptional({ description: 'insufficient-balance: payouts sent and not final', example: '200.00' })
  inFlight?: string;
  @ApiPropertyOptional({ description: 'insufficient-balance: what this payout needs', example: '900.00' })
  needed?: string;
  @ApiPropertyOptional({ description: 'insufficient-balance: how much is missing', example: '100.00' })
  shortBy?: string;
  @ApiPropertyOptional({
    type: [FieldErrorSchema],
    description: 'validation-failed: one entry per bad field',
  })
  errors?: FieldErrorSchema[];
  @ApiPropertyOptional({
    description: 'invalid-state: the status that refused the operation',
    example: 'succeeded',
  })
  currentStatus?: string;
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description: 'gateway-error: the gateway error code',
    example: 10,
  })
  gatewayErrorCode?: number | null;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'gateway-error: the gateway message',
    example: 'Bad signature',
  })
  gatewayMessage?: string | null;
  @ApiPropertyOptional({
    type: Boolean,
    nullable: true,
    description: 'gateway-error: true when the operation is over, null when not known',
    example: true,
  })
  fatal?: boolean | null;
  @ApiPropertyOptional({
    description: 'cursor-expired: the oldest cursor the feed still serves; continue from it',
    example: 'cDkwMDAx',
  })
  oldestCursor?: string;
}

const problem = (
  status: number,
  code: string,
  title: string,
  detail: string,
  extra: Record<string, unknown> = {},
) => ({
  type: PROBLEM_BASE + code,
  title,
  status,
  detail,
  instance: '/api/v1/invoices',
  ...extra,
  requestId: 'shop-req-20260115-0001',
});

/** What each status means on this API, with an example body. */
export const PROBLEMS: Record<number, { description: string; example: Record<string, unknown> }> = {
  400: {
    description:
      'Invalid request: the body, a parameter or a field is wrong (each named in `errors`); nothing was written',
    example: problem(
      400,
      'validation-failed',
      'Request validation failed',
      'amount: must be a decimal string such as "100.10"',
      {
        errors: [{ field: 'amount', message: 'must be a decimal string such as "100.10"' }],
      },
    ),
  },
  401: {
    description: 'No valid bearer key',
    example: problem(
      401,
      'unauthorized',
      'Unauthorized',
      'A valid bearer key is required: Authorization: Bearer <key>',
    ),
  },
  403: {
    description: 'The key may not use this route (admin role, or a scope the key lacks)',
    example: problem(403, 'forbidden', 'Forbidden', 'This route needs the admin role'),
  },
  404: {
    description: 'No such object',
    example: problem(404, 'not-found', 'Not found', 'invoice order-1001 does not exist'),
  },
  409: {
    description:
      'The id was used with another body, or the object is in a status that does not allow this',
    example: problem(
      409,
      'idempotency-conflict',
      'Idempotency key reused',
      'shopOrderId order-1001 was already used with a different request body',
    ),
  },
  410: {
    description:
      'Older than the retention (RETENTION_EVENTS_DAYS): a feed cursor before the oldest served event, or a pruned event',
    example: problem(
      410,
      'cursor-expired',
      'Cursor older than the feed retention',
      'Events older than RETENTION_EVENTS_DAYS are no longer in the feed: continue from oldestCursor',
      { oldestCursor: 'cDkwMDAx' },
    ),
  },
  413: {
    description: 'The body is larger than 64 kB',
    example: problem(
      413,
      'payload-too-large',
      'Payload Too Large',
      'The request body is too large',
    ),
  },
  415: {
    description: 'The body is not JSON: send it with Content-Type: application/json',
    example: problem(
      415,
      'unsupported-media-type',
      'Unsupported Media Type',
      'The request body must be JSON, sent with Content-Type: application/json (got application/x-www-form-urlencoded)',
      { errors: [{ field: 'Content-Type', message: 'must be application/json' }] },
    ),
  },
  422: {
    description: 'Understood but refused by a business rule',
    example: problem(
      422,
      'refund-exceeds-paid-amount',
      'Refund exceeds the paid amount',
      'refunds would total 150.00 of 100.00 paid',
    ),
  },
  429: {
    description:
      'Past the rate limit (RATE_LIMIT_PER_KEY_RPS per key, RATE_LIMIT_PUBLIC_PER_IP_RPS per address); the Retry-After header says when to retry',
    example: problem(429, 'rate-limited', 'Too Many Requests', 'Too many requests: retry after 1 s'),
  },
  500: {
    description: 'Unexpected failure; quote the request id (requestId, x-request-id) when reporting it',
    example: problem(
      500,
      'internal-error',
      'Internal Server Error',
      'An unexpected error occurred. Quote the request id when reporting it.',
      {
        correlationId: '0b6f8f4e-4c1e-4f1a-9a59-2f7f1d0f3a11',
      },
    ),
  },
  502: {
    description: 'The gateway refused the operation or answered something unusable',
    example: problem(
      502,
      'gateway-error',
      'Payment gateway error',
      'The gateway refused the invoice',
      {
        gatewayErrorCode: 10,
        gatewayMessage: 'Bad signature',
        fatal: true,
      },
    ),
  },
  503: {
    description: 'Not ready (database or migrations)',
    example: problem(503, 'service-unavailable', 'Service Unavailable', 'The service is not ready'),
  },
  504: {
    description: 'The gateway did not answer in time',
    example: problem(
      504,
      'gateway-error',
      'Payment gateway error',
      'The gateway did not answer in time',
      {
        gatewayErrorCode: null,
        gatewayMessage: null,
        fatal: null,
      },
    ),
  },
};

/**
 * Documents problem+json error answers for the given statuses, on a handler or a whole
 * controller: `@ApiProblems(400, 404, 409)`. A status outside PROBLEMS needs an entry there.
 */
export function ApiProblems(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(ProblemDetails),
    ...statuses.map((status) => {
      const known = PROBLEMS[status];
      if (!known) throw new Error(`ApiProblems: no description for status ${status} in PROBLEMS`);
      return ApiResponse({ status, ...problemResponse(status) });
    }),
  );
}

const pages = new Map<Type, Type>();

/** The schema class of `{items: T[], nextCursor}` (common/pagination.ts) for a view class. */
export function pageOf<T>(item: Type<T>): Type<{ items: T[]; nextCursor: string | null }> {
  const known = pages.get(item);
  if (known) return known as Type<{ items: T[]; nextCursor: string | null }>;
  class Page {
    @ApiProperty({ type: [item] }) items: T[];
    @ApiProperty({
      type: String,
      nullable: true,
      description: 'Pass as `cursor` for the next page; null on the last page',
      example: 'WyIyMDI2LTAxLTAxVDAwOjAwOjAwLjAwMFoiLCI1In0',
    })
    nextCursor: string | null;
  }
  Object.defineProperty(Page, 'name', { value: `${item.name.replace(/View$/, '')}List` });
  pages.set(item, Page);
  return Page;
}

/**
 * Compile-time proof that a schema class describes exactly the type a service returns:
 * `sameShape<InvoiceView, InvoiceSchema>(true)` stops type-checking when they drift apart.
 */
export type SameShape<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export function sameShape<A, B>(proof: SameShape<A, B>): SameShape<A, B> {
  return proof;
}

/**
 * The service's OpenAPI document: served at /docs-json and committed as openapi.json (the
 * document outside sandbox mode). `sandboxOrigin` (sandbox mode): the sandbox's routes are added.
 */
export function openApiDocument(app: INestApplication, opts: { sandboxOrigin?: string } = {}): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Payment orchestration API')
    .setDescription(
      'Shop-facing API over the /gateway/v1/ payment gateway. Amounts are decimal strings; errors are ' +
        'application/problem+json (RFC 9457). Creates are idempotent by the shop id (shopOrderId, ' +
        'shopRefundId, shopPaymentId): the same body replays the stored result, another body is 409.',
    )
    .setVersion('1.0.0')
    // The keys are opaque strings (API_KEYS, ADMIN_API_KEYS), not JWTs: no bearerFormat
    // (addBearerAuth would add `bearerFormat: JWT`).
    .addSecurity('bearer', {
      type: 'http',
      scheme: 'bearer',
      description:
        'An API key from API_KEYS (shop) or ADMIN_API_KEYS (admin): an opaque string, sent as `Authorization: Bearer <key>`',
    })
    .addSecurityRequirements('bearer')
    .build();
  return forReceivers(
    withGlobalProblems(SwaggerModule.createDocument(app, config, { extraModels: [ProblemDetails] })),
    opts,
  );
}

type Operation = {
  parameters?: Array<{ in: string }>;
  requestBody?: unknown;
  security?: unknown[];
  responses: Record<string, unknown>;
};

/**
 * Answers every route can give because of global parts, documented once here: 500 (the problem
 * filter), 401, 403 and 429 on guarded routes (the auth guard), 400 wherever a body or a
 * query is validated (the validation pipe), 415 wherever an /api/v1 route takes a body (JSON
 * only, the input guard).
 */
function withGlobalProblems(doc: OpenAPIObject): OpenAPIObject {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const op of Object.values(item as Record<string, Operation>)) {
      if (typeof op !== 'object' || op === null || !('responses' in op)) continue;
      const guarded = !(
        op.security?.length === 1 && Object.keys(op.security[0] as object).length === 0
      );
      const statuses = [500];
      // The guard: no key (401); a key without the route's role or scope (403); over its rate (429).
      if (guarded) statuses.push(401, 403, 429);
      if (op.requestBody || op.parameters?.some((p) => p.in === 'query')) statuses.push(400);
      if (op.requestBody && path.startsWith('/api/v1/')) statuses.push(415);
      for (const status of statuses) {
        op.responses[status] ??= problemResponse(status);
      }
      op.responses = Object.fromEntries(
        Object.entries(op.responses).sort(([a], [b]) => a.localeCompare(b)),
      );
    }
  }
  return doc;
}

function problemResponse(status: number): { description: string; content: ContentObject } {
  const known = PROBLEMS[status];
  return {
    description: known.description,
    content: {
      [PROBLEM_JSON]: { schema: { $ref: getSchemaPath(ProblemDetails) }, example: known.example },
    },
  };
}
