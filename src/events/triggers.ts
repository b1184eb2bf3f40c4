import { randomUUID } from 'node:crypto';

/**
 * `npm run events -- trigger <type>`: for every shop event type the service emits
 * (src/audit/shop-events.ts SHOP_EVENT_TYPES), a real flow through the service's API (shop
 * and admin keys) and the sandbox's control routes that produces it. A flow returns the objects
 * whose event it waits for and the request that makes the service ask the gateway meanwhile.
 */

export interface TriggerContext {
  /** A call with the shop key; `tolerate`: a refusal or an error answer is returned, not thrown. */
  api(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, tolerate?: boolean): Promise<Record<string, unknown>>;
  /** A call with the admin key. */
  admin(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>>;
  /** A sandbox control route (`/sandbox/…`); its `data`, or null when it is not there (404). */
  sandbox(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown> | null>;
  /** A form posted as a payer's browser posts it (no key); the answer's status. */
  payerForm(path: string, fields: Record<string, string>): Promise<number>;
  /** Waits for an event of `type` about one of `objectIds` (asking `nudge` meanwhile). */
  waitFor(type: string, objectIds: string[], nudge?: string): Promise<unknown>;
  log(line: string): void;
}

export interface Triggered {
  objectIds: string[];
  nudge?: string;
}

type Flow = (t: TriggerContext) => Promise<Triggered>;

const CARD_PAID = 'card_core_payin_rub[mock_server,success]';
const CARD_PAYER = 'card_core_payin_rub[mock_server,success_with_callback]';
const CARD_OPEN = 'card_core_payin_rub[sandbox,pending]';
const TO_CARD = 'qiwi_topup_rub_to_card[mock_server,success]';
const CARD_ACCOUNT = '4111111111111111';
/** At or above the approval threshold a payout waits (when PAYOUT_APPROVAL_THRESHOLD is at most this). */
const LARGE_PAYOUT = '90000.00';

const at = (id: string): string => encodeURIComponent(id);
const refreshOf = (shopOrderId: string): string => `/api/v1/invoices/${at(shopOrderId)}?refresh=true`;

async function invoice(t: TriggerContext, payway: string, extra: Record<string, unknown> = {}, tolerate = false): Promise<Triggered & { id: string }> {
  const id = `cli-order-${randomUUID()}`;
  await t.api('POST', '/api/v1/invoices', { shopOrderId: id, amount: '100.00', currency: 643, payway, ...extra }, tolerate);
  return { id, objectIds: [id], nudge: refreshOf(id) };
}

async function paid(t: TriggerContext, payway = CARD_PAID, extra: Record<string, unknown> = {}): Promise<string> {
  const i = await invoice(t, payway, extra);
  await t.waitFor('invoice.succeeded', [i.id], i.nudge);
  return i.id;
}

/** A hold the payer paid: `held`, its expiry learnt. `lifetimeS`: the sandbox's hold lifetime for it. */
async function held(t: TriggerContext, lifetimeS?: number): Promise<string> {
  let before: unknown;
  if (lifetimeS !== undefined) {
    const settings = await t.sandbox('GET', '/sandbox/settings');
    if (settings === null) throw new Error('this flow needs the built-in sandbox (its /sandbox/settings)');
    before = settings.holdLifetimeS;
    await t.sandbox('POST', '/sandbox/settings', { holdLifetimeS: lifetimeS });
  }
  try {
    const i = await invoice(t, CARD_PAYER, { twoStep: true });
    await t.waitFor('invoice.awaiting_payer', [i.id], i.nudge);
    if ((await t.sandbox('POST', `/sandbox/invoices/${at(i.id)}/pay`)) === null)
      throw new Error('this flow needs the built-in sandbox (its /sandbox/invoices/{id}/pay)');
    await t.waitFor('invoice.held', [i.id], i.nudge);
    return i.id;
  } finally {
    if (lifetimeS !== undefined) await t.sandbox('POST', '/sandbox/settings', { holdLifetimeS: before });
  }
}

/** A single-use payment link on a payer-less payway (a link's invoice on it is paid at once). */
async function paymentLink(t: TriggerContext, extra: Record<string, unknown> = {}): Promise<string> {
  const link = await t.api('POST', '/api/v1/payment-links', {
    amount: '100.00',
    currency: 643,
    description: 'events cli payment link',
    payways: [CARD_PAID],
    ...extra,
  });
  return String(link.id);
}

/** A dispute of a paid invoice, resolved as `outcome` unless it is left open. */
async function dispute(t: TriggerContext, outcome?: 'won' | 'lost' | 'accepted'): Promise<Triggered> {
  const orderId = await paid(t);
  const d = await t.admin('POST', `/api/v1/admin/invoices/${at(orderId)}/disputes`, {
    amount: '10.00',
    reason: 'fraudulent',
    reportedAt: new Date().toISOString(),
    note: 'events cli',
  });
  const id = String(d.id);
  if (outcome !== undefined)
    await t.admin('POST', `/api/v1/admin/disputes/${at(id)}/resolve`, { outcome, note: 'events cli' });
  return { objectIds: [id] };
}

/** An invoice still open at the gateway whose record then says `status` (3 or 5). */
async function gatewayStatus(t: TriggerContext, status: 3 | 5): Promise<Triggered> {
  const i = await invoice(t, CARD_OPEN);
  await t.waitFor('invoice.awaiting_payer', [i.id], i.nudge);
  if ((await t.sandbox('POST', `/sandbox/invoices/${at(i.id)}/status`, { status })) === null)
    throw new Error('this flow needs the built-in sandbox (its /sandbox/invoices/{id}/status)');
  return i;
}

async function refundOf(t: TriggerContext, payway = CARD_PAID): Promise<{ orderId: string; refundId: string; nudge: string }> {
  const orderId = await paid(t, payway);
  const refundId = `cli-refund-${randomUUID()}`;
  await t.api('POST', `/api/v1/invoices/${at(orderId)}/refunds`, { shopRefundId: refundId, amount: '10.00' });
  return { orderId, refundId, nudge: `/api/v1/invoices/${at(orderId)}/refunds?refresh=true` };
}

async function payout(
  t: TriggerContext,
  payway: string,
  amount = '100.00',
  tolerate = false,
  amountType: 'ps_amount' | 'shop_amount' = 'ps_amount',
): Promise<Triggered & { id: string; status: unknown }> {
  const id = `cli-payout-${randomUUID()}`;
  const answer = await t.api(
    'POST',
    '/api/v1/payouts',
    { shopPaymentId: id, amount, amountType, shopCurrency: 643, payway, account: CARD_ACCOUNT },
    tolerate,
  );
  return { id, objectIds: [id], status: answer.status, nudge: `/api/v1/payouts/${at(id)}` };
}

async function awaitingApproval(t: TriggerContext): Promise<string> {
  const p = await payout(t, TO_CARD, LARGE_PAYOUT);
  if (p.status !== 'awaiting_approval')
    throw new Error(
      `payout ${p.id} of ${LARGE_PAYOUT} RUB was not held for approval (it is ${String(p.status)}): ` +
        `payout.awaiting_approval needs PAYOUT_APPROVAL_THRESHOLD=643:<at most ${LARGE_PAYOUT}>`,
    );
  return p.id;
}

/**
 * The gateway restates a final object (sandbox), an admin's Recheck finds its record contradict
 * the final status: the object is flagged. `accept`: then the admin accepts the gateway's status.
 */
async function contradicted(t: TriggerContext, kind: 'invoice' | 'refund' | 'payout', accept: boolean): Promise<Triggered> {
  let id: string;
  let restate: Record<string, unknown>;
  let status: string;
  if (kind === 'invoice') {
    id = await paid(t);
    restate = { status: 6 };
    status = 'rejected';
  } else if (kind === 'refund') {
    const r = await refundOf(t);
    await t.waitFor('refund.success', [r.refundId], r.nudge);
    id = r.refundId;
    restate = { status: 'FAILED' };
    status = 'FAILED';
  } else {
    const p = await payout(t, TO_CARD);
    await t.waitFor('payout.succeeded', [p.id], p.nudge);
    id = p.id;
    restate = { status: 6 };
    status = 'rejected';
  }
  if ((await t.sandbox('POST', `/sandbox/${kind}s/${at(id)}/restate`, restate)) === null)
    throw new Error(`this flow needs the built-in sandbox (its /sandbox/${kind}s/{id}/restate)`);
  await t.admin('POST', `/api/v1/admin/${kind}s/${at(id)}/resolve`, { action: 'recheck' });
  if (accept) {
    await t.waitFor(`${kind}.attention_raised`, [id]);
    await t.admin('POST', `/api/v1/admin/${kind}s/${at(id)}/resolve`, {
      action: 'accept',
      status,
      note: 'the gateway restated it (events trigger)',
    });
  }
  return { objectIds: [id] };
}

async function batch(t: TriggerContext, amount: string, cancel: boolean): Promise<{ batchId: string; rowIds: string[] }> {
  const batchId = `cli-batch-${randomUUID()}`;
  const rowIds = [`${batchId}-1`];
  await t.api('POST', '/api/v1/payouts/batches', {
    batchId,
    rows: rowIds.map((shopPaymentId) => ({
      shopPaymentId,
      amount,
      amountType: 'ps_amount',
      shopCurrency: 643,
      payway: TO_CARD,
      account: CARD_ACCOUNT,
    })),
  });
  if (cancel) await t.api('POST', `/api/v1/payouts/batches/${at(batchId)}/cancel`);
  return { batchId, rowIds };
}

/**
 * Event types of SHOP_EVENT_TYPES the service never emits, and why: `trigger` says so instead of
 * waiting for one.
 */
export const NOT_EMITTED: Record<string, string> = {
  'invoice.pending':
    'an invoice is written pending (with the claim of its gateway call) without an event; its first event is the status ' +
    'the gateway answers (invoice.awaiting_payer, invoice.succeeded, …) or invoice.unknown when the answer is lost',
};

export const TRIGGERS: Record<string, Flow> = {
  // A non-fatal refusal of the create (code 100): the gateway did it, the service asks (status 1).
  'invoice.created': (t) => invoice(t, 'card_core_payin_rub[sandbox,nonfatal]'),
  'invoice.awaiting_payer': (t) => invoice(t, CARD_PAYER),
  'invoice.ps_create_failed': (t) => gatewayStatus(t, 3),
  'invoice.ps_notice_failed': (t) => gatewayStatus(t, 5),
  'invoice.succeeded': (t) => invoice(t, CARD_PAID),
  'invoice.rejected': (t) => invoice(t, 'card_core_payin_rub[mock_server,rejected_with_callback]'),
  'invoice.held': async (t) => ({ objectIds: [await held(t)] }),
  'invoice.hold_updated': async (t) => ({ objectIds: [await held(t)] }),
  'invoice.unheld': async (t) => {
    const id = await held(t);
    await t.api('POST', `/api/v1/invoices/${at(id)}/unhold`);
    return { objectIds: [id], nudge: refreshOf(id) };
  },
  // A hold whose expiry is nearer than HOLD_EXPIRY_WARNING_S: the warning comes at the next tick.
  'invoice.hold_expiring': async (t) => ({ objectIds: [await held(t, 300)] }),
  // A hold the gateway lets lapse (a lifetime of one second), learnt by asking.
  'invoice.expired': async (t) => {
    const id = await held(t, 1);
    return { objectIds: [id], nudge: refreshOf(id) };
  },
  // The create's answer is lost (the connection is cut after the gateway did it).
  'invoice.unknown': (t) => invoice(t, 'card_core_payin_rub[sandbox,reset_done]', {}, true),
  'invoice.refund_updated': async (t) => {
    const r = await refundOf(t);
    return { objectIds: [r.orderId], nudge: r.nudge };
  },
  'invoice.attention_raised': (t) => contradicted(t, 'invoice', false),
  'invoice.attention_resolved': (t) => contradicted(t, 'invoice', true),
  'refund.waiting': async (t) => {
    const r = await refundOf(t);
    return { objectIds: [r.refundId], nudge: r.nudge };
  },
  'refund.success': async (t) => {
    const r = await refundOf(t);
    return { objectIds: [r.refundId], nudge: r.nudge };
  },
  'refund.failed': async (t) => {
    const r = await refundOf(t, 'card_core_payin_rub[sandbox,refund_failed]');
    return { objectIds: [r.refundId], nudge: r.nudge };
  },
  'refund.attention_raised': (t) => contradicted(t, 'refund', false),
  'refund.attention_resolved': (t) => contradicted(t, 'refund', true),
  // The last approval moves a waiting payout to pending, then it is sent.
  'payout.pending': async (t) => {
    const id = await awaitingApproval(t);
    await t.admin('POST', `/api/v1/admin/payouts/${at(id)}/approve`, { note: 'approved by events trigger' });
    return { objectIds: [id] };
  },
  // Sent (3) and never final: processing.
  'payout.processing': (t) => payout(t, 'qiwi_topup_rub_to_card[sandbox,never_final]'),
  'payout.succeeded': (t) => payout(t, TO_CARD),
  'payout.rejected': (t) => payout(t, 'qiwi_topup_rub_to_card[sandbox,reject]'),
  'payout.failed': (t) => payout(t, 'qiwi_topup_rub_to_card[sandbox,decline]'),
  // The create's answer is lost (a shop_amount needs no quote first): asked about later.
  'payout.unknown': (t) => payout(t, 'qiwi_topup_rub_to_card[sandbox,reset_done]', '100.00', true, 'shop_amount'),
  // Never final by its poll deadline (PAYOUT_POLL_MAX_S): in sandbox mode the sandbox clock is
  // moved past it; elsewhere the deadline is waited for.
  'payout.needs_attention': async (t) => {
    const p = await payout(t, 'qiwi_topup_rub_to_card[sandbox,never_final]');
    await t.waitFor('payout.processing', [p.id], p.nudge);
    const moved = await t.sandbox('POST', '/sandbox/clock/advance', { seconds: 7260 });
    if (moved !== null) t.log('moved the sandbox clock 7260 s ahead, past the payout poll deadline');
    return p;
  },
  'payout.attention_raised': (t) => contradicted(t, 'payout', false),
  'payout.attention_resolved': (t) => contradicted(t, 'payout', true),
  'payout.awaiting_approval': async (t) => ({ objectIds: [await awaitingApproval(t)] }),
  'payout.approved': async (t) => {
    const id = await awaitingApproval(t);
    await t.admin('POST', `/api/v1/admin/payouts/${at(id)}/approve`, { note: 'approved by events trigger' });
    return { objectIds: [id] };
  },
  // A batch cancelled as soon as it is taken: its row is cancelled before it is sent (or, held
  // for approval, while it waits).
  'payout.cancelled': async (t) => ({ objectIds: (await batch(t, LARGE_PAYOUT, true)).rowIds }),
  'payout_batch.completed': async (t) => ({ objectIds: [(await batch(t, '100.00', false)).batchId] }),
  'payment_token.revoked': async (t) => {
    const orderId = await paid(t, CARD_PAID, { savePaymentToken: true });
    const tokens = (await t.api('GET', '/api/v1/payment-tokens?limit=500')) as { items?: Array<{ id: string; invoiceShopOrderId: string }> };
    const token = tokens.items?.find((x) => x.invoiceShopOrderId === orderId);
    if (token === undefined) throw new Error(`invoice ${orderId} issued no payment token`);
    await t.api('DELETE', `/api/v1/payment-tokens/${at(token.id)}`);
    return { objectIds: [token.id] };
  },
  'payment_link.created': async (t) => ({ objectIds: [await paymentLink(t)] }),
  'payment_link.deactivated': async (t) => {
    const id = await paymentLink(t);
    await t.api('POST', `/api/v1/payment-links/${at(id)}/deactivate`);
    return { objectIds: [id] };
  },
  'payment_link.expired': async (t) => {
    const id = await paymentLink(t, { expiresAt: new Date(Date.now() + 3000).toISOString() });
    // A read of a link past its time expires it (the job does too, within its interval).
    return { objectIds: [id], nudge: `/api/v1/payment-links/${at(id)}` };
  },
  'payment_link.paid': async (t) => {
    const id = await paymentLink(t);
    const status = await t.payerForm(`/pay/l/${at(id)}`, { payway: CARD_PAID, attempt: `cli-${randomUUID()}` });
    if (status !== 303) throw new Error(`the payment link's form answered ${status}`);
    return { objectIds: [id], nudge: refreshOf(`${id}-1`) };
  },
  'dispute.opened': (t) => dispute(t),
  'dispute.won': (t) => dispute(t, 'won'),
  'dispute.lost': (t) => dispute(t, 'lost'),
  'dispute.accepted': (t) => dispute(t, 'accepted'),
  'reconciliation.completed': async (t) => {
    const run = await t.admin('POST', '/api/v1/admin/reconciliations', {});
    return { objectIds: [String(run.id)] };
  },
};
