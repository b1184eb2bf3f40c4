import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, Length } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { MetadataFilter } from '../../common/metadata';
import type { RefundStatus } from '../refund.entity';
import { REFUND_STATUSES } from '../refund.state';

const toBool = ({ value }: { value: unknown }): unknown =>
  value === 'true' ? true : value === 'false' ? false : value;

export class InvoiceRefundsQuery extends PageQuery {
  @ApiPropertyOptional({
    description: 'Ask the gateway (invoice/get-refunds) first and apply what it reports',
    example: false,
  })
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  refresh?: boolean;

  @MetadataFilter()
  metadata?: Record<string, string>;
}

export class AdminRefundsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: REFUND_STATUSES, example: 'WAITING' })
  @IsOptional()
  @IsIn(REFUND_STATUSES)
  status?: RefundStatus;

  @ApiPropertyOptional({ example: 'order-1001' })
  @IsOptional()
  @IsString()
  @Length(1, 255)
  shopOrderId?: string;

  @MetadataFilter()
  metadata?: Record<string, string>;
}
