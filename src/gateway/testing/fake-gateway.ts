import {
  createServer,
  IncomingHttpHeaders,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import { AddressInfo } from 'node:net';
import { AppConfig, loadConfig } from '../../config/config';

/** A request as the fake gateway received it. */
export interface RecordedRequest {
  /** Path below the base URL, for example `invoice/create`. */
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: Record<string, unknown>;
}

/** Answers one request; may also misbehave (never answer, destroy the socket). */
export type Responder = (req: RecordedRequest, res: ServerResponse, raw: IncomingMessage) => void;

export const BASE_PATH = '/gateway/v1/';

/** Envelope text for a successful call; `data` is raw JSON text so numbers keep their digits. */
export function okEnvelope(dataJson = '{}'): string {
  return `{"result":true,"message":"Ok","error_code":0,"data":${dataJson}}`;
}

export function answer(
  res: ServerResponse,
  status: number,
  text: string,
  type = 'application/json',
): void {
  res.writeHead(status, { 'Content-Type': type });
  res.end(text);
}

/**
 * A tiny local HTTP server on port 0 standing in for the gateway in unit tests: records every
 * request and answers with `respond` (an empty success envelope unless replaced).
 */
export class FakeGateway {
  readonly requests: RecordedRequest[] = [];
  respond: Responder = (_req, res) => answer(res, 200, okEnvelope());

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<FakeGateway> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const fake = new FakeGateway(server, `http://127.0.0.1:${port}${BASE_PATH}`);
    server.on('request', (raw: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      raw.on('data', (c: Buffer) => chunks.push(c));
      raw.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        const recorded: RecordedRequest = {
          path: (raw.url ?? '').slice(BASE_PATH.length),
          headers: raw.headers,
          rawBody,
          body: JSON.parse(rawBody) as Record<string, unknown>,
        };
        fake.requests.push(recorded);
        fake.respond(recorded, res, raw);
      });
    });
    return fake;
  }

  /** The last request received; fails the test when there is none. */
  last(): RecordedRequest {
    const r = this.requests.at(-1);
    if (r === undefined) throw new Error('the fake gateway received no request');
    return r;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export const TEST_SHOP_ID = 2001;
export const TEST_SECRET = 'test-secret-key';

/** Configuration pointing the gateway client at `baseUrl`; `env` overrides any variable. */
export function gatewayTestConfig(baseUrl: string, env: Record<string, string> = {}): AppConfig {
  return loadConfig({
    GATEWAY_BASE_URL: baseUrl,
    GATEWAY_SHOP_ID: String(TEST_SHOP_ID),
    GATEWAY_SECRET_KEY: TEST_SECRET,
    API_KEYS: 'test-api-key-0123456789',
    ADMIN_API_KEYS: 'test-admin-key-0123456789',
    ALLOW_INSECURE_HTTP: 'true',
    DATA_ENCRYPTION_KEYS: `test1:${Buffer.alloc(32, 7).toString('base64')}`,
    ...env,
  });
}
