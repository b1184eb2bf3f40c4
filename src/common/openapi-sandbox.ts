import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * The sandbox's control routes in the OpenAPI document (sandbox mode only), beside the payer's
 * acts and the clock that openapi-receivers.ts writes: faults, the request and notification
 * logs, settings, payee refusals, restatements, balances, charge on unhold, reset. Each is
 * served by the sandbox on its own port (`servers`), answers `{result, data}` or `{result:
 * false, message}`, and carries an example. test/sandbox/sandbox-openapi.e2e-spec.ts walks the
 * sandbox's routers and fails on a route missing here.
 */

type Schema = Record<string, unknown>;

interface Control {
  path: string;
  method: 'get' | 'post' | 'delete';
  id: string;
  summary: string;
  description?: string;
  /** A path parameter: its name, what it is, an example. */
  param?: [string, string, string];
  /** A JSON body: its schema (with required fields) and an example. */
  body?: { schema: Schema; example: unknown };
  /** The `data` of a successful answer, as an example. */
  answer: unknown;
  /** Refusals: status → when. */
  refusals?: Record<number, string>;
}

const SETTINGS_EXAMPLE = {
  notifyFormat: 'json',
  suppressNotifications: false,
  shopNotifyUrl: null,
  timeScale: 1,
  timeoutDelayMs: null,
  latencyMs: 0,
  holdLifetimeS: 604800,
};

const RESTATE = (kind: 'invoices' | 'refunds' | 'payouts'): Control => {
  const one = { invoices: 'invoice', refunds: 'refund', payouts: 'payout' }[kind];
  const to = { invoices: '6 (rejected)', refunds: '"FAILED"', payouts: '6 (rejected) or 8 (cancelled)' }[kind];
  const from = { invoices: 'paid (4)', refunds: 'SUCCESS', payouts: 'paid (5)' }[kind];
  const param = { invoices: 'shopOrderId', refunds: 'shopRefundId', payouts: 'shopPaymentId' }[kind];
  return {
    path: `/sandbox/${kind}/{${param}}/restate`,
    method: 'post',
    id: `sandbox_restate_${one}`,
    summary: `The gateway restates a final ${one}: ${from} becomes ${to}, its money moves back, no notification`,
    description:
      'As a bank reversal or a returned payout: the service learns it only by asking (Recheck, reconciliation).',
    param: [param, kind === 'invoices' ? "The shop's order id (or the gateway's invoice id)" : `The shop's ${one} id`, kind === 'invoices' ? 'order-1001' : kind === 'refunds' ? 'refund-1001-1' : 'payout-2001'],
    body: {
      schema: { type: 'object', required: ['status'], properties: { status: kind === 'refunds' ? { type: 'string', enum: ['FAILED'] } : { type: 'integer', enum: kind === 'invoices' ? [6] : [6, 8] } } },
      example: { status: kind === 'refunds' ? 'FAILED' : 6 },
    },
    answer: kind === 'payouts' ? { id: 445566, status: 6, shop_payment_id: 'payout-2001' } : kind === 'refunds' ? { shop_refund_id: 'refund-1001-1', status: 'FAILED' } : { id: 1234567, shop_order_id: 'order-1001', status: 6 },
    refusals: { 400: 'Not a status it can be restated to', 404: `No such ${one}`, 409: `The ${one} is not ${from}` },
  };
};

const BALANCE_MOVE = (kind: 'top-up' | 'drift'): Control => ({
  path: `/sandbox/balances/${kind}`,
  method: 'post',
  id: `sandbox_balance_${kind === 'top-up' ? 'top_up' : 'drift'}`,
  summary:
    kind === 'top-up'
      ? "Top the agent shop's available balance up (money the shop sent to the gateway)"
      : 'Move an available balance by a signed amount no call explains (reconciliation must find it)',
  body: {
    schema: {
      type: 'object',
      required: ['currency', 'amount'],
      properties: {
        currency: { type: 'integer', example: 643 },
        amount: { type: 'string', description: kind === 'top-up' ? 'A positive decimal string' : 'A non-zero signed decimal string' },
        shopId: { type: 'integer', description: 'Default: the agent shop' },
      },
    },
    example: { currency: 643, amount: kind === 'top-up' ? '50000.00' : '-12.50' },
  },
  answer: { currency: 643, available: '1050000.00', hold: '0.00', frozen: '0.00' },
  refusals: { 400: 'A currency, amount or shop id that is not one', 409: 'The available balance would be negative' },
});

const CONTROLS: Control[] = [
  {
    path: '/sandbox/faults',
    method: 'post',
    id: 'sandbox_fault_add',
    summary: 'Queue a fault for the next calls of one gateway path (time-outs, 500s, resets, refusals)',
    body: {
      schema: {
        type: 'object',
        required: ['path', 'fault'],
        properties: {
          path: { type: 'string', description: 'A gateway call path' },
          fault: { type: 'string', enum: ['timeout_done', 'timeout_not_done', 'http500', 'reset', 'reset_done', 'nonfatal', 'fatal'] },
          times: { type: 'integer', minimum: 1, default: 1 },
          delayMs: { type: 'number', minimum: 0 },
        },
      },
      example: { path: 'withdraw/create', fault: 'timeout_done', times: 1 },
    },
    answer: [{ path: 'withdraw/create', fault: 'timeout_done', remaining: 1 }],
    refusals: { 400: 'An unknown path or fault' },
  },
  { path: '/sandbox/faults', method: 'get', id: 'sandbox_faults', summary: 'The faults still queued', answer: [{ path: 'withdraw/create', fault: 'http500', remaining: 2 }] },
  { path: '/sandbox/faults', method: 'delete', id: 'sandbox_faults_clear', summary: 'Forget every queued fault', answer: [] },
  {
    path: '/sandbox/requests',
    method: 'get',
    id: 'sandbox_requests',
    summary: 'Every gateway request the sandbox received (path and body, the sign included), oldest first',
    answer: [{ path: 'withdraw/create', body: { shop_payment_id: 'payout-2001', amount: '1000.00' } }],
  },
  { path: '/sandbox/requests', method: 'delete', id: 'sandbox_requests_clear', summary: 'Forget the request log', answer: [] },
  {
    path: '/sandbox/notifications',
    method: 'get',
    id: 'sandbox_notifications',
    summary: 'Every notification delivery the sandbox made to the service, with its answer',
    answer: [{ url: 'http://localhost:3000/webhooks/gateway?type=invoice', status: 200, attempt: 1 }],
  },
  { path: '/sandbox/notifications', method: 'delete', id: 'sandbox_notifications_clear', summary: 'Forget the notification log', answer: [] },
  {
    path: '/sandbox/notifications/resend',
    method: 'post',
    id: 'sandbox_notification_resend',
    summary: "Send an invoice's last notification again (a gateway that repeats itself)",
    body: {
      schema: { type: 'object', required: ['shop_order_id'], properties: { shop_order_id: { type: 'string' }, times: { type: 'integer', minimum: 1, default: 1 } } },
      example: { shop_order_id: 'order-1001', times: 2 },
    },
    answer: { resent: 2 },
    refusals: { 400: 'No shop_order_id', 404: 'No notification of that invoice' },
  },
  {
    path: '/sandbox/payees/refuse',
    method: 'post',
    id: 'sandbox_payee_refuse',
    summary: 'Make check_account say an account cannot be credited (`refused: false` takes it again)',
    description:
      'withdraw/create still takes the account, as a gateway whose check and create disagree would. Accounts ending ' +
      'in 0000 are always refused by check_account. The sandbox keeps a digest of the account, never the account, and ' +
      'forgets it on reset or restart.',
    body: {
      schema: { type: 'object', required: ['account'], properties: { account: { type: 'string', maxLength: 255 }, refused: { type: 'boolean', default: true } } },
      example: { account: '4111111111111111' },
    },
    answer: { account: '411111******1111', refused: true },
    refusals: { 400: 'No account, or refused not a boolean' },
  },
  { path: '/sandbox/settings', method: 'get', id: 'sandbox_settings', summary: "The sandbox's settings now", answer: SETTINGS_EXAMPLE },
  {
    path: '/sandbox/settings',
    method: 'post',
    id: 'sandbox_settings_change',
    summary: 'Change settings (each optional): notification format and loss, latency, time-out delay, hold lifetime',
    description:
      'Settings changed here are kept with the sandbox state across a restart (the start-up block names them) until a reset.',
    body: {
      schema: {
        type: 'object',
        properties: {
          notifyFormat: { type: 'string', enum: ['json', 'form'] },
          suppressNotifications: { type: 'boolean' },
          shopNotifyUrl: { type: 'string', nullable: true, format: 'uri' },
          timeScale: { type: 'number', exclusiveMinimum: true, minimum: 0 },
          timeoutDelayMs: { type: 'number', nullable: true, minimum: 0 },
          latencyMs: { type: 'number', minimum: 0 },
          holdLifetimeS: { type: 'number', exclusiveMinimum: true, minimum: 0, description: 'The hold lifetime: a new hold lapses this long after it is made' },
        },
      },
      example: { latencyMs: 3000 },
    },
    answer: { ...SETTINGS_EXAMPLE, latencyMs: 3000 },
    refusals: { 400: 'A setting out of its bounds' },
  },
  {
    path: '/sandbox/invoices/{shopOrderId}/status',
    method: 'post',
    id: 'sandbox_invoice_status',
    summary: "The gateway's record of an invoice awaiting payment moves to 3 (ps_create_failed) or 5 (ps_notice_failed), not notified",
    description: 'The service learns it by asking (GET /api/v1/invoices/{shopOrderId}?refresh=true, Recheck, reconciliation).',
    param: ['shopOrderId', "The shop's order id (or the gateway's invoice id)", 'order-1001'],
    body: {
      schema: { type: 'object', required: ['status'], properties: { status: { type: 'integer', enum: [3, 5] } } },
      example: { status: 3 },
    },
    answer: { id: 1234567, shop_order_id: 'order-1001', status: 3 },
    refusals: { 400: 'Not 3 or 5', 404: 'No such invoice', 409: 'The invoice does not await payment' },
  },
  {
    path: '/sandbox/invoices/{shopOrderId}/charge-on-unhold',
    method: 'post',
    id: 'sandbox_charge_on_unhold',
    summary: "A charge still queued at the gateway: the shop's next invoice/unhold of this hold charges it",
    param: ['shopOrderId', "The shop's order id (or the gateway's invoice id)", 'order-1001'],
    answer: { id: 1234567, shop_order_id: 'order-1001', status: 8 },
    refusals: { 404: 'No such invoice' },
  },
  { path: '/sandbox/reset', method: 'post', id: 'sandbox_reset', summary: 'Forget everything: invoices, payouts, logs, faults, settings; balances back to their seed', answer: { reset: true } },
  {
    path: '/sandbox/balances',
    method: 'get',
    id: 'sandbox_balances',
    summary: "A shop's balances per currency (`?shopId=`, default the agent shop)",
    answer: { shop_id: 2002, balances: [{ currency: 643, available: '1000000.00', hold: '0.00', frozen: '0.00' }] },
    refusals: { 400: 'shopId not a shop id' },
  },
  BALANCE_MOVE('top-up'),
  BALANCE_MOVE('drift'),
  RESTATE('invoices'),
  RESTATE('refunds'),
  RESTATE('payouts'),
];

function operation(c: Control): Schema {
  const answer = (description: string, data: unknown, ok: boolean): Schema => ({
    description,
    content: {
      'application/json': {
        schema: ok
          ? { type: 'object', properties: { result: { type: 'boolean', example: true }, data: {} } }
          : { type: 'object', properties: { result: { type: 'boolean', example: false }, message: { type: 'string' } } },
        example: ok ? { result: true, data } : { result: false, message: description },
      },
    },
  });
  return {
    tags: ['sandbox'],
    summary: c.summary,
    ...(c.description ? { description: c.description } : {}),
    operationId: c.id,
    security: [],
    parameters: c.param
      ? [{ name: c.param[0], in: 'path', required: true, description: c.param[1], schema: { type: 'string' }, example: c.param[2] }]
      : [],
    ...(c.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: c.body.schema, example: c.body.example } } } }
      : {}),
    responses: {
      200: answer('Done', c.answer, true),
      ...Object.fromEntries(Object.entries(c.refusals ?? {}).map(([s, why]) => [s, answer(why, null, false)])),
    },
  };
}

/** Adds every control route of CONTROLS to `doc`, served at `origin`. */
export function addSandboxControls(doc: OpenAPIObject, origin: string): void {
  const servers = [{ url: origin, description: 'The built-in gateway sandbox' }];
  for (const c of CONTROLS) {
    const item = (doc.paths[c.path] ?? { servers }) as Record<string, unknown>;
    item[c.method] = operation(c);
    doc.paths[c.path] = item as never;
  }
}
