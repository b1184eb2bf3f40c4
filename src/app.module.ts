import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from './audit/audit.module';
import { AuthGuard } from './common/auth.guard';
import { ProblemFilter } from './common/problem.filter';
import { RateLimitModule } from './common/rate-limit';
import type { AppConfig } from './config/config';
import { ConfigModule } from './config/config.module';
import { dataSourceOptions } from './database/data-source';
import { FEATURE_MODULES } from './feature-modules';
import { GatewayModule } from './gateway/gateway.module';
import { HealthModule } from './health/health.module';
import { NotificationAppliersModule } from './notifications/notification-appliers.module';

@Module({})
/** The edge (headers, key gate, bodies, input guard) is in common/http-edge.ts. */
export class AppModule {
  static forRoot(config: AppConfig & { databaseUrl: string }): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        TypeOrmModule.forRoot({ ...dataSourceOptions(config.databaseUrl, config.db), retryAttempts: 0 }),
        ScheduleModule.forRoot(),
        RateLimitModule,
        AuditModule,
        GatewayModule,
        HealthModule,
        NotificationAppliersModule,
        ...FEATURE_MODULES,
      ],
      providers: [
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_FILTER, useClass: ProblemFilter },
      ],
    };
  }
}
