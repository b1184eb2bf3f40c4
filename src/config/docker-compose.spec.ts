import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ConfigError, loadConfig } from './config';

/**
 * docker-compose.yml and the Dockerfile are not run on the test machine (no container engine):
 * what can be checked without one is checked here, against the real configuration code.
 */

type Env = Record<string, string | undefined>;
interface Service {
  image?: string;
  user?: string;
  command?: string[] | string;
  ports?: string[];
  build?: unknown;
  environment?: Record<string, string | null>;
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
}

const root = process.cwd();
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

/** Values that satisfy the configuration's checks; the first one a variable accepts is kept. */
const SAMPLES = [
  'sample-secret-value-0123456789abcdef',
  '4242',
  'https://payments.example.com',
  'postgres://app:secret@db:5432/app',
  `k1:${Buffer.alloc(32, 7).toString('base64')}`,
  Buffer.alloc(32, 7).toString('base64'),
  Buffer.alloc(32, 7).toString('hex'),
  'true',
];

/**
 * The variables the service cannot start without against a real gateway, found by asking the
 * configuration itself: start from a production environment with only GATEWAY_BASE_URL, and add a
 * sample for whatever variable each ConfigError names until the configuration loads.
 */
function requiredOutsideSandbox(base: Env): string[] {
  const env: Env = { ...base };
  const tried = new Map<string, number>();
  for (let step = 0; step < 100; step++) {
    try {
      loadConfig(env, () => 'generated-key-never-used-0000');
      return [...tried.keys()];
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      const n = tried.get(e.variable) ?? 0;
      if (n >= SAMPLES.length)
        throw new Error(`no sample value satisfies ${e.variable}: add one to SAMPLES`, {
          cause: e,
        });
      tried.set(e.variable, n + 1);
      env[e.variable] = SAMPLES[n];
    }
  }
  throw new Error('the configuration kept asking for more variables');
}

const interpolation = /\$\{(\w+)(?:(:?[-?+])([^}]*))?\}/g;

describe('docker-compose.yml', () => {
  const { db, redis, app } = compose.services;

  it('has a PostgreSQL with a health check and a named volume, and the app waits for it to be healthy', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['app', 'db', 'redis']);
    expect(db.image).toMatch(/^postgres:\d+/);
    expect(JSON.stringify(db.healthcheck?.test)).toContain('pg_isready');
    const volume = db.volumes?.find((v) => v.endsWith(':/var/lib/postgresql/data'));
    expect(volume).toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(volume!.split(':')[0]);
    expect(app.depends_on?.db).toEqual({ condition: 'service_healthy' });
    expect(JSON.stringify(app.healthcheck?.test)).toContain('/health/ready');
    expect(app.build).toBeDefined();
    expect(app.environment?.NODE_ENV).toBe('production');
  });

  it('has a Redis for the rate limits: password required, never on a command line, a health check, not published; the app does not wait for it to be healthy', () => {
    expect(redis.image).toMatch(/^redis:\d+/);
    expect(redis.user).toBe('redis');
    expect(redis.ports).toBeUndefined();
    expect(redis.environment?.REDIS_PASSWORD).toMatch(/^\$\{REDIS_PASSWORD:\?[^}]+\}$/);
    const command = JSON.stringify(redis.command);
    expect(command).toContain('requirepass');
    expect(command).not.toMatch(/--requirepass/);
    expect(JSON.stringify(redis.healthcheck?.test)).toMatch(/REDISCLI_AUTH=.*redis-cli ping/);
    expect(JSON.stringify(redis.healthcheck?.test)).not.toMatch(/-a /);
    expect(app.environment?.REDIS_URL).toBe('redis://:${REDIS_PASSWORD:?set REDIS_PASSWORD}@redis:6379/0');
    expect(app.depends_on?.redis).toEqual({ condition: 'service_started' });
  });

  it('lists every variable the service requires outside sandbox mode, each without a default', () => {
    const env = app.environment ?? {};
    // The literal settings of the file (no interpolation) are the starting point.
    const literal: Env = Object.fromEntries(
      Object.entries(env).filter(
        (e): e is [string, string] => typeof e[1] === 'string' && !e[1].includes('${'),
      ),
    );
    const required = requiredOutsideSandbox({
      ...literal,
      GATEWAY_BASE_URL: 'https://gateway.example/gateway/v1/',
    });
    expect(required.length).toBeGreaterThan(0);
    expect(required.filter((name) => !(name in env))).toEqual([]);
    // A secret must come from the operator: `${NAME:?…}`, never `${NAME:-default}` or a literal.
    for (const name of [...required, 'GATEWAY_BASE_URL']) {
      const value = String(env[name] ?? '');
      const refs = [...value.matchAll(interpolation)];
      expect([name, refs.length > 0]).toEqual([name, true]);
      for (const [, , op] of refs) expect([name, op]).toEqual([name, ':?']);
    }
    // No variable of the file has a default value that could stand in for a secret.
    const defaults = Object.entries(env).filter(([, v]) =>
      [...String(v ?? '').matchAll(interpolation)].some(([, , op]) => op === ':-' || op === '-'),
    );
    expect(defaults).toEqual([]);
  });

  it('with every variable set, configures a production service against the real gateway', () => {
    const shell: Env = {
      POSTGRES_PASSWORD: 'pg-secret',
      REDIS_PASSWORD: 'redisSecret0123',
      GATEWAY_BASE_URL: 'https://gateway.example/gateway/v1/',
    };
    const resolved: Env = {};
    for (const [name, value] of Object.entries(app.environment ?? {})) {
      if (value === null) continue;
      resolved[name] = value.replace(
        interpolation,
        (_m, ref: string) => shell[ref] ?? `${ref.toLowerCase()}`,
      );
    }
    const config = loadConfig(fill(resolved), () => 'never');
    expect(config.sandboxMode).toBe(false);
    expect(config.generatedKeys).toBe(false);
    expect(config.databaseUrl).toBe('postgres://app:pg-secret@db:5432/app');
    expect(config.rateLimitStore).toEqual({ redisUrl: 'redis://:redisSecret0123@redis:6379/0', prefix: 'rl' });
  });
});

/** Gives each variable the file lists a value the configuration accepts; adds none of its own. */
function fill(env: Env): Env {
  const out: Env = { ...env };
  for (let step = 0; step < 100; step++) {
    try {
      loadConfig(out, () => 'never');
      return out;
    } catch (e) {
      if (!(e instanceof ConfigError) || !(e.variable in env)) throw e;
      const at = SAMPLES.indexOf(out[e.variable] ?? '');
      if (at + 1 >= SAMPLES.length) throw e;
      out[e.variable] = SAMPLES[at + 1];
    }
  }
  return out;
}

describe('Dockerfile', () => {
  it('builds in stages and runs production dependencies as a non-root user with a readiness health check', () => {
    expect(dockerfile.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/--omit=dev/);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK [\s\S]*\/health\/ready/m);
    expect(dockerfile).toMatch(/^ENV NODE_ENV=production/m);
    // The flags are the start script's (src/node-flags.spec.ts).
    expect(dockerfile).toMatch(/^CMD \["node", ("--[\w-]+(=[\w.-]+)?", )*"dist\/src\/main\.js"\]$/m);
  });
});
