import { Global, Inject, Injectable, Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { rateLimited } from '../metrics/metrics';
import { DomainError } from './errors';

export class RateLimited extends DomainError {
  constructor(readonly retryAfterS: number) {
    super('rate-limited', 429, 'Too Many Requests', `Too many requests: retry after ${retryAfterS} s`);
  }
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Past this many buckets, full ones (idle callers) are dropped so the map cannot grow without bound. */
const MAX_BUCKETS = 50_000;

/**
 * Token buckets in memory, one per key or address: `rps` tokens a second, bursts up to two
 * seconds' worth. Per instance: N instances allow N times the rate, which is fine for a flood
 * guard (the limits are about keeping one caller from starving the others).
 */
@Injectable()
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Per API key (its keyId). */
  takeForKey(keyId: string): void {
    this.take(`k:${keyId}`, this.config.rateLimits.perKeyRps, 'key');
  }

  /** Per source address on the public routes. */
  takeForAddress(address: string | undefined, route: 'pay' | 'webhook'): void {
    this.take(`a:${route}:${address ?? ''}`, this.config.rateLimits.publicPerIpRps, route);
  }

  /**
   * Per source address, for requests to guarded routes that carry no valid key (missing or wrong):
   * a caller guessing keys or flooding without one is refused before its body is read.
   */
  takeUnauthenticated(address: string | undefined): void {
    this.take(`u:${address ?? ''}`, this.config.rateLimits.unauthenticatedPerIpRps, 'unauthenticated');
  }

  private take(id: string, rps: number, limit: string): void {
    if (rps <= 0) return;
    const now = Date.now();
    const capacity = rps * 2;
    const b = this.buckets.get(id) ?? { tokens: capacity, at: now };
    b.tokens = Math.min(capacity, b.tokens + ((now - b.at) / 1000) * rps);
    b.at = now;
    if (b.tokens < 1) {
      this.buckets.set(id, b);
      rateLimited.inc({ limit });
      throw new RateLimited(Math.max(1, Math.ceil((1 - b.tokens) / rps)));
    }
    b.tokens -= 1;
    this.buckets.set(id, b);
    if (this.buckets.size > MAX_BUCKETS) this.prune(now, rps);
  }

  private prune(now: number, rps: number): void {
    for (const [id, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * rps >= rps * 2) this.buckets.delete(id);
    }
  }
}

@Global()
@Module({ providers: [RateLimiter], exports: [RateLimiter] })
export class RateLimitModule {}
