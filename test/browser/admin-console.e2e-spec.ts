import { mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { Client } from 'pg';
import { ADMIN_KEY, auth, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';
import { keyIdOf } from '../../src/common/auth.guard';
import { launchBrowser, LaunchedBrowser } from '../support/browser';

const ARTIFACTS = resolve('test', 'artifacts');
const AXE = readFileSync(resolve('node_modules', 'axe-core', 'axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** axe-core in the page: the serious and critical violations (none expected). */
async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  // Evaluated as page text: the test runner has no DOM types, and the page has axe now.
  const violations = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`,
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    );
}

/**
 * An operator's morning in headless Chromium: sign in with the printed admin key, read the
 * overview, find an invoice by its id, read its timeline, settle the attention queue with
 * Accept…, and see it empty. Every page is checked with axe-core and photographed.
 */
describe('admin console in a browser', () => {
  let ctx: TestContext;
  let browser: LaunchedBrowser;
  let db: Client;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // Shop events go to a receiver (never reached here: no dispatcher tick), so deliveries exist.
    ctx = await startTestApp({
      env: {
        SHOP_WEBHOOK_URL: 'http://127.0.0.1:9/hooks',
        SHOP_WEBHOOK_SECRET: `whsec_${Buffer.from('console-test-secret-0123456789ab').toString('base64')}`,
      },
    });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await db?.end();
    await ctx?.close();
  });

  async function check(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: resolve(ARTIFACTS, `console-${name}.png`), fullPage: true });
    expect({ page: name, problems: await accessibilityProblems(page) }).toEqual({
      page: name,
      problems: [],
    });
  }

  it('signs in, finds an invoice and its timeline, accepts an attention item, and the queue is empty', async () => {
    const shopOrderId = `console-${Date.now().toString(36)}`;
    const created = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId,
        amount: '250.50',
        currency: 643,
        payway: PAYMENT.card,
        description: 'Console <b>order</b>',
      })
      .expect(201);
    await fetch(`${ctx.sandbox.origin}/sandbox/invoices/${String(created.body.invoiceId)}/pay`, {
      method: 'POST',
    });
    // Its notification arrives and is applied: wait for the stored status.
    for (let i = 0; i < 100; i++) {
      const r = await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth());
      if (r.body.status === 'succeeded') break;
      await new Promise((res) => setTimeout(res, 100));
    }
    const flagged = await ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({
        shopOrderId: `${shopOrderId}-f`,
        amount: '10.00',
        currency: 643,
        payway: PAYMENT.card,
      })
      .expect(201);
    // The gateway rejects it; its notification is lost, so the invoice stays open here.
    await fetch(`${ctx.sandbox.origin}/sandbox/settings`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ suppressNotifications: true }),
    });
    await fetch(`${ctx.sandbox.origin}/sandbox/invoices/${String(flagged.body.invoiceId)}/decline`, {
      method: 'POST',
    });
    await fetch(`${ctx.sandbox.origin}/sandbox/settings`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ suppressNotifications: false }),
    });
    await db.query(
      `UPDATE invoices SET needs_attention = true, attention_reason = 'no final status by the deadline', attention_at = now() WHERE shop_order_id = $1`,
      [flagged.body.shopOrderId],
    );

    const page = await browser.context.newPage();
    await page.goto(`${ctx.url}/admin`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await check(page, 'sign-in');
    await page.fill('#key', ADMIN_KEY);
    await Promise.all([page.waitForURL(`${ctx.url}/admin`), page.click('button[type=submit]')]);
    expect(await page.textContent('h1')).toBe('Overview');
    expect(await page.locator('svg.chart').count()).toBe(1);
    // The session cookie is HttpOnly: page script cannot read it.
    expect(await page.evaluate('document.cookie')).not.toContain('console_session');
    await check(page, 'overview');

    await page.click('nav >> text=Invoices');
    await page.fill('#q', shopOrderId);
    await Promise.all([
      page.waitForURL(/\/admin\/ui\/invoices\?/),
      page.click('form.search button'),
    ]);
    // The search takes an id's beginning: this invoice is among what it finds, once.
    const found = page.locator(`tbody tr:has(a[href="/admin/ui/invoices/${shopOrderId}"])`);
    expect(await found.count()).toBe(1);
    expect(await found.textContent()).toContain('250.50 RUB');
    await check(page, 'invoices');

    await page.click(`tbody a:text-is("${shopOrderId}")`);
    expect(await page.textContent('h1')).toBe(`Invoice ${shopOrderId}`);
    const timeline = await page.locator('ol.timeline li').allTextContents();
    expect(timeline.length).toBeGreaterThanOrEqual(2);
    expect(timeline.join('\n')).toContain('succeeded');
    expect(timeline.join('\n')).toContain('notification');
    // In words, each raw detail folded under its line.
    expect(timeline.join('\n')).toMatch(/Invoice \S+ of [\d.]+ RUB (created|succeeded)/);
    expect(timeline.join('\n')).not.toMatch(/ → /);
    // The stored description is shown as text, not markup.
    expect(await page.locator('dd >> text=Console <b>order</b>').count()).toBe(1);
    await check(page, 'invoice-detail');

    await page.click('nav >> text=Attention');
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await page.textContent('tbody tr')).toContain('no final status by the deadline');
    await check(page, 'attention');
    await page.click('summary:text("Accept…")');
    await page.selectOption('select[name=status]', 'rejected');
    await page.fill('textarea[name=note]', 'Checked in the gateway back office: never paid.');
    await Promise.all([
      page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'GET'),
      page.click('details button[type=submit]'),
    ]);
    expect(await page.locator('#queue-empty').count()).toBe(1);
    await check(page, 'attention-empty');
    const row = await db.query(
      `SELECT status, needs_attention FROM invoices WHERE shop_order_id = $1`,
      [flagged.body.shopOrderId],
    );
    expect(row.rows[0]).toEqual({ status: 'rejected', needs_attention: false });
    // The operator's key id (never the key) is on the audit entry and shop event of the resolution.
    const resolved = await db.query(
      `SELECT key_id, type FROM events WHERE entity_id = $1 AND type = 'invoice.attention_resolved'`,
      [flagged.body.shopOrderId],
    );
    expect(resolved.rows).toEqual([{ key_id: keyIdOf(ADMIN_KEY), type: 'invoice.attention_resolved' }]);

    await page.click('nav >> text=Notifications');
    expect(await page.locator('tbody tr').count()).toBeGreaterThanOrEqual(1);
    await check(page, 'notifications');
    // The feed relays committed events into deliveries; the deliveries page redelivers one. A
    // feed read while the scheduled relay holds the relay lock positions nothing itself (the
    // scheduled run does, a moment later), so the page is read again until the deliveries show.
    await ctx.http.get('/api/v1/events').set(auth()).expect(200);
    await page.click('nav >> text=Webhook deliveries');
    for (let tries = 0; tries < 50 && (await page.locator('tbody tr').count()) === 0; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      await ctx.http.get('/api/v1/events').set(auth()).expect(200);
      await page.reload();
    }
    expect(await page.locator('tbody tr').count()).toBeGreaterThanOrEqual(1);
    await check(page, 'deliveries');
    await Promise.all([
      page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'GET'),
      page.click('tbody tr:first-child button:text("Redeliver")'),
    ]);
    expect(await page.textContent('.flash')).toContain('queued for delivery again');
    for (const path of ['refunds', 'payouts']) {
      await page.goto(`${ctx.url}/admin/ui/${path}`);
      await check(page, path);
    }
    // The console's own sessions: this one is listed, marked, and has nothing to revoke but its key's.
    await page.click('nav >> text=Sessions');
    expect(await page.locator('tbody tr').count()).toBeGreaterThanOrEqual(1);
    expect(await page.textContent('tbody')).toContain('this session');
    await check(page, 'sessions');
    await page.close();
  });
});
