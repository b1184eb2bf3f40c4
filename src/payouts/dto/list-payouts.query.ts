import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { IsMetadata } from '../../common/metadata';
import type { PayoutStatus } from '../payout.entity';
import { PAYOUT_STATUSES } from '../payout.state';

export class ListPayoutsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: PAYOUT_STATUSES, example: 'needs_attention' })
  @IsOptional()
  @IsIn(PAYOUT_STATUSES)
  status?: PayoutStatus;

  @ApiPropertyOptional({
    name: 'metadata',
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Only objects whose metadata holds every given key with that value: ?metadata[orderRef]=A-1',
    example: { orderRef: 'A-1' },
  })
  @IsOptional()
  @IsMetadata(true)
  metadata?: Record<string, string>;
}
