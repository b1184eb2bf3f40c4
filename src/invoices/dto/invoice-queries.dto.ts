import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { IsDateTime } from '../../common/validators';
import { PageQuery } from '../../common/pagination';
import { MetadataFilter } from '../../common/metadata';
import { INVOICE_STATUSES, type InvoiceStatus } from '../invoice.state';

const toBool = ({ value }: { value: unknown }): unknown =>
  value === 'true' ? true : value === 'false' ? false : value;

export class GetInvoiceQuery {
  @ApiPropertyOptional({
    description: 'true: ask invoice/check first and apply its status',
    example: false,
  })
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  refresh?: boolean;
}

export class ListInvoicesQuery extends PageQuery {
  @ApiPropertyOptional({ enum: INVOICE_STATUSES, example: 'succeeded' })
  @IsOptional()
  @IsIn(INVOICE_STATUSES)
  status?: InvoiceStatus;

  @ApiPropertyOptional({ example: 'card_core_payin_rub[mock_server,success_with_callback]' })
  @IsOptional()
  @IsString()
  @MaxLength(150)
  payway?: string;

  @ApiPropertyOptional({
    description: 'ISO 8601 date-time with an offset, or a day YYYY-MM-DD (its UTC midnight); inclusive',
    example: '2026-01-01T00:00:00Z',
  })
  @IsOptional()
  @IsDateTime('timeOrDay')
  createdFrom?: string;

  @ApiPropertyOptional({
    description: 'ISO 8601 date-time with an offset, or a day YYYY-MM-DD (its UTC midnight); exclusive',
    example: '2026-02-01T00:00:00Z',
  })
  @IsOptional()
  @IsDateTime('timeOrDay')
  createdTo?: string;

  @MetadataFilter()
  metadata?: Record<string, string>;
}
