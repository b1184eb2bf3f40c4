/**
 * The benchmark's profile row (bench/profile.mjs) counts the load, not the start-up: a module's
 * own top-level code has its file's URL, so loading the handler's module used to start the count,
 * and the bootstrap that followed was booked as work of the edge (1.5 s of an 11 s profile on
 * one run). A made profile with a start-up and a load holds both functions to the load's samples.
 */
interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: Frame;
  children?: number[];
}
interface Stage {
  name: string;
  ms: number;
  percent: number;
}
interface ProfileModule {
  stagesOf(profile: unknown, fromUrl?: string): { busyMs: number; stages: Stage[] };
  summariseProfile(
    profile: unknown,
    fromUrl?: string,
  ): { totalMs: number; functions: Array<{ name: string; ms: number }> };
}

const HANDLER = 'file:///app/dist/src/invoices/operations/create-invoice.js';
const ADAPTER = 'file:///app/node_modules/@nestjs/platform-fastify/adapters/fastify-adapter.js';
const FASTIFY = 'file:///app/node_modules/fastify/lib/route.js';
const PG = 'file:///app/node_modules/pg/lib/client.js';

/** Nodes by path from the root; samples as [leaf, µs]. */
function profileOf(paths: Array<[string[], number]>): unknown {
  const frames: Record<string, Frame> = {
    root: { functionName: '(root)', url: '', lineNumber: 0, columnNumber: 0 },
    load: {
      functionName: 'Module._load',
      url: 'node:internal/modules/cjs/loader',
      lineNumber: 1,
      columnNumber: 0,
    },
    moduleTop: { functionName: '', url: HANDLER, lineNumber: 0, columnNumber: 0 },
    startService: {
      functionName: 'startService',
      url: 'file:///app/dist/src/bootstrap.js',
      lineNumber: 100,
      columnNumber: 0,
    },
    adapterInit: {
      functionName: '<instance_members_initializer>',
      url: ADAPTER,
      lineNumber: 137,
      columnNumber: 7,
    },
    route: { functionName: 'routeHandler', url: FASTIFY, lineNumber: 464, columnNumber: 0 },
    create: { functionName: 'create', url: HANDLER, lineNumber: 46, columnNumber: 0 },
    query: { functionName: 'query', url: PG, lineNumber: 10, columnNumber: 0 },
  };
  const nodes: ProfileNode[] = [];
  const idOf = new Map<string, number>();
  const samples: number[] = [];
  const timeDeltas: number[] = [0];
  for (const [path, us] of paths) {
    let parent: ProfileNode | undefined;
    let key = '';
    for (const name of ['root', ...path]) {
      key += `/${name}`;
      let id = idOf.get(key);
      if (id === undefined) {
        id = nodes.length + 1;
        idOf.set(key, id);
        nodes.push({ id, callFrame: frames[name], children: [] });
        parent?.children!.push(id);
      }
      parent = nodes[id - 1];
    }
    samples.push(parent!.id);
    timeDeltas.push(us);
  }
  return { nodes, samples, timeDeltas, startTime: 0, endTime: 0 };
}

describe('the benchmark profile row counts the load only', () => {
  let profile: ProfileModule;
  beforeAll(async () => {
    profile = (await import('../../bench/profile.mjs' as string)) as ProfileModule;
  });

  const made = profileOf([
    // Start-up: the handler's module loaded (its top level has the handler's URL), then the
    // bootstrap's adapter, both before any request.
    [['load', 'moduleTop'], 5_000],
    [['startService', 'adapterInit'], 300_000],
    // The load, from its first sample in the handler: the handler, the edge, a statement.
    [['route', 'create'], 30_000],
    [['route'], 20_000],
    [['route', 'create', 'query'], 50_000],
    // A later lazy load and a later bootstrap step are start-up too, wherever they fall.
    [['route', 'load', 'moduleTop'], 7_000],
    [['startService', 'adapterInit'], 9_000],
  ]);

  it('stagesOf: the bootstrap and module loading are no stage of a request', () => {
    const { busyMs, stages } = profile.stagesOf(made, 'invoices/operations/create-invoice.js');
    expect(busyMs).toBe(100);
    const ms = Object.fromEntries(stages.map((s) => [s.name, s.ms]));
    expect(ms).toMatchObject({ edge: 20, handler: 30, statement: 50 });
    expect(stages.reduce((sum, s) => sum + s.percent, 0)).toBeCloseTo(100, 6);
  });

  it('summariseProfile: the same samples, so its top list has no start-up function', () => {
    const { totalMs, functions } = profile.summariseProfile(
      made,
      'invoices/operations/create-invoice.js',
    );
    expect(totalMs).toBe(100);
    expect(functions.map((f) => f.name).join('\n')).not.toContain('instance_members_initializer');
    // Without a handler to start from, every sample but start-up counts.
    expect(profile.summariseProfile(made).totalMs).toBe(100);
  });
});
