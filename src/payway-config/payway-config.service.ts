import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { closestAliases } from '../common/closest';
import { ValidationFailed } from '../common/errors';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig, type GatewayCall } from '../config/config';
import { GatewayService } from '../gateway/gateway.service';
import type { InputPayway, OutputPayway, PaywayGroup } from '../gateway/gateway.types';
import { PaywayConfigEntity, type PaywayDirection } from './payway-config.entity';
import { unknownPaywayMessage } from './payway-validation';
import { isActive } from './payway-validation';
import { scheduleJob } from '../jobs/schedule';

type Groups = PaywayGroup<InputPayway>[] | PaywayGroup<OutputPayway>[];

const CONFIG_CALL = {
  payment: 'shop_input_config/shop',
  payout: 'shop_output_config/shop',
} as const satisfies Record<PaywayDirection, GatewayCall>;

export interface PaywayList {
  direction: PaywayDirection;
  fetchedAt: string;
  groups: Groups;
}

interface Cached {
  groups: Groups;
  fetchedAt: Date;
}

/**
 * The gateway's payway configuration (shop_input_config/shop of the payment shop,
 * shop_output_config/shop of the agent shop): fetched, stored in payway_configs (one row per shop
 * and direction, so a restart has it without a gateway call and a changed shop setting never
 * reads another shop's list), kept in memory, refreshed on a schedule and on demand. Every invoice and payout is checked
 * against it before the gateway is called.
 */
@Injectable()
export class PaywayConfigService implements OnApplicationBootstrap {
  private readonly log = logger.child({ component: 'payway-config' });
  /** Keyed by `shopId:direction`. */
  private readonly cache = new Map<string, Cached>();
  /** One fetch per shop and direction at a time; concurrent callers share it. */
  private readonly inflight = new Map<string, Promise<Cached>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled) return;
    scheduleJob(
      this.scheduler,
      'payway-config-refresh',
      this.config.paywayRefreshS * 1000,
      () => this.refreshAll(),
      this.log,
      {
        runAtStart: true,
      },
    );
  }

  /** Refetches both directions; failures are logged, the last good configuration stays. */
  async refreshAll(): Promise<void> {
    for (const direction of ['payment', 'payout'] as const) {
      try {
        await this.refresh(direction);
      } catch (err) {
        this.log.warn(
          { direction, err: (err as Error).message },
          'payway configuration refresh failed',
        );
      }
    }
  }

  /** The groups of one direction; `refresh` refetches from the gateway first. */
  async list(direction: PaywayDirection, refresh = false): Promise<PaywayList> {
    const cached = refresh ? await this.refresh(direction) : await this.current(direction);
    return { direction, fetchedAt: cached.fetchedAt.toISOString(), groups: cached.groups };
  }

  /**
   * The active payway listed under exactly that alias (scenario suffix and all: the gateway lists
   * `card_core_payin_rub[mock_server,success]` as a payway of its own); ValidationFailed on
   * `payway` when it is unknown or inactive.
   */
  async getPayway(direction: 'payment', payway: string): Promise<InputPayway>;
  async getPayway(direction: 'payout', payway: string): Promise<OutputPayway>;
  async getPayway(direction: PaywayDirection, payway: string): Promise<InputPayway | OutputPayway>;
  async getPayway(direction: PaywayDirection, payway: string): Promise<InputPayway | OutputPayway> {
    const found = await this.findPayway(direction, payway);
    if (found === undefined) {
      const near = await this.closestAliases(direction, payway);
      throw new ValidationFailed([
        { field: 'payway', message: unknownPaywayMessage(payway, direction, near) },
      ]);
    }
    // Payout ways carry no is_active; only an explicit false retires one.
    if ('is_active' in found && !isActive(found as { is_active?: unknown })) {
      throw new ValidationFailed([{ field: 'payway', message: `${payway} is not active` }]);
    }
    return found;
  }

  /** The payway listed under exactly that alias, active or not; undefined when none is. */
  async findPayway(
    direction: PaywayDirection,
    payway: string,
  ): Promise<InputPayway | OutputPayway | undefined> {
    const { groups } = await this.current(direction);
    for (const group of groups) {
      for (const p of group.payways ?? []) if (p.alias === payway) return p;
    }
    return undefined;
  }

  /** Up to five listed aliases closest to one that is not listed (common/closest.ts). */
  async closestAliases(direction: PaywayDirection, payway: string): Promise<string[]> {
    const { groups } = await this.current(direction);
    const aliases = (groups as PaywayGroup<InputPayway | OutputPayway>[]).flatMap((g) =>
      (g.payways ?? []).map((p) => p.alias),
    );
    return closestAliases(payway, aliases);
  }

  /** The shop whose list a direction is: the shop of its configuration call. */
  private shopOf(direction: PaywayDirection): number {
    return this.gateway.shops.forCall(CONFIG_CALL[direction]).shopId;
  }

  /** Memory, then the stored row, then the gateway. */
  private async current(direction: PaywayDirection): Promise<Cached> {
    const shopId = this.shopOf(direction);
    const key = `${shopId}:${direction}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const row = await this.dataSource
      .getRepository(PaywayConfigEntity)
      .findOneBy({ shopId, direction });
    if (row) {
      const loaded = { groups: row.data as Groups, fetchedAt: row.fetchedAt };
      this.cache.set(key, loaded);
      return loaded;
    }
    return this.refresh(direction);
  }

  private refresh(direction: PaywayDirection): Promise<Cached> {
    const key = `${this.shopOf(direction)}:${direction}`;
    const running = this.inflight.get(key);
    if (running) return running;
    const fetch = this.fetchAndStore(direction).finally(() => this.inflight.delete(key));
    this.inflight.set(key, fetch);
    return fetch;
  }

  private async fetchAndStore(direction: PaywayDirection): Promise<Cached> {
    const shopId = this.shopOf(direction);
    const groups: Groups =
      direction === 'payment'
        ? await this.gateway.shopInputConfig()
        : await this.gateway.shopOutputConfig();
    const fetchedAt = new Date();
    await this.dataSource
      .createQueryBuilder()
      .insert()
      .into(PaywayConfigEntity)
      .values({ shopId, direction, data: groups, fetchedAt })
      .orUpdate(['data', 'fetched_at'], ['shop_id', 'direction'])
      .execute();
    const cached = { groups, fetchedAt };
    this.cache.set(`${shopId}:${direction}`, cached);
    this.log.info({ shopId, direction, groups: groups.length }, 'payway configuration fetched');
    return cached;
  }
}
