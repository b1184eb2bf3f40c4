import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxHandle, SandboxOptions } from './sandbox.server';
import {
  asText,
  nowText,
  sleep,
  startTestSandbox,
  TestShop,
  uniqueId,
  waitFor,
} from './testing/sandbox-test-kit';
import { PAYMENT, PAYOUT } from '../../test/support/payways';

const CARD_ACCOUNT = '4276380012345678';

/** A sandbox kept in a file (as in sandbox mode) remembers across restarts; without one it forgets. */
describe('sandbox: a kept state survives a restart', () => {
  let dir: string;
  let statePath: string;
  const open: SandboxHandle[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-state-'));
    statePath = join(dir, 'sandbox-state.json');
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(
    opts: SandboxOptions = {},
  ): Promise<{ sandbox: SandboxHandle; shop: TestShop }> {
    const sandbox = await startTestSandbox({ statePath, ...opts });
    open.push(sandbox);
    return { sandbox, shop: new TestShop(sandbox) };
  }

  async function restart(
    sandbox: SandboxHandle,
    opts: SandboxOptions = {},
  ): Promise<{ sandbox: SandboxHandle; shop: TestShop }> {
    await sandbox.close();
    open.splice(open.indexOf(sandbox), 1);
    // Let fetch's pool see its kept-alive connections to the old server closed.
    await sleep(50);
    return start({ port: Number(new URL(sandbox.origin).port), ...opts });
  }

  const balance = async (shop: TestShop): Promise<string> => {
    const r = await shop.call('shop_balance', { now: nowText() });
    return asText(r.text);
  };

  const payout = (shop: TestShop, payway: string = PAYOUT.card) =>
    shop.call('withdraw/create', {
      shop_payment_id: uniqueId('p'),
      amount: '1000.00',
      amount_type: 'ps_amount',
      shop_currency: 643,
      payway,
      account: CARD_ACCOUNT,
    });

  const payoutStatus = async (shop: TestShop, id: unknown): Promise<number> =>
    Number(
      asText(
        (await shop.call('withdraw/status', { withdraw_id: Number(asText(id)), now: nowText() }))
          .data.status,
      ),
    );

  it('invoices, tokens, refunds, payouts, balances, pay pages and ids are all still there', async () => {
    const first = await start();
    let { shop } = first;
    const paid = uniqueId('kept');
    await shop.createInvoice({
      shop_order_id: paid,
      amount: '1250.50',
      payway: PAYMENT.cardSuccess,
      issue_payment_token: true,
    });
    const token = (await shop.check(paid)).data.payment_token as Record<string, unknown>;
    expect(token.token).toMatch(/^tok_/);
    const unpaid = uniqueId('kept');
    const created = await shop.createInvoice({ shop_order_id: unpaid, payway: PAYMENT.card });
    const checkoutUrl = `${asText(created.data.url)}?session_id=${asText((created.data.data as Record<string, unknown>).session_id)}`;
    const p = await payout(shop);
    await waitFor(async () => (await payoutStatus(shop, p.data.id)) === 5, 3000, 'the payout');
    const before = { balance: await balance(shop), paid: (await shop.check(paid)).text };
    expect(before.balance).not.toContain('"available":1000000.00');

    ({ shop } = await restart(first.sandbox));

    expect(await balance(shop)).toBe(before.balance);
    expect((await shop.check(paid)).text).toBe(before.paid);
    expect(await payoutStatus(shop, p.data.id)).toBe(5);
    const paidId = Number(asText((await shop.check(paid)).data.payment_id));
    const refund = await shop.call('invoice/create-refund', {
      invoice_id: paidId,
      amount: '0.50',
      shop_refund_id: uniqueId('ref'),
    });
    expect(refund).toMatchObject({ result: true, data: { status: 'WAITING', amount: '0.50' } });
    const charged = uniqueId('kept');
    const charge = await shop.createInvoice({
      shop_order_id: charged,
      payway: PAYMENT.card,
      payment_token: token.token,
    });
    expect(charge.result).toBe(true);
    await waitFor(async () => (await shop.status(charged)) === 4, 3000, 'the token charge');
    // The payer's old link still leads to the payment, which can still be paid.
    const page = await fetch(checkoutUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain('Payment not found');
    expect(await shop.status(unpaid)).toBe(2);
    // Ids go on, never reused.
    expect(Number(asText(charge.data.id))).toBeGreaterThan(Number(asText(p.data.id)));
    // The file holds tokens: its owner's only.
    expect(statSync(statePath).mode & 0o077).toBe(0);
  });

  it('what was under way at shutdown goes on: payouts, refunds, token charges end as planned', async () => {
    // Real sandbox time: everything below is still under way when the sandbox stops.
    const first = await start({ timeScale: 1 });
    let { shop } = first;
    const paid = uniqueId('run');
    await shop.createInvoice({
      shop_order_id: paid,
      amount: '300.00',
      payway: PAYMENT.cardSuccess,
      issue_payment_token: true,
    });
    const check = await shop.check(paid);
    const token = (check.data.payment_token as Record<string, unknown>).token;
    const refund = await shop.call('invoice/create-refund', {
      invoice_id: Number(asText(check.data.payment_id)),
      amount: '100.00',
      shop_refund_id: uniqueId('ref'),
    });
    const charged = uniqueId('run');
    await shop.createInvoice({
      shop_order_id: charged,
      payway: PAYMENT.card,
      payment_token: token,
    });
    const ok = await payout(shop);
    const declined = await payout(shop, PAYOUT.sandboxCard('decline'));
    expect(declined.result).toBe(true);
    expect(await payoutStatus(shop, ok.data.id)).toBe(3);

    ({ shop } = await restart(first.sandbox, { timeScale: 1 }));

    await waitFor(async () => (await payoutStatus(shop, ok.data.id)) === 5, 5000, 'the payout');
    await waitFor(
      async () => (await payoutStatus(shop, declined.data.id)) === 8,
      5000,
      'the declined payout',
    );
    await waitFor(async () => (await shop.status(charged)) === 4, 5000, 'the token charge');
    const refunds = async () =>
      (
        await shop.call('invoice/get-refunds', {
          invoice_id: Number(asText(check.data.payment_id)),
          now: nowText(),
        })
      ).list;
    await waitFor(
      async () =>
        (await refunds()).some(
          (r) => r.shop_refund_id === refund.data.shop_refund_id && r.status === 'SUCCESS',
        ),
      5000,
      'the refund',
    );
    // The sent payout was debited; the declined one returned; nothing is left frozen.
    expect(await balance(shop)).toContain('"frozen":0.00');
  });

  it('a notification still owed at shutdown is sent after the restart', async () => {
    // The shop's endpoint hangs on the first delivery (cut short by the shutdown), then answers OK.
    const seen: string[] = [];
    const hung: ServerResponse[] = [];
    const endpoint: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push(body);
        if (seen.length === 1) hung.push(res);
        else res.writeHead(200).end('OK');
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/notify`;
    try {
      let { sandbox, shop } = await start();
      const order = uniqueId('owed');
      const c = await shop.createInvoice({
        shop_order_id: order,
        payway: PAYMENT.wallet,
        phone: '79991234567',
        callback_url: url,
      });
      await shop.control('POST', `/invoices/${asText(c.data.id)}/pay`);
      await waitFor(() => seen.length === 1, 3000, 'the first delivery');

      ({ sandbox, shop } = await restart(sandbox));

      await waitFor(() => seen.length === 2, 3000, 'the delivery again');
      expect(seen[1]).toBe(seen[0]);
      const deliveries = await shop.control<Record<string, unknown>[]>('GET', '/notifications');
      expect(deliveries.filter((d) => d.ok === true)).toHaveLength(1);
      expect(sandbox.state.outbox).toEqual([]);
    } finally {
      for (const res of hung) res.destroy();
      endpoint.closeAllConnections();
      await new Promise<void>((resolve) => endpoint.close(() => resolve()));
    }
  });

  it('a damaged state file stops the start, naming the file; writes leave no temporary file', async () => {
    const { sandbox, shop } = await start();
    await shop.createInvoice({ shop_order_id: uniqueId('tmp'), payway: PAYMENT.cardSuccess });
    await sandbox.close();
    open.splice(0);
    expect(readdirSync(dir)).toEqual(['sandbox-state.json']);
    writeFileSync(statePath, readFileSync(statePath, 'utf8').slice(0, 100));
    await expect(startTestSandbox({ statePath })).rejects.toThrow(
      `cannot read the sandbox state ${statePath}`,
    );
  });

  it('a reset forgets on disk too; without a state file nothing is kept', async () => {
    let { sandbox, shop } = await start();
    const order = uniqueId('gone');
    await shop.createInvoice({ shop_order_id: order, payway: PAYMENT.cardSuccess });
    await payout(shop);
    await shop.control('POST', '/reset');
    ({ sandbox, shop } = await restart(sandbox));
    expect(await balance(shop)).toContain('"available":1000000.00');
    expect((await shop.check(order)).result).toBe(false);
    await sandbox.close();
    open.splice(0);

    rmSync(statePath);
    const memory = await startTestSandbox();
    await new TestShop(memory).createInvoice({
      shop_order_id: uniqueId('mem'),
      payway: PAYMENT.cardSuccess,
    });
    await memory.close();
    expect(existsSync(statePath)).toBe(false);
  });
});
