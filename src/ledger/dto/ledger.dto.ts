import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  Allow,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { IsDateTime } from '../../common/validators';
import { ACCOUNTS, ENTRY_KINDS, LEDGER_OBJECT_TYPES } from '../ledger.chart';

const blank = ({ value }: { value: unknown }): unknown => (value === '' ? undefined : value);

export class BalancesQuery {
  @ApiPropertyOptional({
    description: 'ISO 8601 date-time with an offset (or a day YYYY-MM-DD: its UTC midnight); default now',
    example: '2026-01-15T00:00:00Z',
  })
  @IsOptional()
  @Transform(blank)
  @IsDateTime('timeOrDay')
  at?: string;
}

export class EntriesQuery {
  @ApiPropertyOptional({ enum: LEDGER_OBJECT_TYPES })
  @IsOptional()
  @Transform(blank)
  @IsIn(LEDGER_OBJECT_TYPES)
  objectType?: string;

  @ApiPropertyOptional({ description: "The shop's id of the object" })
  @IsOptional()
  @Transform(blank)
  @IsString()
  @MaxLength(255)
  objectId?: string;

  @ApiPropertyOptional({ enum: ACCOUNTS })
  @IsOptional()
  @Transform(blank)
  @IsIn(ACCOUNTS)
  account?: string;

  @ApiPropertyOptional({
    description: 'ISO 8601 date-time with an offset, or a day YYYY-MM-DD (its UTC midnight); inclusive',
  })
  @IsOptional()
  @Transform(blank)
  @IsDateTime('timeOrDay')
  from?: string;

  @ApiPropertyOptional({
    description: 'ISO 8601 date-time with an offset, or a day YYYY-MM-DD (its UTC midnight); exclusive',
  })
  @IsOptional()
  @Transform(blank)
  @IsDateTime('timeOrDay')
  to?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @IsOptional()
  @Transform(blank)
  @IsString()
  cursor?: string;

  @ApiPropertyOptional({ enum: ['json', 'csv'] })
  @IsOptional()
  @IsIn(['json', 'csv'])
  format?: 'json' | 'csv';
}

/** Checked field by field by parseAdjustment (ledger.chart.ts), which names each problem. */
export class AdjustmentDto {
  @ApiProperty({ enum: ACCOUNTS.filter((a) => a !== 'adjustments'), example: 'agent_available' })
  @Allow()
  account: unknown;

  @ApiProperty({ example: 643, description: 'ISO 4217, numeric or alphabetic' })
  @Allow()
  currency: unknown;

  @ApiProperty({ example: '5.00', description: 'Signed decimal string, a debit positive' })
  @Allow()
  amount: unknown;

  @ApiProperty({ example: 'Top-up of the agent shop, bank transfer 2026-01-15' })
  @Allow()
  note: unknown;
}

export class PostingView {
  @ApiProperty({ enum: ACCOUNTS }) account: string;
  @ApiProperty({ example: 643 }) currency: number;
  @ApiProperty({ example: '-100.00' }) amount: string;
}

export class EntryView {
  @ApiProperty({ example: '42' }) id: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:00:00.000Z' }) createdAt: string;
  @ApiProperty({ enum: ENTRY_KINDS, example: 'invoice.succeeded' }) kind: string;
  @ApiPropertyOptional({ enum: LEDGER_OBJECT_TYPES, example: 'invoice' })
  objectType?: string;
  @ApiPropertyOptional({ description: "The shop's id of the object", example: 'order-1001' })
  objectId?: string;
  @ApiPropertyOptional({
    description: 'The shop event of the change that posted it',
    example: 'evt_01900000-0000-7000-8000-000000000000',
  })
  eventId?: string;
  @ApiPropertyOptional({ description: 'The admin key of an adjustment', example: 'admin-1' })
  keyId?: string;
  @ApiPropertyOptional({
    description: "An adjustment's explanation",
    example: 'Top-up by bank transfer',
  })
  note?: string;
  @ApiProperty({ type: [PostingView] }) postings: PostingView[];
}

export class EntryPage {
  @ApiProperty({ type: [EntryView] }) items: EntryView[];
  @ApiProperty({ nullable: true, type: String, example: 'WyJrMSIsIjQyIl0' }) nextCursor:
    string | null;
}

export class BalanceView {
  @ApiProperty({ enum: ACCOUNTS }) account: string;
  @ApiProperty({ example: 643 }) currency: number;
  @ApiProperty({ example: '1500.00' }) balance: string;
}

export class BalancesView {
  @ApiProperty({ format: 'date-time', example: '2026-01-16T00:00:00.000Z' }) at: string;
  @ApiProperty({ type: [BalanceView] }) balances: BalanceView[];
}

export class PositionMismatchView {
  @ApiProperty({ enum: LEDGER_OBJECT_TYPES, example: 'invoice' }) objectType: string;
  @ApiProperty({ description: "The shop's id of the object", example: 'order-1001' })
  objectId: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Its status now; null when the object no longer exists',
    example: 'rejected',
  })
  status: string | null;
  @ApiProperty({ type: [PostingView], description: 'The sum of its entries, per account' })
  posted: PostingView[];
  @ApiProperty({ type: [PostingView], description: 'The position its status implies' })
  position: PostingView[];
}

export class LedgerCheckView {
  @ApiProperty({ format: 'date-time', example: '2026-01-16T00:00:00.000Z' }) checkedAt: string;
  @ApiProperty({ description: 'Invoices, refunds and payouts checked', example: 1200 })
  objects: number;
  @ApiProperty({ type: [PositionMismatchView] }) mismatches: PositionMismatchView[];
}
