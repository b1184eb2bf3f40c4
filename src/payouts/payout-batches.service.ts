import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { By } from '../common/actor';
import { KeyRing } from '../common/key-ring';
import { createValidationPipe } from '../common/validation';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway';
import { PaywayConfigService } from '../payway-config/payway-config.service';
import type { BatchDeps } from './batches/batch-deps';
import { parseBatch, type Submitted } from './batches/batch-rows';
import type { BatchRowView, BatchSummary } from './batches/batch-view';
import { cancelBatch, type CancelAnswer } from './batches/cancel-batch';
import { dryRunBatch, type DryRunAnswer } from './batches/dry-run-batch';
import { batchRows, getBatch, listBatches } from './batches/get-batch';
import { completeBatchIfDone } from './batches/complete-batch';
import { sendBatchRow } from './batches/send-batch-row';
import { submitBatch } from './batches/submit-batch';
import { PayoutControls } from './payout-controls';
import { PAYOUT_DEPS, type PayoutDeps } from './operations/payout-deps';
import { PAYOUT_ROW_PREVIEW, type PayoutRowPreview } from './payout-row-preview';

export { batchRowContext } from './batches/batch-view';
export type { BatchCounts, BatchRowView, BatchSummary, DryRunRow } from './batches/batch-view';

/**
 * Payout batches (`POST /payouts/batches`): many creates in one request. Every row is checked
 * with the create's own DTO before anything is stored; a real batch is stored at once (rows with
 * their recipients sealed, the submitting key with them) and sent in the background by
 * PayoutBatchRunner, each row through the create operation (operations/create-payout.ts) under that key, so every rule of a
 * single create holds for a batch row too. One file per operation in `batches/`: submit, dry
 * run, cancel, get, and the sending of a row.
 */
@Injectable()
export class PayoutBatchesService {
  private readonly pipe = createValidationPipe();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly payways: PaywayConfigService,
    @Inject(PAYOUT_DEPS) private readonly payout: PayoutDeps,
    private readonly audit: AuditService,
    private readonly keys: KeyRing,
    @Inject(PAYOUT_ROW_PREVIEW) private readonly preview: PayoutRowPreview,
    private readonly controls: PayoutControls,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private get deps(): BatchDeps {
    return {
      dataSource: this.dataSource,
      gateway: this.gateway,
      payways: this.payways,
      payout: this.payout,
      audit: this.audit,
      keys: this.keys,
      preview: this.preview,
      controls: this.controls,
      config: this.config,
      pipe: this.pipe,
      shopId: this.gateway.shopId('payout'),
    };
  }

  parse(body: unknown, csv: boolean, queryBatchId: string | undefined): Promise<Submitted> {
    return parseBatch(body, csv, queryBatchId);
  }

  dryRun(
    input: Submitted,
    page: { limit?: number; cursor?: string; bodyBytes: number },
  ): Promise<DryRunAnswer> {
    return dryRunBatch(this.deps, input, page);
  }

  submit(
    input: Submitted,
    by: By,
  ): Promise<{ code: number; replayed: boolean; body: BatchSummary }> {
    return submitBatch(this.deps, input, by);
  }

  cancel(batchId: string, by: By): Promise<CancelAnswer> {
    return cancelBatch(this.deps, batchId, by);
  }

  get(
    batchId: string,
    q: { limit?: number; cursor?: string },
  ): Promise<BatchSummary & { items: BatchRowView[]; nextCursor: string | null }> {
    return getBatch(this.dataSource, this.gateway.shopId('payout'), batchId, q);
  }

  rowsOf(
    batchPk: string,
    q: { limit?: number; cursor?: string },
  ): Promise<{ items: BatchRowView[]; nextCursor: string | null }> {
    return batchRows(this.dataSource, batchPk, q);
  }

  list(limit: number): Promise<BatchSummary[]> {
    return listBatches(this.dataSource, limit);
  }

  sendRow(batchPk: string, rowNo: number): Promise<boolean> {
    return sendBatchRow(this.deps, batchPk, rowNo);
  }

  completeIfDone(batchPk: string): Promise<boolean> {
    return completeBatchIfDone(this.deps, batchPk);
  }
}
