import { clock } from '../common/clock';
import { Controller, Get, Header, Headers, Inject, Res } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../common/openapi';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { sameSecret } from '../common/sha256';
import { Public } from '../common/public.decorator';
import { Unauthorized } from '../common/auth.guard';
import { RateLimitStore } from '../common/rate-limit-store';
import { registry, serviceReady } from '../metrics/metrics';
import { StateGauges } from '../metrics/state-gauges';

/** A scrape re-runs the readiness check when the last one is older than this. */
const READY_TTL_MS = 5000;

@ApiTags('operations')
@Controller()
export class HealthController {
  private readyCheckedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gauges: StateGauges,
    private readonly rateLimitStore: RateLimitStore,
  ) {}

  /** Liveness: the process answers. */
  @Public()
  @Get('health')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiOkResponse({
    schema: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['ok'] },
        clock: {
          type: 'object',
          description: 'Sandbox mode only, once the sandbox clock moved: the moved time and by how much',
          properties: { moved: { type: 'boolean' }, now: { type: 'string', format: 'date-time' }, offsetSeconds: { type: 'number' } },
          required: ['moved', 'now', 'offsetSeconds'],
        },
      },
      required: ['status'],
      example: { status: 'ok' },
    },
  })
  alive(): { status: 'ok'; clock?: { moved: true; now: string; offsetSeconds: number } } {
    // The sandbox clock moved (sandbox mode only): said, so no one reads its times as real ones.
    if (clock.offsetSeconds() > 0)
      return { status: 'ok', clock: { moved: true, now: clock.date().toISOString(), offsetSeconds: clock.offsetSeconds() } };
    return { status: 'ok' };
  }

  /**
   * Readiness: the database answers and every migration is applied. How the rate limits are
   * counted is reported, never a reason to stop serving: with Redis unreachable each instance
   * limits on its own (details.rateLimits.limits says so).
   */
  @Public()
  @Get('health/ready')
  // Documented here, with the problem+json 503 the filter really sends, not by terminus.
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ summary: 'Readiness: the database answers and every migration is applied' })
  @ApiOkResponse({
    schema: {
      type: 'object',
      additionalProperties: true,
      example: {
        status: 'ok',
        info: {
          database: { status: 'up' },
          migrations: { status: 'up' },
          rateLimits: { status: 'up', limits: 'shared (redis)' },
        },
        error: {},
        details: {
          database: { status: 'up' },
          migrations: { status: 'up' },
          rateLimits: { status: 'up', limits: 'shared (redis)' },
        },
      },
    },
  })
  @ApiProblems(503)
  async ready() {
    // service_ready follows every check, the probe's and the scrape's (alerts.yml ServiceNotReady).
    this.readyCheckedAt = Date.now();
    try {
      const result = await this.checkReady();
      serviceReady.set(1);
      return result;
    } catch (err) {
      serviceReady.set(0);
      throw err;
    }
  }

  private checkReady() {
    return this.health.check([
      () => this.db.pingCheck('database', { connection: this.dataSource, timeout: 3000 }),
      async () => {
        const indicator = this.indicators.check('migrations');
        const pending = await this.dataSource.showMigrations();
        return pending ? indicator.down({ pending: true }) : indicator.up();
      },
      async () =>
        this.indicators.check('rateLimits').up({ limits: await this.rateLimitStore.check() }),
    ]);
  }

  /** Prometheus metrics; protected by METRICS_TOKEN when it is set. */
  @Public()
  @Get('metrics')
  @ApiExcludeEndpoint()
  @Header('Cache-Control', 'no-store')
  async metrics(
    @Headers('authorization') auth: string | undefined,
    @Res() res: FastifyReply,
  ): Promise<void> {
    // Constant time: the comparison must not tell a caller how much of the token it guessed.
    if (this.config.metricsToken && !sameSecret(auth ?? '', `Bearer ${this.config.metricsToken}`))
      throw new Unauthorized();
    await Promise.all([
      this.gauges.refresh(),
      Date.now() - this.readyCheckedAt >= READY_TTL_MS
        ? this.ready().catch(() => undefined)
        : undefined,
    ]);
    void res.type(registry.contentType).send(await registry.metrics());
  }
}
