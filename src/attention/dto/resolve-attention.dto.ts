import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { Type } from 'class-transformer';

/**
 * `recheck`: ask the gateway now; `accept`: record a final status the gateway's fresh answer
 * does not contradict (409 naming its answer otherwise; allowed with the note when the gateway
 * has no record or cannot be reached); `charge` / `unhold`: the real gateway call on a held
 * invoice; `unlock` (with a note): lift the idempotency lock of an id repeated with other
 * bodies IDEMPOTENCY_CONFLICT_LIMIT times, and resolve its flag.
 */
export class ResolveAttentionDto {
  @ApiProperty({
    enum: ['recheck', 'accept', 'charge', 'unhold', 'unlock'],
    example: 'accept',
    description:
      'charge and unhold: invoices only (a held invoice); unlock: lifts the idempotency lock (idempotency-locked) and resolves its flag',
  })
  @IsIn(['recheck', 'accept', 'charge', 'unhold', 'unlock'])
  action: 'recheck' | 'accept' | 'charge' | 'unhold' | 'unlock';

  @ApiPropertyOptional({
    description:
      'With accept: the final status (invoice succeeded|rejected|unheld, refund SUCCESS|FAILED, payout succeeded|failed|rejected)',
    example: 'succeeded',
  })
  @ValidateIf((o: ResolveAttentionDto) => o.action === 'accept')
  @IsString()
  @IsNotEmpty()
  @MaxLength(32)
  status?: string;

  @ApiPropertyOptional({
    description:
      'With accept (required): what the operator verified; the evidence when the gateway has no record or cannot be reached. With unlock (required): why the lock may go',
    example: 'Paid per back office, ticket 4711',
  })
  @ValidateIf((o: ResolveAttentionDto) => o.action === 'accept' || o.action === 'unlock')
  @IsString()
  @IsNotEmpty()
  @MaxLength(1000)
  note?: string;
}

export class AttentionQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 50, example: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;
}

export class AttentionItem {
  @ApiProperty({ enum: ['invoice', 'refund', 'payout', 'reconciliation'] }) objectType:
    'invoice' | 'refund' | 'payout' | 'reconciliation';
  @ApiProperty({
    description: "The shop's id (shopOrderId, shopRefundId, shopPaymentId)",
    example: 'order-1001',
  })
  id: string;
  @ApiProperty({ example: 'rejected' }) status: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'contradiction: the gateway says succeeded, the invoice is rejected',
  })
  attentionReason: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    example: '2026-01-15T10:00:00.000Z',
  })
  attentionAt: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description:
      'When the gateway is asked about it next (a flag never stops the watch); null: not asked any more (final, or its watch ended: an operator decides)',
    example: '2026-01-15T10:10:00.000Z',
  })
  nextCheckAt: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The object's amount, with its currency's minor-unit digits; null for a reconciliation",
    example: '100.10',
  })
  amount: string | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'ISO 4217 numeric code; null for a reconciliation',
    example: 643,
  })
  currency: number | null;
}

export class AttentionList {
  @ApiProperty({ type: [AttentionItem] }) items: AttentionItem[];
}
