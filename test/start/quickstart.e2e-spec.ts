import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Decimal from 'decimal.js';
import { Webhook } from 'standardwebhooks';
import { WebhookDispatcher } from '../../src/events/webhook-dispatcher';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { admin, auth, startTestApp, type TestContext } from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';
import { freePort } from '../support/ports';
import { eventually, WebhookReceiver } from '../support/webhook-receiver';

/**
 * docs/quickstart.md, kept honest: the walkthrough's requests in its order against a service,
 * its sandbox and real webhook receivers (the test's own, and the receiver the document has the
 * reader write, run from the document's text with the document's secret), each step's status
 * and key fields as the document shows them, and every address and request field the document
 * uses for the steps appearing in it.
 */
const root = process.cwd();
const DOC = readFileSync(join(root, 'docs/quickstart.md'), 'utf8');
const SERVICE = 'http://localhost:3000';
const SANDBOX = 'http://localhost:4010';

const ORDER = 'order-1001';
const REFUND = 'refund-1001-1';
const PAYOUT_ID = 'payout-2001';
const INVOICE_BODY = {
  shopOrderId: ORDER,
  amount: '1500.00',
  currency: 'RUB',
  payway: PAYMENT.card,
  description: 'Order 1001',
  metadata: { cart: 'c-77' },
};
const REFUND_BODY = { shopRefundId: REFUND, amount: '500.00' };
const PAYOUT_BODY = {
  shopPaymentId: PAYOUT_ID,
  amount: '1000.00',
  amountType: 'ps_amount',
  shopCurrency: 643,
  payway: PAYOUT.card,
  account: '4111111111111111',
  description: 'Seller payout',
};

/** The secret the document exports, and the receiver it has the reader save as hooks.mjs. */
const WHSEC = /export SHOP_WEBHOOK_SECRET=(whsec_\S+)/.exec(DOC)?.[1] ?? '';
const HOOKS_SOURCE = /cat > hooks\.mjs <<'EOF'\n([\s\S]*?)\nEOF\n/.exec(DOC)?.[1] ?? '';

let ctx: TestContext;
const receiver = new WebhookReceiver();
let hooks: ChildProcess;
let hooksOutput = '';

beforeAll(async () => {
  expect(WHSEC).toMatch(/^whsec_/);
  expect(HOOKS_SOURCE).toContain("from 'standardwebhooks'");
  // Inside the repository (a git-ignored folder), so that `standardwebhooks` resolves as it does
  // for the reader who saves hooks.mjs in the repository's directory.
  const dir = join(root, 'test/artifacts');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'quickstart-hooks.mjs');
  writeFileSync(file, `${HOOKS_SOURCE}\n`);
  const hooksPort = await freePort();
  hooks = spawn(process.execPath, [file], {
    env: { ...process.env, SHOP_WEBHOOK_SECRET: WHSEC, HOOKS_PORT: String(hooksPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  hooks.stdout!.on('data', (c: Buffer) => (hooksOutput += c.toString('utf8')));
  hooks.stderr!.on('data', (c: Buffer) => (hooksOutput += c.toString('utf8')));
  await eventually(() =>
    expect(hooksOutput).toContain(`listening on http://localhost:${hooksPort}/hooks`),
  );
  await receiver.start();
  ctx = await startTestApp({
    env: {
      SHOP_WEBHOOK_URL: `${receiver.url},http://127.0.0.1:${hooksPort}/hooks`,
      SHOP_WEBHOOK_SECRET: WHSEC,
      PAYOUT_POLL_INTERVAL_S: '0.2',
    },
  });
}, 120000);

afterAll(async () => {
  await ctx?.close();
  await receiver.close();
  hooks?.kill();
});

const deliver = async (): Promise<void> => {
  await ctx.service.app.get(WebhookDispatcher).runOnce();
};

/** The body as JSON in the document: each top-level field as the document's request spells it. */
function expectDocSends(body: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(body)) {
    expect(DOC).toContain(`"${field}":${JSON.stringify(value)}`);
  }
}

describe('docs/quickstart.md, step by step', () => {
  let payUrl = '';
  let feedCursor = '';
  let balanceBefore = '';

  it('1. the document names the default addresses and the webhook settings', () => {
    expect(DOC).toContain(`SHOP_WEBHOOK_URL=http://localhost:8080/hooks npm start`);
    expect(DOC).toContain(`  webhooks: http://localhost:8080/hooks`);
    expect(DOC).toContain(`  service:  ${SERVICE}`);
    expect(DOC).toContain(`  sandbox:  ${SANDBOX}/gateway/v1/`);
  });

  it('2. lists the payway and creates the invoice with a pay link', async () => {
    expect(DOC).toContain(`${SERVICE}/api/v1/payways?direction=payment`);
    const payways = await ctx.http.get('/api/v1/payways?direction=payment').set(auth());
    expect(payways.status).toBe(200);
    const aliases = (payways.body.groups as Array<{ payways: Array<{ alias: string }> }>).flatMap(
      (g) => g.payways.map((p) => p.alias),
    );
    expect(aliases).toContain(PAYMENT.card);

    expect(DOC).toContain(`-X POST ${SERVICE}/api/v1/invoices \\`);
    expectDocSends(INVOICE_BODY);
    const res = await ctx.http.post('/api/v1/invoices').set(auth()).send(INVOICE_BODY);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      shopOrderId: ORDER,
      status: 'awaiting_payer',
      gatewayStatus: 2,
      amount: '1500.00',
      currency: 643,
      currencyCode: 'RUB',
      metadata: { cart: 'c-77' },
      refundableAmount: '0.00',
      refundStatus: 'none',
      redirect: { method: 'GET' },
    });
    payUrl = res.body.payUrl as string;
    expect(payUrl).toMatch(new RegExp(`^${ctx.url}/pay/${ORDER}\\?t=[A-Za-z0-9_-]+$`));
  });

  it('3. the pay link leads to the checkout, and the sandbox pays by the order id', async () => {
    expect(DOC).toContain(`${SERVICE}/pay/${ORDER}?t=`);
    const link = await ctx.http.get(payUrl.slice(ctx.url.length)).redirects(0);
    expect(link.status).toBe(302);
    expect(link.headers.location).toMatch(/\/sandbox\/checkout\?session_id=cs_/);

    expect(DOC).toContain(`-X POST ${SANDBOX}/sandbox/invoices/${ORDER}/pay`);
    const paid = await fetch(`${ctx.sandbox.origin}/sandbox/invoices/${ORDER}/pay`, {
      method: 'POST',
    });
    expect(paid.status).toBe(200);
    const record = (await paid.json()) as {
      result: boolean;
      data: { shop_order_id: string; status: number };
    };
    expect(record).toMatchObject({ result: true, data: { shop_order_id: ORDER, status: 4 } });
  });

  it('4. the invoice is succeeded, with what the payer paid', async () => {
    expect(DOC).toContain(`${SERVICE}/api/v1/invoices/${ORDER} `);
    const invoice = await eventually(async () => {
      const res = await ctx.http.get(`/api/v1/invoices/${ORDER}`).set(auth());
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('succeeded');
      return res.body as Record<string, unknown>;
    });
    expect(invoice).toMatchObject({
      gatewayStatus: 4,
      payerPrice: '1537.50',
      psCurrency: 643,
      refundableAmount: '1500.00',
      refundStatus: 'none',
    });
    expect(invoice.processedAt).not.toBeNull();
  });

  it("5. the signed webhooks reach both receivers, and the document's snippet verifies them", async () => {
    await eventually(
      async () => {
        await deliver();
        expect(receiver.received.map((r) => r.event.type)).toEqual(
          expect.arrayContaining(['invoice.awaiting_payer', 'invoice.succeeded']),
        );
        expect(hooksOutput.match(/signature: valid/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
      },
      20000,
      50,
    );
    const succeeded = receiver.received.find((r) => r.event.type === 'invoice.succeeded')!;
    expect(succeeded.id).toBe(succeeded.event.id);
    expect(succeeded.timestamp).toMatch(/^\d{10}$/);
    expect(succeeded.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(succeeded.event).toMatchObject({ objectType: 'invoice', objectId: ORDER, sequence: 2 });
    expect(new Webhook(WHSEC).verify(succeeded.body, receiver.headersOf(succeeded))).toEqual(
      succeeded.event,
    );
    // The document's receiver printed the same delivery and found its signature valid.
    expect(hooksOutput).toContain(`webhook-id: ${succeeded.id}\n`);
    expect(hooksOutput).not.toContain('INVALID');
    for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      expect(DOC).toContain(`${header}: `);
    }
    expect(DOC).toContain("import { Webhook } from 'standardwebhooks';");
  });

  it('6. the feed has the same events, and its cursor waits for more', async () => {
    expect(DOC).toContain(`${SERVICE}/api/v1/events?objectId=${ORDER}`);
    const res = await ctx.http.get(`/api/v1/events?objectId=${ORDER}`).set(auth());
    expect(res.status).toBe(200);
    const items = res.body.items as Array<{ id: string; type: string; sequence: number }>;
    expect(items.map((e) => [e.type, e.sequence])).toEqual([
      ['invoice.awaiting_payer', 1],
      ['invoice.succeeded', 2],
    ]);
    const pushed = receiver.received.filter((r) => r.event.objectId === ORDER).map((r) => r.id);
    expect(items.map((e) => e.id)).toEqual(pushed);
    feedCursor = res.body.nextCursor as string;
    expect(feedCursor).toEqual(expect.any(String));
    const next = await ctx.http
      .get(`/api/v1/events?objectId=${ORDER}&after=${feedCursor}`)
      .set(auth());
    expect(next.body).toEqual({ items: [], nextCursor: feedCursor });
  });

  it('7. a partial refund is taken; one past what is left is refused', async () => {
    expect(DOC).toContain(`-X POST ${SERVICE}/api/v1/invoices/${ORDER}/refunds \\`);
    expectDocSends(REFUND_BODY);
    const res = await ctx.http
      .post(`/api/v1/invoices/${ORDER}/refunds`)
      .set(auth())
      .send(REFUND_BODY);
    expect(res.status).toBe(201);
    // WAITING as the document shows, unless the sandbox's notification already landed.
    expect(res.body).toMatchObject({ shopRefundId: REFUND, shopOrderId: ORDER, amount: '500.00' });
    expect(['WAITING', 'SUCCESS']).toContain(res.body.status);

    expect(DOC).toContain('"1000.01"');
    const over = await ctx.http
      .post(`/api/v1/invoices/${ORDER}/refunds`)
      .set(auth())
      .send({ shopRefundId: 'refund-1001-2', amount: '1000.01' });
    expect(over.status).toBe(422);
    expect(over.body.type).toMatch(/\/refund-exceeds-paid-amount$/);
    expect(DOC).toContain('refund-exceeds-paid-amount');
  });

  it('8. the refund succeeds and the invoice keeps the sums', async () => {
    expect(DOC).toContain(`${SERVICE}/api/v1/invoices/${ORDER}/refunds -H`);
    await eventually(async () => {
      const res = await ctx.http.get(`/api/v1/invoices/${ORDER}/refunds`).set(auth());
      expect(res.body.items).toEqual([
        expect.objectContaining({ shopRefundId: REFUND, status: 'SUCCESS' }),
      ]);
    });
    const invoice = await ctx.http.get(`/api/v1/invoices/${ORDER}`).set(auth());
    expect(invoice.body).toMatchObject({
      status: 'succeeded',
      refundedAmount: '500.00',
      refundPendingAmount: '0.00',
      refundableAmount: '1000.00',
      refundStatus: 'partial',
    });
    await eventually(
      async () => {
        await deliver();
        const types = receiver.received.map((r) => r.event.type);
        expect(types).toEqual(expect.arrayContaining(['refund.waiting', 'refund.success']));
        expect(types.filter((t) => t === 'invoice.refund_updated')).toHaveLength(2);
      },
      20000,
      50,
    );
    for (const type of ['refund.waiting', 'refund.success', 'invoice.refund_updated'])
      expect(DOC).toContain(type);
  });

  it('9. the agent balance, and a payout sent to the gateway', async () => {
    expect(DOC).toContain(`${SERVICE}/api/v1/balance -H`);
    const balance = await ctx.http.get('/api/v1/balance').set(auth());
    expect(balance.status).toBe(200);
    balanceBefore = (balance.body.balances as Array<{ currency: number; available: string }>).find(
      (b) => b.currency === 643,
    )!.available;

    expect(DOC).toContain(`-X POST ${SERVICE}/api/v1/payouts \\`);
    expectDocSends(PAYOUT_BODY);
    const res = await ctx.http.post('/api/v1/payouts').set(auth()).send(PAYOUT_BODY);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      shopPaymentId: PAYOUT_ID,
      status: 'processing',
      gatewayStatus: 3,
      payeeReceive: '1000.00',
      shopWriteOff: '1040.00',
      account: '411111******1111',
    });
    expect(res.body.nextPollAt).not.toBeNull();
  });

  it('10. the payout is final once polled, and the balance paid its write-off', async () => {
    expect(DOC).toContain(`${SERVICE}/api/v1/payouts/${PAYOUT_ID} `);
    await eventually(async () => {
      await ctx.service.app.get(PayoutPoller).runOnce();
      const res = await ctx.http.get(`/api/v1/payouts/${PAYOUT_ID}`).set(auth());
      expect(res.body).toMatchObject({ status: 'succeeded', gatewayStatus: 5, nextPollAt: null });
    });
    const balance = await ctx.http.get('/api/v1/balance').set(auth());
    const after = (balance.body.balances as Array<{ currency: number; available: string }>).find(
      (b) => b.currency === 643,
    )!.available;
    expect(new Decimal(balanceBefore).minus(after).toFixed(2)).toBe('1040.00');
    await eventually(
      async () => {
        await deliver();
        const types = receiver.received.map((r) => r.event.type);
        expect(types).toEqual(expect.arrayContaining(['payout.processing', 'payout.succeeded']));
      },
      20000,
      50,
    );
    expect(hooksOutput).not.toContain('INVALID');
  });

  it('11. the books with the admin key (not a shop key), and the console', async () => {
    expect(DOC).toContain(`${SERVICE}/api/v1/admin/ledger/balances -H`);
    const res = await ctx.http.get('/api/v1/admin/ledger/balances').set(admin());
    expect(res.status).toBe(200);
    const balances = res.body.balances as Array<{
      account: string;
      currency: number;
      balance: string;
    }>;
    const of = (account: string): string | undefined =>
      balances.find((b) => b.account === account && b.currency === 643)?.balance;
    expect({
      gateway_payment_shop: of('gateway_payment_shop'),
      sales: of('sales'),
      payouts_paid: of('payouts_paid'),
      payout_fees: of('payout_fees'),
      agent_frozen: of('agent_frozen'),
    }).toEqual({
      gateway_payment_shop: '1000.00',
      sales: '-1000.00',
      payouts_paid: '1000.00',
      payout_fees: '40.00',
      agent_frozen: '0.00',
    });
    expect((await ctx.http.get('/api/v1/admin/ledger/balances').set(auth())).status).toBe(403);

    expect(DOC).toContain(`<${SERVICE}/admin>`);
    const consoleRes = await ctx.http.get('/admin').redirects(0);
    expect([200, 302, 303]).toContain(consoleRes.status);
    expect(DOC).toContain('](integrating.md)');
  });
});
