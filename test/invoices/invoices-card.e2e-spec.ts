import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';
import { logFileText } from '../support/log-file';

/**
 * Card data is passed to the gateway and kept nowhere: not in any text or JSON column of any
 * table, not in the service's log. The logger picks its destination (LOG_FILE) when first
 * imported, so the app is imported only after LOG_FILE is set.
 */
const CARD_NUMBER = '5555555555554444';

/** Where the checkout URL of a card payway's redirect (GET url?session_id=…) sends the payer. */
async function checkoutStep(redirect: { url: string; params: Record<string, string> }) {
  const res = await fetch(`${redirect.url}?${new URLSearchParams(redirect.params).toString()}`, {
    redirect: 'manual',
  });
  return res.headers.get('location') ?? '';
}
const CVV = '8462';

describe('card data is never stored or logged', () => {
  const logDir = mkdtempSync(join(tmpdir(), 'invoice-card-log-'));
  const logFile = join(logDir, 'service.log');
  let ctx: TestContext;
  let auth: () => Record<string, string>;
  let db: Client;

  beforeAll(async () => {
    process.env.LOG_FILE = logFile;
    process.env.LOG_LEVEL = 'debug';
    const app = await import('../support/app');
    auth = app.auth;
    ctx = await app.startTestApp();
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
    delete process.env.LOG_FILE;
    delete process.env.LOG_LEVEL;
    rmSync(logDir, { recursive: true, force: true });
  });

  async function waitForStatus(
    shopOrderId: string,
    status: string,
  ): Promise<Record<string, unknown>> {
    const deadline = Date.now() + 8000;
    while (Date.now() < deadline) {
      const res = await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth());
      if (res.body.status === status) return res.body as Record<string, unknown>;
      await new Promise((r) => setTimeout(r, 100));
    }
    return (await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth()))
      .body as Record<string, unknown>;
  }

  /** Every text, varchar, char, json and jsonb value of every table, as text. */
  async function dumpDatabase(): Promise<string> {
    const cols = await db.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type IN ('text', 'character varying', 'character', 'json', 'jsonb')`,
    );
    const parts: string[] = [];
    for (const c of cols.rows) {
      const r = await db.query<{ v: string | null }>(
        `SELECT "${c.column_name}"::text AS v FROM "${c.table_name}"`,
      );
      for (const row of r.rows)
        if (row.v !== null) parts.push(`${c.table_name}.${c.column_name}=${row.v}`);
    }
    return parts.join('\n');
  }

  it('after card payments (with and without client_info) neither the number nor the CVV is anywhere', async () => {
    const card = {
      number: CARD_NUMBER,
      cardholder: 'CARD HOLDER',
      expiryMonth: '12',
      expiryYear: '30',
      cvv: CVV,
    };
    const withoutInfo = `card-${Date.now()}-a`;
    const withInfo = `card-${Date.now()}-b`;

    // No client_info: the gateway's redirect collects it (spec rule 7).
    const a = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId: withoutInfo,
        amount: '150.00',
        currency: 643,
        payway: PAYMENT.card,
        card,
        savePaymentToken: true,
      })
      .expect(201);
    expect(await checkoutStep(a.body.redirect)).toContain('/browser-info/');

    const b = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId: withInfo,
        amount: '150.00',
        currency: 643,
        payway: PAYMENT.card,
        card,
        clientInfo: {
          browserLanguage: 'en',
          browserJavascriptEnabled: true,
          challengeWindowSize: '05',
        },
      })
      .expect(201);
    expect(await checkoutStep(b.body.redirect)).toContain('/3ds/');
    // Idempotent replay still works without the card being part of what is stored.
    await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId: withInfo,
        amount: '150.00',
        currency: 643,
        payway: PAYMENT.card,
        card,
        clientInfo: {
          browserLanguage: 'en',
          browserJavascriptEnabled: true,
          challengeWindowSize: '05',
        },
      })
      .expect(201);

    for (const inv of [a.body, b.body]) {
      await fetch(`${ctx.sandbox.origin}/sandbox/invoices/${String(inv.invoiceId)}/pay`, {
        method: 'POST',
      });
    }
    await waitForStatus(withoutInfo, 'succeeded');
    await waitForStatus(withInfo, 'succeeded');
    // A refresh stores the token object (masked account) from invoice/check too.
    const shown = await ctx.http
      .get(`/api/v1/invoices/${withoutInfo}?refresh=true`)
      .set(auth())
      .expect(200);
    expect(shown.body.paymentToken.account).toBe('555555******4444');

    // Sealed values (k1.<key id>.<nonce>.<tag>.<ciphertext>, base64url) are random text that may
    // spell anything, "cvv" or the CVV's digits included: they are not clear data, so leave them out.
    const dump = (await dumpDatabase()).replace(
      /k1\.[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+){3}/g,
      '<sealed>',
    );
    expect(dump).toContain(withoutInfo); // the dump really covers the invoices
    expect(dump).toContain('555555******4444'); // the masked form is all there is
    expect(dump).not.toContain(CARD_NUMBER);
    expect(dump).not.toMatch(new RegExp(`(^|[^0-9a-f])${CVV}([^0-9a-f]|$)`, 'm'));
    expect(dump).not.toMatch(/cvv/i);

    const log = await logFileText(logFile);
    expect(log).toContain('gateway call'); // the capture works
    expect(log).not.toContain(CARD_NUMBER);
    expect(log).not.toMatch(new RegExp(`(^|[^0-9a-f])${CVV}([^0-9a-f]|$)`, 'm'));
  });
});
