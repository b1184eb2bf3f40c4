import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  event: {
    id: string;
    type: string;
    objectType: string;
    objectId: string;
    sequence: number;
    data: Record<string, unknown>;
    keyId?: string;
  };
  at: number;
}

/** A real HTTP receiver for shop events: records every POST and answers what `respond` says. */
export class WebhookReceiver {
  readonly received: Received[] = [];
  respond: (r: Received) => number | Promise<number> = () => 200;
  private server: Server | null = null;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const h = req.headers as IncomingHttpHeaders & Record<string, string>;
        const r: Received = {
          id: h['webhook-id'],
          timestamp: h['webhook-timestamp'],
          signature: h['webhook-signature'],
          body,
          event: JSON.parse(body) as Received['event'],
          at: Date.now(),
        };
        this.received.push(r);
        void Promise.resolve(this.respond(r)).then((status) => res.writeHead(status).end());
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${port}/hooks`;
    return this;
  }

  headersOf(r: Received): Record<string, string> {
    return {
      'webhook-id': r.id,
      'webhook-timestamp': r.timestamp,
      'webhook-signature': r.signature,
    };
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

export async function eventually<T>(
  check: () => Promise<T> | T,
  timeoutMs = 20000,
  everyMs = 100,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}
