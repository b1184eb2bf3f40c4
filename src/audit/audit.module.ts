import { Global, Inject, Module } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AuditService } from './audit.service';
import { registerSnapshotContext } from './shop-events';

@Global()
@Module({ providers: [AuditService], exports: [AuditService] })
export class AuditModule {
  constructor(@InjectDataSource() dataSource: DataSource, @Inject(APP_CONFIG) config: AppConfig) {
    registerSnapshotContext(dataSource, { publicBaseUrl: config.publicBaseUrl });
  }
}
