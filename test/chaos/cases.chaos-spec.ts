import { Decimal as SandboxDecimal } from '../../src/sandbox/decimal';
import { gatewayCall, notify } from './support/gateway-side';
import { newTracked } from './support/ledger';
import { recordRow } from './support/results';
import {
  createInvoice,
  createPayout,
  createRefund,
  invoiceOrder,
  paidInvoices,
  payerActs,
  payoutOrder,
  uniqueId,
} from './support/shop';
import {
  ADMIN_KEY,
  GATEWAY_TIMEOUT_MS,
  PAYOUT_ACCOUNT,
  payoutPayway,
  paymentPayway,
  SHOP_ID,
  sleep,
  waitUntil,
  World,
} from './support/world';

/**
 * Seven money-under-faults cases, each a named scenario against the compiled service, its database and
 * the sandbox. Each records its row in the chaos table (ok, or FAIL with what was seen).
 */

const POLL_INTERVAL_MS = 1000;
const MAX_CREATES = 3;

let world: World;
const tracked = newTracked();

beforeAll(async () => {
  world = await World.create('cases', process.env.CHAOS_PG_URL!);
  await world.start();
});

afterAll(async () => {
  await world?.close();
});

afterEach(async () => {
  world.sandbox.state.faults.clear();
  if (!world.service?.alive()) await world.start();
});

const ANSI_COLOURS = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** Runs a case and records its row: ok, or FAIL with the first line of what went wrong. */
async function namedCase(title: string, body: () => Promise<string>): Promise<void> {
  try {
    const seen = await body();
    recordRow({
      scenario: title,
      runs: 1,
      twice: '-',
      lost: '-',
      unsettled: '-',
      verdict: 'ok',
      notes: seen,
    });
  } catch (e) {
    const message = (e as Error).message
      .replace(ANSI_COLOURS, '')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(0, 3)
      .join(' ');
    recordRow({
      scenario: title,
      runs: 1,
      twice: '-',
      lost: '-',
      unsettled: '-',
      verdict: 'FAIL',
      notes: message,
    });
    throw e;
  }
}

const requestsFor = (path: string, key: string, id: string) =>
  world.sandbox.state.requests.filter(
    (r) => r.path === path && (r.body as Record<string, unknown>)[key] === id,
  );

async function row(
  table: 'invoices' | 'refunds' | 'payouts',
  key: string,
  id: string,
): Promise<Record<string, unknown>> {
  const rows = await world.query(`SELECT * FROM ${table} WHERE ${key} = $1`, [id]);
  return rows[0] ?? {};
}

/** Fails with what was seen against what is wanted, so the chaos table can say it in one line. */
function want(seen: Record<string, unknown>, wanted: Record<string, unknown>): void {
  if (JSON.stringify(seen) !== JSON.stringify(wanted))
    throw new Error(`saw ${JSON.stringify(seen)}; want ${JSON.stringify(wanted)}`);
}

const flagged = (r: Record<string, unknown>): boolean =>
  r.needs_attention === true || r.status === 'needs_attention';

/**
 * The payway configuration as another instance's cache would have it: the stored copy edited and
 * reloaded by a restart whose own refresh from the gateway fails (HTTP 500), so the edit stands.
 */
async function editPaywayConfig(
  edit: (payway: Record<string, unknown>, direction: string) => void,
): Promise<void> {
  for (const path of ['shop_input_config/shop', 'shop_output_config/shop'])
    world.sandbox.state.faults.add({ path, fault: 'http500', remaining: 1000 });
  const rows = await world.query<{
    direction: string;
    data: Array<{ payways?: Array<Record<string, unknown>> }>;
  }>(`SELECT direction, data FROM payway_configs`);
  for (const r of rows) {
    for (const g of r.data) for (const p of g.payways ?? []) edit(p, r.direction);
    await world.query(`UPDATE payway_configs SET data = $2 WHERE direction = $1`, [
      r.direction,
      JSON.stringify(r.data),
    ]);
  }
  await world.stop();
  await world.start();
}

it('case 1: a repeated create gets its stored answer after the payway configuration changed', () =>
  namedCase('case 1: repeat after a configuration change replays', async () => {
    const invoice = invoiceOrder('success');
    const first = await createInvoice(world, tracked, invoice, 0);
    expect(first.status).toBe(201);
    const payout = payoutOrder('success');
    const firstPayout = await createPayout(world, tracked, payout, 0);
    expect(firstPayout.status).toBe(202);
    // Both payways retired and their limits lowered, as a refresh or another instance's cache would have them.
    await editPaywayConfig((p) => {
      if (p.alias === invoice.payway || p.alias === payout.payway) {
        p.is_active = typeof p.is_active === 'string' ? 'false' : false;
        p.max_amount = typeof p.max_amount === 'string' ? '1' : 1;
      }
    });
    try {
      const again = await createInvoice(world, tracked, invoice, 0);
      const againPayout = await createPayout(world, tracked, payout, 0);
      want({ invoice: again.status, payout: againPayout.status }, { invoice: 201, payout: 202 });
      expect(again.body.shopOrderId).toBe(invoice.shopOrderId);
      expect(againPayout.body.shopPaymentId).toBe(payout.shopPaymentId);
      expect(requestsFor('invoice/create', 'shop_order_id', invoice.shopOrderId)).toHaveLength(1);
      expect(requestsFor('withdraw/create', 'shop_payment_id', payout.shopPaymentId)).toHaveLength(
        1,
      );
      // A new create is still checked against the configuration.
      const fresh = await createInvoice(world, tracked, invoiceOrder('success'), 0);
      expect(fresh.status).toBeGreaterThanOrEqual(400);
      expect(fresh.status).toBeLessThan(500);
      return 'invoice 201 and payout 202 replayed with the payways retired; one gateway create each; a new id refused';
    } finally {
      // The gateway's own configuration again: a restart whose refresh succeeds.
      world.sandbox.state.faults.clear();
      await world.stop();
      await world.start();
    }
  }));

it('case 2: one "absent" answer never makes a refund FAILED or an invoice rejected for good', () =>
  namedCase('case 2: absence is evidence over time', async () => {
    // Refund: its submit times out and the gateway carries it out only after the first check.
    const [paid] = await paidInvoices(world, 1);
    tracked.invoices.add(paid.shopOrderId);
    const refundId = uniqueId('ref');
    world.sandbox.state.faults.add({
      path: 'invoice/create-refund',
      fault: 'timeout_not_done',
      remaining: 1,
    });
    await createRefund(world, tracked, paid.shopOrderId, refundId, '10.00', 0);
    const gatewayInvoice = world.sandbox.state.findInvoiceByOrder(SHOP_ID, paid.shopOrderId)!;
    await waitUntil(
      () =>
        world.sandbox.state.requests.some(
          (r) =>
            r.path === 'invoice/get-refunds' &&
            String((r.body as Record<string, unknown>).invoice_id) === String(gatewayInvoice.id),
        ),
      20_000,
      'the first invoice/get-refunds',
    );
    const late = await gatewayCall(world, 'invoice/create-refund', {
      invoice_id: gatewayInvoice.id,
      shop_refund_id: refundId,
      amount: '10.00',
    });
    expect(late.result).toBe(true);

    // Invoice: its create times out and the gateway makes it (and the payer pays) after the first check.
    const order = invoiceOrder('payer');
    world.sandbox.state.faults.add({
      path: 'invoice/create',
      fault: 'timeout_not_done',
      remaining: 1,
    });
    await createInvoice(world, tracked, order, 0);
    await waitUntil(
      () => requestsFor('invoice/check', 'shop_order_id', order.shopOrderId).length > 0,
      20_000,
      'the first invoice/check',
    );
    const made = await gatewayCall(world, 'invoice/create', {
      shop_order_id: order.shopOrderId,
      amount: order.amount,
      currency: 643,
      payway: paymentPayway('success'),
      callback_url: `${world.url}/webhooks/gateway`,
    });
    expect(made.result).toBe(true);

    const refund = await waitUntil(
      async () => {
        const r = await row('refunds', 'shop_refund_id', refundId);
        return r.status === 'SUCCESS' || r.status === 'FAILED' || flagged(r) ? r : null;
      },
      30_000,
      'the refund to settle',
    );
    const invoice = await waitUntil(
      async () => {
        const r = await row('invoices', 'shop_order_id', order.shopOrderId);
        return r.status === 'succeeded' || r.status === 'rejected' || flagged(r) ? r : null;
      },
      30_000,
      'the invoice to settle',
    );
    const failedEver = await world.query(
      `SELECT 1 FROM events WHERE entity_type = 'refund' AND entity_id = $1 AND to_status = 'FAILED'`,
      [refundId],
    );
    const rejectedEver = await world.query(
      `SELECT 1 FROM events WHERE entity_type = 'invoice' AND entity_id = $1 AND to_status = 'rejected'`,
      [order.shopOrderId],
    );
    want(
      {
        refund: refund.status,
        refundFailedOnce: failedEver.length > 0,
        invoice: invoice.status,
        invoiceRejectedOnce: rejectedEver.length > 0,
      },
      {
        refund: 'SUCCESS',
        refundFailedOnce: false,
        invoice: 'succeeded',
        invoiceRejectedOnce: false,
      },
    );
    return 'refund SUCCESS and invoice succeeded after a first "absent"; never FAILED or rejected on the way';
  }));

it('case 3: a success notification after a final rejection raises attention and changes no money state', () =>
  namedCase('case 3: contradictions raise attention', async () => {
    const order = invoiceOrder('rejected');
    await createInvoice(world, tracked, order, 0);
    await waitUntil(
      async () => (await row('invoices', 'shop_order_id', order.shopOrderId)).status === 'rejected',
      20_000,
      'the invoice rejected',
    );
    const gatewayInvoice = world.sandbox.state.findInvoiceByOrder(SHOP_ID, order.shopOrderId)!;
    const status = await notify(world, 'invoice', {
      shop_id: String(SHOP_ID),
      shop_order_id: order.shopOrderId,
      shop_amount: order.amount,
      shop_currency: '643',
      payment_id: String(gatewayInvoice.id),
      client_price: order.amount,
      ps_currency: '643',
      payway: order.payway,
      status: 'success',
      created: '2026-11-22T10:00:00',
      updated: '2026-11-22T10:01:00',
    });
    expect(status).toBe(200);
    const after = await row('invoices', 'shop_order_id', order.shopOrderId);
    const attention = await world.api('GET', '/api/v1/admin/attention', undefined, ADMIN_KEY);
    const metrics = await (await fetch(`${world.url}/metrics`)).text();
    want(
      {
        status: after.status,
        flagged: flagged(after),
        listed:
          attention.status === 200 && JSON.stringify(attention.body).includes(order.shopOrderId),
        counted: /payments_attention_raised_total\{[^}]*object="invoice"[^}]*\} [1-9]/.test(
          metrics,
        ),
      },
      { status: 'rejected', flagged: true, listed: true, counted: true },
    );
    return `stays rejected, flagged (${String(after.attention_reason ?? '')}), listed by /admin/attention, counted in /metrics`;
  }));

it('case 4: a refresh does not apply a paid status whose amount differs from ours', () =>
  namedCase('case 4: refresh compares the amount', async () => {
    const order = invoiceOrder('payer');
    expect((await createInvoice(world, tracked, order, 0)).status).toBe(201);
    // The gateway's record says paid, for another amount.
    const gatewayInvoice = world.sandbox.state.findInvoiceByOrder(SHOP_ID, order.shopOrderId)!;
    gatewayInvoice.amount = SandboxDecimal.parse('1.00');
    gatewayInvoice.status = 4;
    await world.api('GET', `/api/v1/invoices/${order.shopOrderId}?refresh=true`);
    const after = await row('invoices', 'shop_order_id', order.shopOrderId);
    // Put the gateway's record back so the books of this world stay true.
    gatewayInvoice.amount = SandboxDecimal.parse(order.amount);
    gatewayInvoice.status = 2;
    await payerActs(world, order.shopOrderId, 'decline');
    want(
      { succeeded: after.status === 'succeeded', flagged: flagged(after) },
      { succeeded: false, flagged: true },
    );
    return `status ${String(after.status)}, flagged: ${String(after.attention_reason ?? '')}`;
  }));

it('case 5: after a time-out a payout create is repeated late, at most PAYOUT_MAX_CREATES times, then flagged', () =>
  namedCase('case 5: payout re-create discipline', async () => {
    world.sandbox.state.faults.add({
      path: 'withdraw/create',
      fault: 'timeout_not_done',
      remaining: 50,
    });
    const order = payoutOrder('success');
    await createPayout(world, tracked, order, 0);
    const final = await waitUntil(
      async () => {
        const r = await row('payouts', 'shop_payment_id', order.shopPaymentId);
        return flagged(r) || ['succeeded', 'failed', 'rejected'].includes(String(r.status))
          ? r
          : null;
      },
      30_000,
      'the payout flagged',
    ).catch(() => ({ status: 'not flagged within 30 s' }) as Record<string, unknown>);
    world.sandbox.state.faults.clear();
    const creates = requestsFor('withdraw/create', 'shop_payment_id', order.shopPaymentId).map(
      (r) => Date.parse(r.time),
    );
    const statuses = requestsFor(
      'withdraw/shop_payment_status',
      'shop_payment_id',
      order.shopPaymentId,
    ).map((r) => Date.parse(r.time));
    const firstStatusAfterTimeout =
      statuses.length > 0 ? statuses[0] - (creates[0] + GATEWAY_TIMEOUT_MS) : null;
    const closest = creates
      .slice(1)
      .reduce((m, t, i) => Math.min(m, t - creates[i]), Number.POSITIVE_INFINITY);
    want(
      {
        creates: creates.length,
        firstStatusWaitedAnInterval:
          firstStatusAfterTimeout === null || firstStatusAfterTimeout >= POLL_INTERVAL_MS - 100,
        createsTwoTimeoutsApart: closest >= 2 * GATEWAY_TIMEOUT_MS - 100,
        flagged: flagged(final),
      },
      {
        creates: Math.min(creates.length, MAX_CREATES),
        firstStatusWaitedAnInterval: true,
        createsTwoTimeoutsApart: true,
        flagged: true,
      },
    );
    return `${creates.length} creates (≤ ${MAX_CREATES}), first status ${firstStatusAfterTimeout} ms after the time-out, creates ≥ ${closest} ms apart, flagged`;
  }));

it('case 6: a gateway payout that is not ours (other amount) is not adopted', () =>
  namedCase('case 6: foreign record not adopted', async () => {
    const order = payoutOrder('success');
    // Left on the gateway from before a database restore: same id, another amount.
    const old = await gatewayCall(world, 'withdraw/create', {
      shop_payment_id: order.shopPaymentId,
      amount: '500.00',
      amount_type: 'ps_amount',
      shop_currency: 643,
      payway: payoutPayway('success'),
      account: PAYOUT_ACCOUNT,
    });
    expect(old.result).toBe(true);
    await createPayout(world, tracked, order, 0);
    const after = await waitUntil(
      async () => {
        const r = await row('payouts', 'shop_payment_id', order.shopPaymentId);
        return r.status !== undefined && r.status !== 'pending' ? r : null;
      },
      20_000,
      'the payout row',
    );
    await sleep(2 * POLL_INTERVAL_MS);
    const settled = await row('payouts', 'shop_payment_id', order.shopPaymentId);
    tracked.payouts.delete(order.shopPaymentId);
    want(
      { succeeded: settled.status === 'succeeded', flagged: flagged(settled) },
      { succeeded: false, flagged: true },
    );
    return `status ${String(after.status)} → ${String(settled.status)}, flagged: ${String(settled.attention_reason ?? '')}`;
  }));

it('case 7: a payout that fails on every poll reaches its deadline and is flagged', () =>
  namedCase('case 7: failing poll still flagged at the deadline', async () => {
    await world.stop();
    await world.start({ PAYOUT_POLL_MAX_S: '4' });
    try {
      // Every create times out undone: the payout stays open, so its polls keep trying to re-create.
      world.sandbox.state.faults.add({
        path: 'withdraw/create',
        fault: 'timeout_not_done',
        remaining: 1000,
      });
      const order = payoutOrder('success');
      await createPayout(world, tracked, order, 0);
      // Its account can no longer be unsealed (a rotated key): every poll that would re-create throws.
      await world.query(
        `UPDATE payouts SET account_sealed = 'not-a-sealed-value' WHERE shop_payment_id = $1`,
        [order.shopPaymentId],
      );
      const r = await waitUntil(
        async () => {
          const x = await row('payouts', 'shop_payment_id', order.shopPaymentId);
          return flagged(x) ? x : null;
        },
        30_000,
        'the payout flagged at its deadline',
      ).catch(async () => row('payouts', 'shop_payment_id', order.shopPaymentId));
      tracked.payouts.delete(order.shopPaymentId);
      want({ flagged: flagged(r), status: r.status }, { flagged: true, status: r.status });
      return `flagged (${String(r.status)}; ${String(r.attention_reason ?? r.last_poll_error ?? '')})`;
    } finally {
      await world.stop();
      // The unsealable row goes: a service that checks sealed values at start-up refuses to start with it.
      await world.query(`DELETE FROM payouts WHERE account_sealed = 'not-a-sealed-value'`);
      await world.start();
    }
  }));
