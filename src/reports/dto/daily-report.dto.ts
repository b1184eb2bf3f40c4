import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsOptional, registerDecorator } from 'class-validator';
import { sameShape } from '../../common/openapi';
import {
  type AttentionItem,
  type CurrencyBooks,
  type DailyReport,
  type FeeTally,
  type OpenItem,
  reportDayProblem,
  type Tally,
} from '../daily-report';

/** A calendar day `YYYY-MM-DD` (daily-report.ts decides). */
function IsReportDay(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isReportDay',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: 'must be a calendar day in the form YYYY-MM-DD, from 2000-01-01 on' },
      validator: { validate: (value: unknown) => reportDayProblem(value) === null },
    });
  };
}

export class DailyReportQuery {
  @ApiProperty({
    description:
      'The calendar day in REPORT_TIMEZONE (UTC by default). Today gives the day so far (complete: false); a later day is a 400',
    example: '2026-01-15',
  })
  @IsReportDay()
  date: string;

  @ApiPropertyOptional({
    enum: ['json', 'csv'],
    description: 'Overrides the Accept header (text/csv or application/json)',
    example: 'csv',
  })
  @IsOptional()
  @IsIn(['json', 'csv'])
  format?: 'json' | 'csv';
}

@ApiSchema({ name: 'ReportTally' })
export class TallySchema {
  @ApiProperty({ example: 3 }) count: number;
  @ApiProperty({ description: 'Exact decimal sum', example: '1500.00' }) amount: string;
}
sameShape<Tally, TallySchema>(true);

@ApiSchema({ name: 'ReportPayoutTally' })
export class PayoutTallySchema extends TallySchema {
  @ApiProperty({
    description: 'Succeeded payouts whose write-off is not known: counted, not in amount',
    example: 0,
  })
  withoutAmount: number;
}

@ApiSchema({ name: 'ReportFeeTally' })
export class FeeTallySchema extends TallySchema {
  @ApiProperty({
    description:
      'Succeeded objects whose fee is not known exactly (price unknown, or in another currency)',
    example: 0,
  })
  notComputed: number;
}
sameShape<FeeTally, FeeTallySchema>(true);

export class ReportFeesSchema {
  @ApiProperty({
    type: FeeTallySchema,
    description:
      'Payer price − amount, for invoices whose payer price is known in their own currency',
  })
  payments: FeeTallySchema;
  @ApiProperty({
    type: FeeTallySchema,
    description:
      'shopWriteOff − payeeReceive, for payouts whose payway currency is the shop currency',
  })
  payouts: FeeTallySchema;
}

@ApiSchema({ name: 'ReportCurrency' })
export class CurrencyBooksSchema {
  @ApiProperty({ description: 'ISO 4217 numeric code', example: 643 }) currency: number;
  @ApiProperty({ type: TallySchema, description: 'Invoices that became succeeded that day' })
  payments: TallySchema;
  @ApiProperty({ type: TallySchema, description: 'Refunds that became SUCCESS that day' })
  refunds: TallySchema;
  @ApiProperty({
    type: PayoutTallySchema,
    description: 'Payouts that became succeeded that day, by shop currency; amount: the write-off',
  })
  payouts: PayoutTallySchema;
  @ApiProperty({
    type: TallySchema,
    description:
      'Disputes that became lost or accepted that day: chargebacks (their chargebacks debits), in the invoice currency',
  })
  chargebacks: TallySchema;
  @ApiProperty({ type: ReportFeesSchema }) fees: ReportFeesSchema;
}
sameShape<CurrencyBooks, CurrencyBooksSchema>(true);

@ApiSchema({ name: 'ReportOpenItem' })
export class OpenItemSchema {
  @ApiProperty({ enum: ['invoice', 'refund', 'payout'], example: 'invoice' })
  objectType: 'invoice' | 'refund' | 'payout';
  @ApiProperty({ description: "The shop's id", example: 'order-1001' }) id: string;
  @ApiProperty({ example: '500.00' }) amount: string;
  @ApiProperty({ example: 643 }) currency: number;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "Status at the day's end by the audit trail (null: no entry before it)",
    example: 'awaiting_payer',
  })
  status: string | null;
  @ApiProperty({ example: 'succeeded' }) currentStatus: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T18:02:11.000Z' }) createdAt: string;
  @ApiProperty({ description: "Seconds from creation to the day's end", example: 21469 })
  ageSeconds: number;
}
sameShape<OpenItem, OpenItemSchema>(true);

@ApiSchema({ name: 'ReportAttentionItem' })
export class AttentionItemSchema {
  @ApiProperty({ enum: ['invoice', 'refund', 'payout'], example: 'payout' })
  objectType: 'invoice' | 'refund' | 'payout';
  @ApiProperty({ example: 'payout-77' }) id: string;
  @ApiProperty({ example: '1000.00' }) amount: string;
  @ApiProperty({ example: 643 }) currency: number;
  @ApiProperty({ example: 'processing' }) currentStatus: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'deadline: no final status by the poll deadline',
  })
  reason: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    example: '2026-01-15T12:00:00.000Z',
  })
  raisedAt: string | null;
  @ApiProperty({
    description: "Flagged at the day's end (else: raised and resolved that day)",
    example: true,
  })
  flaggedAtEnd: boolean;
  @ApiProperty({ example: true }) flaggedNow: boolean;
}
sameShape<AttentionItem, AttentionItemSchema>(true);

export class OpenListSchema {
  @ApiProperty({ description: 'All of them; items lists the oldest 5000', example: 1 })
  total: number;
  @ApiProperty({ type: [OpenItemSchema] }) items: OpenItemSchema[];
}

export class AttentionListSchema {
  @ApiProperty({ description: 'All of them; items lists at most 5000', example: 1 }) total: number;
  @ApiProperty({ type: [AttentionItemSchema] }) items: AttentionItemSchema[];
}

export class LedgerSumSchema {
  @ApiProperty({ example: 'sales' }) account: string;
  @ApiProperty({ example: 643 }) currency: number;
  @ApiProperty({ example: '-1500.00', description: 'debits − credits' }) amount: string;
}

@ApiSchema({ name: 'DailyReport' })
export class DailyReportSchema {
  @ApiProperty({ example: '2026-01-15' }) date: string;
  @ApiProperty({ description: 'REPORT_TIMEZONE', example: 'Europe/Moscow' }) timeZone: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-14T21:00:00.000Z' }) from: string;
  @ApiProperty({
    format: 'date-time',
    description: 'Exclusive',
    example: '2026-01-15T21:00:00.000Z',
  })
  to: string;
  @ApiProperty({ description: 'False while the day is still running', example: true })
  complete: boolean;
  @ApiProperty({ type: [CurrencyBooksSchema] }) currencies: CurrencyBooksSchema[];
  @ApiProperty({ type: [LedgerSumSchema], description: "The ledger's postings of the day, per account and currency" })
  ledger: LedgerSumSchema[];
  @ApiProperty({ type: OpenListSchema }) open: OpenListSchema;
  @ApiProperty({ type: AttentionListSchema }) attention: AttentionListSchema;
}
sameShape<DailyReport, DailyReportSchema>(true);
