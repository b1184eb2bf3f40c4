import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';
import { logFileText } from '../support/log-file';
import { eventually } from '../support/webhook-receiver';

/**
 * OpenTelemetry tracing against the running app: spans reach a small OTLP/HTTP receiver (JSON
 * export); the caller's traceparent is the parent of the request's span, whose trace goes on to
 * the gateway call (the sandbox sees the header) and into the access line; webhook deliveries and
 * job rounds have spans and send their traceparent. Off, nothing of OpenTelemetry is loaded.
 */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

/** OTLP/JSON ids are hex; some exporters write base64: both read as hex. */
const hex = (id: string | undefined): string =>
  id === undefined || id === ''
    ? ''
    : /^[0-9a-f]+$/.test(id)
      ? id
      : Buffer.from(id, 'base64').toString('hex');

class OtlpReceiver {
  readonly spans: OtlpSpan[] = [];
  readonly contentTypes = new Set<string>();
  private server: Server | null = null;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.contentTypes.add(`${req.method} ${req.url} ${req.headers['content-type']}`);
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: Array<{ resource: unknown; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
        };
        for (const rs of body.resourceSpans)
          for (const ss of rs.scopeSpans)
            for (const s of ss.spans)
              this.spans.push({
                ...s,
                traceId: hex(s.traceId),
                spanId: hex(s.spanId),
                parentSpanId: hex(s.parentSpanId),
              });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** A shop's webhook endpoint that keeps each delivery's headers. */
async function headerReceiver(): Promise<{
  url: string;
  received: IncomingHttpHeaders[];
  close(): Promise<void>;
}> {
  const received: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.headers);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

describe('OpenTelemetry tracing', () => {
  const logDir = mkdtempSync(join(tmpdir(), 'tracing-log-'));
  const logFile = join(logDir, 'service.log');
  let app: typeof import('../support/app');
  let ctx: TestContext;
  let otlp: OtlpReceiver;
  let hooks: Awaited<ReturnType<typeof headerReceiver>>;

  beforeAll(async () => {
    process.env.LOG_FILE = logFile;
    process.env.LOG_LEVEL = 'info';
    // Batches sent within 50 ms rather than 5 s.
    process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    otlp = await new OtlpReceiver().start();
    hooks = await headerReceiver();
    app = await import('../support/app');
    ctx = await app.startTestApp({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_SERVICE_NAME: 'orchestrator-under-test',
        SHOP_WEBHOOK_URL: hooks.url,
        SHOP_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 9).toString('base64')}`,
        SCHEDULER_ENABLED: 'true',
        SHOP_WEBHOOK_TICK_MS: '100',
        RECONCILE_TICK_MS: '200',
      },
    });
  }, 120000);

  afterAll(async () => {
    await ctx?.close();
    await otlp?.close();
    await hooks?.close();
    delete process.env.LOG_FILE;
    delete process.env.LOG_LEVEL;
    delete process.env.OTEL_BSP_SCHEDULE_DELAY;
    rmSync(logDir, { recursive: true, force: true });
  });

  it("continues the caller's trace: request span, gateway call (the gateway sees the traceparent) and access line", async () => {
    const shopOrderId = `traced-${Date.now()}`;
    const res = await ctx.http
      .post('/api/v1/invoices')
      .set(app.auth())
      .set('traceparent', `00-${TRACE_ID}-${PARENT_ID}-01`)
      .set('x-request-id', 'traced-create-1')
      .send({ shopOrderId, amount: '100.00', currency: 643, payway: PAYMENT.card });
    expect(res.status).toBe(201);

    const call = ctx.sandbox.state.requests.find(
      (r) =>
        r.path === 'invoice/create' &&
        (r.body as Record<string, unknown>).shop_order_id === shopOrderId,
    );
    expect(call?.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));

    await eventually(() => {
      const server = otlp.spans.find(
        (s) => s.traceId === TRACE_ID && s.name === 'POST /api/v1/invoices',
      );
      expect(server).toBeDefined();
      expect(server!.parentSpanId).toBe(PARENT_ID);
      const client = otlp.spans.find(
        (s) => s.traceId === TRACE_ID && s.name === 'gateway invoice/create',
      );
      expect(client).toBeDefined();
      expect(client!.parentSpanId).toBe(server!.spanId);
      expect(call!.traceparent).toBe(`00-${TRACE_ID}-${client!.spanId}-01`);
    }, 10000);
    expect(
      [...otlp.contentTypes].some((c) => c.startsWith('POST /v1/traces application/json')),
    ).toBe(true);

    await eventually(async () => {
      const lines = (await logFileText(logFile)).split('\n');
      const line = lines.find(
        (l) => l.includes('"component":"access"') && l.includes('"requestId":"traced-create-1"'),
      );
      expect(line).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({ traceId: TRACE_ID, route: '/api/v1/invoices' });
      const gatewayLine = lines.find(
        (l) =>
          l.includes('"msg":"gateway call"') &&
          l.includes('"path":"invoice/create"') &&
          l.includes(TRACE_ID),
      );
      expect(gatewayLine).toBeDefined();
    }, 5000);
  });

  it('a malformed or all-zero traceparent starts a new trace; it is never passed on', async () => {
    for (const bad of [
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`,
      `00-${TRACE_ID}-${PARENT_ID}-01\u00e9`,
      `zz-${TRACE_ID}-${PARENT_ID}-01`,
      `00-${TRACE_ID}-0000000000000000-01`,
    ]) {
      const shopOrderId = `badtrace-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      const res = await ctx.http
        .post('/api/v1/invoices')
        .set(app.auth())
        .set('traceparent', bad.replace(/[^\x20-\x7e]/g, '?'))
        .send({ shopOrderId, amount: '100.00', currency: 643, payway: PAYMENT.cardSuccess });
      expect(res.status).toBe(201);
      const call = ctx.sandbox.state.requests.find(
        (r) =>
          r.path === 'invoice/create' &&
          (r.body as Record<string, unknown>).shop_order_id === shopOrderId,
      );
      expect(call?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
      expect(call!.traceparent).not.toContain(TRACE_ID);
      expect(call!.traceparent).not.toContain('00000000000000000000000000000000');
    }
  });

  it('webhook deliveries and job rounds have spans; a delivery sends its traceparent', async () => {
    const shopOrderId = `traced-hook-${Date.now()}`;
    await ctx.http
      .post('/api/v1/invoices')
      .set(app.auth())
      .send({ shopOrderId, amount: '100.00', currency: 643, payway: PAYMENT.cardRejected });
    await eventually(() => expect(hooks.received.length).toBeGreaterThan(0), 20000);
    const sent = hooks.received[0].traceparent as string;
    expect(sent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, spanId] = sent.split('-');
    await eventually(() => {
      const span = otlp.spans.find(
        (s) => s.name === 'shop webhook delivery' && s.spanId === spanId,
      );
      expect(span?.traceId).toBe(traceId);
      expect(otlp.spans.some((s) => s.name === 'job shop-webhooks')).toBe(true);
    }, 10000);
  });

  it('a webhook delivery continues the trace of the request whose write recorded its event', async () => {
    const trace = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const shopOrderId = `traced-event-${Date.now()}`;
    // The payer declines on the sandbox's page after the create has answered: with a rejection
    // notified at creation, the notification could land before the create's answer was written
    // (as on a loaded CI machine), and then the request's write is no status change and no event.
    const created = await ctx.http
      .post('/api/v1/invoices')
      .set(app.auth())
      .set('traceparent', `00-${trace}-${PARENT_ID}-01`)
      .send({ shopOrderId, amount: '100.00', currency: 643, payway: PAYMENT.card })
      .expect(201);
    const declined = await fetch(
      `${ctx.sandbox.origin}/sandbox/invoices/${String(created.body.invoiceId)}/decline`,
      { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' },
    );
    expect(declined.ok).toBe(true);
    const db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    try {
      // Every event the request's writes recorded names its span; the gateway's later
      // notification (no request of the shop's) names none.
      const events = await eventually(async () => {
        const r = await db.query<{ public_id: string; trace_parent: string | null; cause: string }>(
          `SELECT public_id, trace_parent, cause FROM events WHERE entity_id = $1 AND type IS NOT NULL ORDER BY id`,
          [shopOrderId],
        );
        expect(r.rows.length).toBeGreaterThan(1);
        return r.rows;
      }, 20000);
      const server = await eventually(() => {
        const s = otlp.spans.find((x) => x.traceId === trace && x.name === 'POST /api/v1/invoices');
        expect(s).toBeDefined();
        return s!;
      }, 10000);
      const first = events[0];
      expect(first.trace_parent).toBe(`00-${trace}-${server.spanId}-01`);
      const byNotification = events.filter((e) => e.cause === 'notification');
      expect(byNotification.length).toBeGreaterThan(0);
      expect(byNotification.map((e) => e.trace_parent)).toEqual(byNotification.map(() => null));
      // Its delivery: a child of that span, and the shop receives the same trace.
      const delivered = await eventually(() => {
        const h = hooks.received.find((x) => x['webhook-id'] === first.public_id);
        expect(h).toBeDefined();
        return h!;
      }, 20000);
      const [, sentTrace, sentSpan] = String(delivered.traceparent).split('-');
      expect(sentTrace).toBe(trace);
      await eventually(() => {
        const span = otlp.spans.find(
          (x) => x.name === 'shop webhook delivery' && x.spanId === sentSpan,
        );
        expect(span?.traceId).toBe(trace);
        expect(span?.parentSpanId).toBe(server.spanId);
      }, 10000);
    } finally {
      await db.end();
    }
  });

  it('off (no OTEL_EXPORTER_OTLP_ENDPOINT), neither the OpenTelemetry SDK nor its exporter is loaded', () => {
    const script = `
      const { loadConfig } = require('./dist/src/config/config.js');
      require('./dist/src/bootstrap.js');
      const { startTracing } = require('./dist/src/tracing/tracing.js');
      startTracing(loadConfig({}, () => 'dev_generated_key_0123456789').otel).then((t) => {
        // prom-client loads @opentelemetry/api itself (for exemplars): the SDK, exporter and our part of it are what tracing adds.
        const loaded = Object.keys(require.cache).filter(
          (k) => (k.includes('@opentelemetry') && !k.includes('/@opentelemetry/api/')) || k.endsWith('/tracing/otel.js'),
        );
        process.stdout.write(JSON.stringify({ off: t === undefined, loaded }));
      });`;
    const out = JSON.parse(
      execFileSync(process.execPath, ['-e', script], {
        cwd: process.cwd(),
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '' },
      }),
    ) as {
      off: boolean;
      loaded: string[];
    };
    expect(out).toEqual({ off: true, loaded: [] });
  }, 60000);
});
