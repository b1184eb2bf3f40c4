import { registeredRoutes as routesOf } from '../../src/common/http-edge';
import request from 'supertest';
import { startService, RunningService } from '../../src/bootstrap';
import { loadConfig } from '../../src/config/config';
import { createTestDatabase } from '../support/database';
import { DATA_KEYS } from '../support/app';
import { freePort } from '../support/ports';

const SHOP = 'foundation-shop-key-0123';
const ADMIN = 'foundation-admin-key-0123';


/** Every route registered on the server, as [METHOD, path]. */
function registeredRoutes(service: RunningService): Array<[string, string]> {
  return [...routesOf(service.app.getHttpAdapter().getInstance())];
}

/** Fills path parameters with a plausible value. */
const concrete = (path: string): string =>
  path.replace(/:(\w+)/g, 'x1').replace(/\{\*\w+\}|\*\w+/g, 'x');

const PUBLIC = [
  /^\/health(\/ready)?$/,
  /^\/metrics$/,
  /^\/webhooks\/gateway$/,
  /^\/pay\/:shopOrderId$/,
  // A payment link's payer page: no key, the /pay budget (test/payment-links).
  /^\/pay\/l\/:id$/,
  /^\/docs/,
  /^\/admin(\/|$)/,
];
/** The operators' console: open to the bearer guard, behind its own session (test/console). */
const CONSOLE = /^\/admin(\/|$)/;
const CONSOLE_OPEN = new Set(['GET /admin/login', 'GET /admin/ui/console.css']);

describe('service foundation', () => {
  let service: RunningService;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    const port = await freePort();
    service = await startService(
      loadConfig({
        PORT: String(port),
        DATABASE_URL: db.url,
        // No gateway call is made in this suite: a closed port stands in for the gateway.
        GATEWAY_BASE_URL: 'http://127.0.0.1:9/gateway/v1/',
        GATEWAY_SHOP_ID: '1',
        GATEWAY_SECRET_KEY: 'foundation-secret',
        API_KEYS: SHOP,
        ADMIN_API_KEYS: ADMIN,
        SCHEDULER_ENABLED: 'false',
        ALLOW_INSECURE_HTTP: 'true',
        DATA_ENCRYPTION_KEYS: DATA_KEYS,
        DOCS_ENABLED: 'true',
        // The route walk below sends hundreds of keyless requests from one address: this suite
        // is about roles, not the keyless budgets (test/hostile-callers holds the API's and
        // test/hostile-callers-3 the console's, which takes the /pay budget).
        RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS: '0',
        RATE_LIMIT_PUBLIC_PER_IP_RPS: '0',
      }),
      { host: '127.0.0.1' },
    );
  });

  afterAll(async () => {
    await service?.close();
    await drop?.();
  });

  it('is alive and ready once the migrations have run', async () => {
    await request(service.url).get('/health').expect(200, { status: 'ok' });
    const ready = await request(service.url).get('/health/ready').expect(200);
    expect(ready.body.info).toMatchObject({
      database: { status: 'up' },
      migrations: { status: 'up' },
    });
  });

  it('serves the OpenAPI description and UI', async () => {
    const json = await request(service.url).get('/docs-json').expect(200);
    expect(json.body.openapi).toMatch(/^3\./);
    await request(service.url).get('/docs').expect(200).expect('Content-Type', /html/);
  });

  it('serves Prometheus metrics with HTTP and gateway histograms', async () => {
    const res = await request(service.url).get('/metrics').expect(200);
    expect(res.text).toContain('http_request_duration_seconds');
    expect(res.text).toContain('gateway_call_duration_seconds');
  });

  it('answers unknown routes with problem+json', async () => {
    const res = await request(service.url)
      .get('/api/v1/nothing-here')
      .set('Authorization', `Bearer ${SHOP}`)
      .expect(404);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({
      status: 404,
      title: expect.any(String),
      type: expect.any(String),
    });
  });

  it('answers malformed JSON with a 400 problem', async () => {
    const routes = registeredRoutes(service).filter(
      ([m, p]) => m === 'POST' && p.startsWith('/api/v1/'),
    );
    if (routes.length === 0) return; // no POST route registered yet: nothing to send a body to
    const res = await request(service.url)
      .post(concrete(routes[0][1]))
      .set('Authorization', `Bearer ${SHOP}`)
      .set('Content-Type', 'application/json')
      .send('{"broken":')
      .expect(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  });

  it('requires a key on every non-public route, and the admin role under /admin', async () => {
    const routes = registeredRoutes(service);
    expect(routes.length).toBeGreaterThan(0);
    const guarded = routes.filter(([, p]) => !PUBLIC.some((re) => re.test(p)));
    for (const [method, path] of guarded) {
      const url = concrete(path);
      const call = (): request.Test => request(service.url)[method.toLowerCase() as 'get'](url);
      const none = await call();
      expect([method, path, none.status]).toEqual([method, path, 401]);
      expect(none.headers['content-type']).toMatch(/application\/problem\+json/);
      const wrong = await call().set('Authorization', 'Bearer not-a-key-at-all-000000');
      expect([method, path, wrong.status]).toEqual([method, path, 401]);
      if (path.startsWith('/api/v1/admin')) {
        const shop = await call().set('Authorization', `Bearer ${SHOP}`);
        expect([method, path, shop.status]).toEqual([method, path, 403]);
      }
    }
    expect(guarded.length).toBeGreaterThan(10);
    // Public routes may still refuse (a webhook from a wrong address, a pay link with a wrong
    // token), but never with the guard's own "key required" answers.
    for (const [method, path] of routes.filter(([, p]) => PUBLIC.some((re) => re.test(p)))) {
      const res = await request(service.url)[method.toLowerCase() as 'get'](concrete(path));
      const type = String((res.body as { type?: unknown }).type ?? '');
      expect([method, path, /\/(unauthorized|forbidden)$/.test(type)]).toEqual([
        method,
        path,
        false,
      ]);
      // Every console page without a session sends the visitor to sign in; every console form
      // without one is refused; only the sign-in page and the stylesheet are open.
      if (CONSOLE.test(path) && !CONSOLE_OPEN.has(`${method} ${path}`)) {
        const refused =
          method === 'GET'
            ? res.status === 303 && res.headers.location === '/admin/login'
            : res.status === 401 || res.status === 403;
        expect([method, path, refused]).toEqual([method, path, true]);
      }
    }
  });
});
