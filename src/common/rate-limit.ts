import { Global, Inject, Injectable, Module } from '@nestjs/common';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { rateLimited } from '../metrics/metrics';
import { DomainError } from './errors';
import { RateLimitStore } from './rate-limit-store';

export class RateLimited extends DomainError {
  constructor(readonly retryAfterS: number) {
    super('rate-limited', 429, 'Too Many Requests', `Too many requests: retry after ${retryAfterS} s`);
  }
}

/** The limits, as counted in `rate_limited_total{limit}` and named in the store's keys. */
export type Limit = 'key' | 'pay' | 'webhook' | 'console' | 'unauthenticated';

/** Every limit counts in windows of this many seconds. */
export const WINDOW_S = 2;

/**
 * The library's fixed-window settings for a rate of `rps` a second: two seconds' worth per
 * two-second window. The same average rate and the same burst (two seconds' worth at once) as
 * the token bucket it replaces (capacity 2 × rps, refilled at rps); unlike a bucket, a window
 * empties at once when it ends, so across a window's end a caller can pass up to twice the
 * burst in a short span, and a refused caller waits for the window's end (Retry-After ≤ 2 s).
 */
export function windowOf(rps: number): { points: number; duration: number } {
  return { points: rps * WINDOW_S, duration: WINDOW_S };
}

/** Retry-After for a refusal: the rest of the window in whole seconds, at least 1. */
export function retryAfterS(msBeforeNext: number): number {
  return Math.max(1, Math.ceil(msBeforeNext / 1000));
}

/** The in-memory limiter that stands in while Redis fails; tells the store each time it is used. */
class InsuranceLimiter extends RateLimiterMemory {
  constructor(
    opts: ConstructorParameters<typeof RateLimiterMemory>[0],
    private readonly onUse: () => void,
  ) {
    super(opts);
  }

  override consume(...args: Parameters<RateLimiterMemory['consume']>): Promise<RateLimiterRes> {
    this.onUse();
    return super.consume(...args);
  }
}

interface Counters {
  /** Counts in Redis (REDIS_URL set); falls back to `local` on any Redis error. */
  shared: RateLimiterRedis | null;
  /** Counts in this instance's memory: the store without REDIS_URL, the insurance with it. */
  local: RateLimiterMemory;
}

/**
 * The rate limits, on rate-limiter-flexible: counted in Redis when REDIS_URL is set, so N
 * instances allow a key its limit once, not N times; in each instance's memory otherwise, or
 * while Redis is unreachable. Keys: `<RATE_LIMIT_REDIS_PREFIX>:<limit>:<key id or address>`.
 */
@Injectable()
export class RateLimiter {
  private readonly counters: Record<Limit, Counters | null>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly store: RateLimitStore,
  ) {
    const { perKeyRps, publicPerIpRps, unauthenticatedPerIpRps } = config.rateLimits;
    const prefix = config.rateLimitStore.prefix;
    this.counters = {
      key: this.countersFor(`${prefix}:key`, perKeyRps),
      pay: this.countersFor(`${prefix}:pay`, publicPerIpRps),
      webhook: this.countersFor(`${prefix}:webhook`, publicPerIpRps),
      // The console has no bearer key: its pages and its sign-in are keyless, budgeted as /pay.
      console: this.countersFor(`${prefix}:console`, publicPerIpRps),
      unauthenticated: this.countersFor(`${prefix}:unauthenticated`, unauthenticatedPerIpRps),
    };
  }

  /** Per API key (its keyId). */
  takeForKey(keyId: string): Promise<void> {
    return this.take('key', keyId);
  }

  /** Per source address on the public routes. */
  takeForAddress(address: string | undefined, route: 'pay' | 'webhook' | 'console'): Promise<void> {
    return this.take(route, address ?? '');
  }

  /**
   * Per source address, for requests to guarded routes that carry no valid key (missing or wrong):
   * a caller guessing keys or flooding without one is refused before its body is read.
   */
  takeUnauthenticated(address: string | undefined): Promise<void> {
    return this.take('unauthenticated', address ?? '');
  }

  private countersFor(keyPrefix: string, rps: number): Counters | null {
    if (rps <= 0) return null;
    const window = windowOf(rps);
    const client = this.store.client;
    if (!client) return { shared: null, local: new RateLimiterMemory({ keyPrefix, ...window }) };
    const local = new InsuranceLimiter({ keyPrefix, ...window }, () => this.store.commandFailed());
    const shared = new RateLimiterRedis({
      storeClient: client,
      keyPrefix,
      ...window,
      insuranceLimiter: local,
      // Not connected: straight to memory, no wait.
      rejectIfRedisNotReady: true,
      // Once Redis says a key is over its limit, refuse it here until the window ends: a flood costs Redis nothing.
      inMemoryBlockOnConsumed: window.points + 1,
    });
    return { shared, local };
  }

  private async take(limit: Limit, id: string): Promise<void> {
    const counters = this.counters[limit];
    if (!counters) return;
    const limiter = counters.shared && this.store.shared ? counters.shared : counters.local;
    try {
      await limiter.consume(id);
    } catch (e) {
      // With an insurance limiter a Redis error never lands here; anything but a refusal is a bug.
      if (!(e instanceof RateLimiterRes)) throw e;
      rateLimited.inc({ limit });
      throw new RateLimited(retryAfterS(e.msBeforeNext));
    }
  }
}

@Global()
@Module({ providers: [RateLimitStore, RateLimiter], exports: [RateLimitStore, RateLimiter] })
export class RateLimitModule {}
