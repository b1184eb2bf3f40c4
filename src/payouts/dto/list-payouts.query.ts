import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { MetadataFilter } from '../../common/metadata';
import type { PayoutStatus } from '../payout.entity';
import { PAYOUT_STATUSES } from '../payout.state';

export class ListPayoutsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: PAYOUT_STATUSES, example: 'needs_attention' })
  @IsOptional()
  @IsIn(PAYOUT_STATUSES)
  status?: PayoutStatus;

  @MetadataFilter()
  metadata?: Record<string, string>;
}
