import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsISO8601, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { INVOICE_STATUSES, type InvoiceStatus } from '../invoice.state';

const toBool = ({ value }: { value: unknown }): unknown =>
  value === 'true' ? true : value === 'false' ? false : value;

export class GetInvoiceQuery {
  @ApiPropertyOptional({ description: 'true: ask invoice/check first and apply its status' })
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  refresh?: boolean;
}

export class ListInvoicesQuery extends PageQuery {
  @ApiPropertyOptional({ enum: INVOICE_STATUSES })
  @IsOptional()
  @IsIn(INVOICE_STATUSES)
  status?: InvoiceStatus;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(150)
  payway?: string;

  @ApiPropertyOptional({ description: 'ISO 8601, inclusive' })
  @IsOptional()
  @IsISO8601({ strict: true })
  createdFrom?: string;

  @ApiPropertyOptional({ description: 'ISO 8601, exclusive' })
  @IsOptional()
  @IsISO8601({ strict: true })
  createdTo?: string;
}

export class PayPageQuery {
  @IsOptional()
  @IsString()
  @MaxLength(128)
  t?: string;
}
