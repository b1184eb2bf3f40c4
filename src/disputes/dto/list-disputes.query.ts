import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { DISPUTE_STATUSES, type DisputeStatus } from '../dispute.state';

export class AdminDisputesQuery extends PageQuery {
  @ApiPropertyOptional({ enum: DISPUTE_STATUSES, example: 'open' })
  @IsOptional()
  @IsIn(DISPUTE_STATUSES)
  status?: DisputeStatus;

  @ApiPropertyOptional({ description: 'The disputes of one invoice', example: 'order-1001' })
  @IsOptional()
  @IsString()
  @Length(1, 255)
  shopOrderId?: string;
}
