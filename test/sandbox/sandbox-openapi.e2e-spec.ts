import type { Router } from 'express';
import { generateOpenApi } from '../../src/openapi';
import { balanceRouter } from '../../src/sandbox/balance.routes';
import { clockRouter } from '../../src/sandbox/clock.routes';
import { controlRouter } from '../../src/sandbox/control.routes';
import { restateRouter } from '../../src/sandbox/restate.routes';
import type { SandboxRuntime } from '../../src/sandbox/runtime';

/**
 * Every sandbox control route is in the OpenAPI document (sandbox mode) under the `sandbox`
 * tag with an example: the sandbox's own routers are walked (the routes they really serve, not
 * a list kept beside them), and a route missing from the document fails, named.
 */
type Json = Record<string, unknown>;

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}

/** `METHOD /sandbox/…` of every route a router serves, path parameters written `{}`. */
function routesOf(router: Router): string[] {
  return (router.stack as unknown as Layer[]).flatMap((layer) =>
    layer.route === undefined
      ? []
      : Object.keys(layer.route.methods)
          .filter((m) => layer.route!.methods[m])
          .map((m) => `${m.toUpperCase()} /sandbox${layer.route!.path.replace(/:[A-Za-z]+/g, '{}')}`),
  );
}

describe('the sandbox control routes in the OpenAPI document', () => {
  let doc: Json;
  let documented: Map<string, Json>;

  beforeAll(async () => {
    doc = JSON.parse(await generateOpenApi({ sandboxOrigin: 'http://localhost:4010' })) as Json;
    documented = new Map();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      if (!path.startsWith('/sandbox/')) continue;
      for (const [method, op] of Object.entries(item)) {
        if (method === 'servers') continue;
        documented.set(`${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`, op);
      }
    }
  });

  /** What the sandbox serves: its routers built over a runtime they only keep a reference to. */
  function served(): string[] {
    const rt = { state: {}, shops: [] } as unknown as SandboxRuntime;
    return [
      ...routesOf(clockRouter(() => undefined)),
      ...routesOf(controlRouter(rt, () => undefined)),
      ...routesOf(balanceRouter(rt)),
      ...routesOf(restateRouter(rt)),
    ];
  }

  it('walks real routes (the walk finds the clock, the faults, the restatements, the balances)', () => {
    const routes = served();
    expect(routes).toEqual(
      expect.arrayContaining([
        'POST /sandbox/clock/advance',
        'POST /sandbox/faults',
        'POST /sandbox/payouts/{}/restate',
        'POST /sandbox/balances/drift',
        'POST /sandbox/payees/refuse',
      ]),
    );
    expect(routes.length).toBeGreaterThan(20);
  });

  it('every route the sandbox serves is documented under `sandbox`, with an example', () => {
    const missing = served().filter((r) => !documented.has(r));
    expect(missing).toEqual([]);
    for (const route of served()) {
      const op = documented.get(route)!;
      expect({ route, tags: op.tags }).toEqual({ route, tags: ['sandbox'] });
      const text = JSON.stringify(op);
      expect({ route, hasExample: text.includes('"example"') }).toEqual({ route, hasExample: true });
      const body = (op.requestBody as { content?: Record<string, Json> } | undefined)?.content?.['application/json'];
      if (body !== undefined) expect({ route, example: body.example !== undefined }).toEqual({ route, example: true });
    }
  });

  it('the walk fails on a route missing from the document', () => {
    documented.delete('POST /sandbox/balances/drift');
    expect(served().filter((r) => !documented.has(r))).toEqual(['POST /sandbox/balances/drift']);
  });
});
