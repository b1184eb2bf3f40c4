import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { LEDGER_OBJECT_TYPES } from '../../ledger/ledger.chart';
import { ITEM_KINDS } from '../reconciliation.rules';

export class RunReconciliationDto {
  @ApiPropertyOptional({
    description: 'YYYY-MM-DD in REPORT_TIMEZONE; default the last finished day',
    example: '2026-01-15',
  })
  @IsOptional()
  @IsString()
  date?: string;
}

export class ReconciliationListQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50, example: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;
}

export class ReconciliationQuery {
  @ApiPropertyOptional({ enum: ['json', 'csv'], example: 'csv' })
  @IsOptional()
  @IsIn(['json', 'csv'])
  format?: 'json' | 'csv';
}

export class OursBalanceSchema {
  @ApiProperty({ description: 'agent_available', example: '998960.00' }) available: string;
  @ApiProperty({ description: 'agent_frozen', example: '177.00' }) frozen: string;
}

export class GatewayBalanceSchema {
  @ApiProperty({ example: '998965.00' }) available: string;
  @ApiProperty({ example: '0.00' }) hold: string;
  @ApiProperty({ example: '177.00' }) frozen: string;
}

export class BalanceDifferencesSchema {
  @ApiProperty({ description: 'gateway available − agent_available', example: '5.00' })
  available: string;
  @ApiProperty({ description: '(gateway frozen + hold) − agent_frozen', example: '0.00' })
  frozen: string;
}

export class BalanceComparisonSchema {
  @ApiProperty({ example: 643 }) currency: number;
  @ApiProperty({ type: OursBalanceSchema }) ours: OursBalanceSchema;
  @ApiProperty({ type: GatewayBalanceSchema }) gateway: GatewayBalanceSchema;
  @ApiProperty({
    type: BalanceDifferencesSchema,
    description: 'Gateway − books per side, apart (never netted)',
  })
  differences: BalanceDifferencesSchema;
}

export class ReconciliationItemSchema {
  @ApiProperty({ enum: ITEM_KINDS, example: 'balance' }) kind: string;
  @ApiPropertyOptional({ enum: LEDGER_OBJECT_TYPES, example: 'payout' })
  objectType?: string;
  @ApiPropertyOptional({ description: "The shop's id of the object", example: 'payout-1001' })
  objectId?: string;
  @ApiPropertyOptional({ enum: ['agent_available', 'agent_frozen'], example: 'agent_available' })
  account?: string;
  @ApiProperty({ type: Number, nullable: true, example: 643 }) currency: number | null;
  @ApiProperty({ type: String, nullable: true, example: '998960.00' }) ours: string | null;
  @ApiProperty({ type: String, nullable: true, example: '998965.00' }) gateway: string | null;
  @ApiPropertyOptional({ description: 'gateway − ours', example: '5.00' }) amount?: string;
  @ApiPropertyOptional({
    description: 'A position item: the status and the position it implies (ours: what was posted)',
    example: 'rejected: nothing',
  })
  position?: string;
}

export class ReconciliationSchema {
  @ApiProperty({ format: 'uuid', example: '0b6f1c9e-3a57-4a39-9a53-5f7d3b1f9c11' }) id: string;
  @ApiProperty({ example: '2026-01-15' }) date: string;
  @ApiProperty({ enum: ['balanced', 'variances'], example: 'variances' }) status: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-16T01:00:00.000Z' }) startedAt: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-16T01:00:02.000Z' }) finishedAt: string;
  @ApiProperty({ type: [BalanceComparisonSchema] }) balances: BalanceComparisonSchema[];
  @ApiProperty({ type: [ReconciliationItemSchema] }) items: ReconciliationItemSchema[];
}

export class ReconciliationList {
  @ApiProperty({ type: [ReconciliationSchema] }) items: ReconciliationSchema[];
}
