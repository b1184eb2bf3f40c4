import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { CreatePayoutDto } from './payout-requests.dto';
import { PayoutView } from './payout.view';

/** `limit` and `cursor` page a dry run's rows (send the same body again with the cursor). */
export class SubmitBatchQuery extends PageQuery {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    example: 'true',
    description: 'true: check every row and answer per row (200); nothing is stored or sent',
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  dryRun?: 'true' | 'false';

  @ApiPropertyOptional({
    example: 'payroll-2026-01',
    description: 'The batch id for a CSV body (a JSON body may carry it instead)',
  })
  @IsOptional()
  @IsString()
  batchId?: string;
}

export class BatchRowsQuery extends PageQuery {}

@ApiSchema({ name: 'PayoutBatchRequest' })
export class PayoutBatchRequestSchema {
  @ApiPropertyOptional({
    example: 'payroll-2026-01',
    description:
      "The shop's id of the batch (1-100 of A-Z a-z 0-9 . _ : -); generated (a UUID) when absent. The same batchId " +
      'with the same rows replays; with other rows it is 409.',
  })
  batchId?: string;

  @ApiProperty({
    type: [CreatePayoutDto],
    maxItems: 10000,
    description: 'Payout create bodies (as POST /payouts), each with its own shopPaymentId; rows are numbered from 1',
  })
  rows: CreatePayoutDto[];
}

export class PayoutBatchCounts {
  @ApiProperty({ example: 1000 }) total: number;
  @ApiProperty({ example: 200, description: 'Not answered by the create path yet' }) pending: number;
  @ApiProperty({ example: 790, description: 'Created (or replayed): the payout is in `payout`' }) sent: number;
  @ApiProperty({ example: 10, description: 'Refused by the create path: the problem is in `problem`' }) refused: number;
  @ApiProperty({ example: 0, description: 'Cancelled with the batch before their send began: never sent' }) cancelled: number;
}

@ApiSchema({ name: 'PayoutBatch' })
export class PayoutBatchSummarySchema {
  @ApiProperty({ example: 'payroll-2026-01' }) batchId: string;
  @ApiProperty({ enum: ['pending', 'processing', 'completed'], example: 'processing' }) status: string;
  @ApiProperty({ type: PayoutBatchCounts }) counts: PayoutBatchCounts;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { processing: 12, succeeded: 778 },
    description: "The sent rows' payouts by their status now",
  })
  payoutStatuses: Record<string, number>;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:00:00.000Z' }) createdAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null }) completedAt: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null }) cancelledAt: string | null;
}

/** A row the cancel reached before it was sent: there is no payout of it, only its id and status. */
@ApiSchema({ name: 'CancelledBatchRowPayout' })
export class CancelledRowPayoutSchema {
  @ApiProperty({ example: 'payout-2003' }) shopPaymentId: string;
  @ApiProperty({ enum: ['cancelled'], example: 'cancelled' }) status: 'cancelled';
}

export class PayoutBatchRowSchema {
  @ApiProperty({ example: 1 }) row: number;
  @ApiProperty({ example: 'payout-2001' }) shopPaymentId: string;
  @ApiProperty({ enum: ['pending', 'sent', 'refused', 'cancelled'], example: 'sent' }) state: string;
  @ApiPropertyOptional({
    anyOf: [{ $ref: getSchemaPath(PayoutView) }, { $ref: getSchemaPath(CancelledRowPayoutSchema) }],
    description:
      'The payout as the create answered it; a row cancelled before it was sent: only its id and `cancelled`',
    example: { shopPaymentId: 'payout-2003', status: 'cancelled' },
  })
  payout?: PayoutView | CancelledRowPayoutSchema;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { type: 'https://errors.example/validation-failed', status: 400, errors: [{ field: 'account', message: 'does not match the pattern of Card' }] },
    description: 'The problem the create answered (RFC 9457)',
  })
  problem?: Record<string, unknown>;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:00:01.000Z' }) updatedAt: string;
}

@ApiSchema({ name: 'PayoutBatchWithRows' })
@ApiExtraModels(PayoutView, CancelledRowPayoutSchema)
export class PayoutBatchWithRowsSchema extends PayoutBatchSummarySchema {
  @ApiProperty({ type: [PayoutBatchRowSchema] }) items: PayoutBatchRowSchema[];
  @ApiProperty({ type: String, nullable: true, example: 'WyJrMSIsIjUwIl0' }) nextCursor: string | null;
}

class FieldErrorSchema {
  @ApiProperty({ example: 'amount' }) field: string;
  @ApiProperty({ example: 'must be greater than 0' }) message: string;
}

class DryRunRowSchema {
  @ApiProperty({ example: 3 }) row: number;
  @ApiProperty({ type: String, nullable: true, example: 'payout-2003' }) shopPaymentId: string | null;
  @ApiProperty({ example: false }) ok: boolean;
  @ApiProperty({ type: [FieldErrorSchema] }) errors: FieldErrorSchema[];
}

class DryRunCounts {
  @ApiProperty({ example: 1000 }) total: number;
  @ApiProperty({ example: 998 }) valid: number;
  @ApiProperty({ example: 2 }) invalid: number;
}

@ApiSchema({ name: 'PayoutBatchDryRun' })
export class PayoutBatchDryRunSchema {
  @ApiProperty({ type: String, nullable: true, example: 'payroll-2026-01' }) batchId: string | null;
  @ApiProperty({ type: DryRunCounts }) counts: DryRunCounts;
  @ApiProperty({ type: [DryRunRowSchema], description: 'A page of the rows (limit, and no larger than half the request)' })
  items: DryRunRowSchema[];
  @ApiProperty({ type: String, nullable: true, example: null, description: 'cursor for the next rows (same body)' })
  nextCursor: string | null;
}

@ApiSchema({ name: 'PayoutBatchCancelled' })
export class PayoutBatchCancelSchema extends PayoutBatchSummarySchema {
  @ApiProperty({ example: 12, description: 'Rows and waiting payouts this request cancelled' }) cancelledNow: number;
}
