import type { ValidationPipe } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { AuditService } from '../../audit/audit.service';
import type { KeyRing } from '../../common/key-ring';
import type { AppConfig } from '../../config/config';
import type { GatewayService } from '../../gateway';
import type { PaywayConfigService } from '../../payway-config/payway-config.service';
import type { PayoutControls } from '../payout-controls';
import type { PayoutRowPreview } from '../payout-row-preview';
import type { PayoutDeps } from '../operations/payout-deps';

/** What the batch operations work with (PayoutBatchesService holds them). */
export interface BatchDeps {
  dataSource: DataSource;
  gateway: GatewayService;
  payways: PaywayConfigService;
  /** The payout operations' own dependencies: every row is created by operations/create-payout.ts. */
  payout: PayoutDeps;
  audit: AuditService;
  keys: KeyRing;
  preview: PayoutRowPreview;
  controls: PayoutControls;
  config: AppConfig;
  pipe: ValidationPipe;
  /** The agent shop's id: payouts and batches are written and found under it. */
  shopId: number;
}
