import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { rateLimitStoreUp } from '../metrics/metrics';
import { logger } from './logger';

/**
 * Redis must never slow a request down: a connection or a command that takes longer than this
 * is given up, and the limit is taken from memory instead.
 */
export const REDIS_TIMEOUT_MS = 200;
/** How often Redis is asked whether it answers, so a hung server is noticed without a request paying for it. */
const HEARTBEAT_MS = 1000;

/** What `/health/ready` says about the limits (details.rateLimits.limits). */
export type RateLimitMode = 'per-instance (memory)' | 'shared (redis)' | 'per-instance (redis unreachable)';

/** Where REDIS_URL points, without its user name or password: for the logs. */
export function redisTarget(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname.length > 1 ? u.pathname : ''}`;
}

/**
 * The Redis connection behind the rate limits (REDIS_URL), and whether it answers. Unset: no
 * connection, limits in each instance's memory. Redis unreachable: the service keeps serving
 * and each instance limits on its own until Redis answers again (the gauge
 * `rate_limit_store_up` and the readiness details say which). Start-up never waits for Redis
 * longer than a connection attempt.
 */
@Injectable()
export class RateLimitStore implements OnModuleInit, OnModuleDestroy {
  /** Null with the in-memory store. */
  readonly client: Redis | null;
  private up = false;
  /** Whether `up` has been logged once (the first state is logged, later only changes). */
  private told = false;
  private closing = false;
  private heartbeat?: NodeJS.Timeout;
  private readonly log = logger.child({ component: 'rate-limits' });
  private readonly target: string | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const url = config.rateLimitStore.redisUrl;
    this.target = url ? redisTarget(url) : null;
    if (!url) {
      this.client = null;
      rateLimitStoreUp.set(1);
      return;
    }
    rateLimitStoreUp.set(0);
    this.client = new Redis(url, {
      connectTimeout: REDIS_TIMEOUT_MS,
      commandTimeout: REDIS_TIMEOUT_MS,
      // A command while disconnected fails at once (the limit then comes from memory) instead of waiting in a queue.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      // Reconnect quickly and for ever: Redis coming back is used again within about a second.
      retryStrategy: (times: number) => Math.min(times * 100, 1000),
    });
    // Without a listener ioredis prints every failed reconnection; the state change is logged once instead.
    this.client.on('error', (e: Error) => this.markDown(e.message));
    this.client.on('close', () => this.markDown('connection closed'));
    this.client.on('ready', () => void this.check());
  }

  async onModuleInit(): Promise<void> {
    const client = this.client;
    if (!client) return;
    // Give the first connection a moment so the first requests already count in Redis.
    if (client.status !== 'ready') {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          client.off('ready', done);
          resolve();
        };
        const timer = setTimeout(done, REDIS_TIMEOUT_MS * 2);
        client.once('ready', done);
      });
    }
    await this.check();
    this.heartbeat = setInterval(() => void this.check(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  onModuleDestroy(): void {
    this.closing = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.client?.disconnect();
  }

  /** True when limits should be counted in Redis (configured, and it answered last time it was asked). */
  get shared(): boolean {
    return this.client !== null && this.up;
  }

  get mode(): RateLimitMode {
    if (!this.client) return 'per-instance (memory)';
    return this.up ? 'shared (redis)' : 'per-instance (redis unreachable)';
  }

  /** Asks Redis now (at most REDIS_TIMEOUT_MS); returns the mode that follows. */
  async check(): Promise<RateLimitMode> {
    const client = this.client;
    if (client && !this.closing) {
      if (client.status !== 'ready') this.markDown(`connection ${client.status}`);
      else {
        try {
          await client.ping();
          this.markUp();
        } catch (e) {
          this.markDown((e as Error).message);
        }
      }
    }
    return this.mode;
  }

  /** A limit could not be counted in Redis and was taken from memory. */
  commandFailed(): void {
    this.markDown('command failed');
  }

  private markUp(): void {
    if (!this.up || !this.told) this.log.info({ redis: this.target }, 'rate limits shared in Redis');
    this.up = true;
    this.told = true;
    rateLimitStoreUp.set(1);
  }

  private markDown(reason: string): void {
    if (this.closing) return;
    if (this.up || !this.told) {
      this.log.warn({ redis: this.target, reason }, 'Redis unreachable: rate limits per instance until it answers');
    }
    this.up = false;
    this.told = true;
    rateLimitStoreUp.set(0);
  }
}
