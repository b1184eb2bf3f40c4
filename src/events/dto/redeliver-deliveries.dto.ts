import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { IsDateTime } from '../../common/validators';
import { EVENT_OBJECT_TYPES, SHOP_EVENT_TYPES } from '../../audit/shop-events';

/** The deliveries a bulk redelivery starts over: failed or dead ones, narrowed by a filter. */
export class RedeliverDeliveriesDto {
  @ApiProperty({ enum: ['failed', 'dead'], description: 'Which deliveries to send again' })
  @IsIn(['failed', 'dead'])
  state: 'failed' | 'dead';

  @ApiPropertyOptional({ enum: SHOP_EVENT_TYPES, description: 'Only deliveries of events of this type' })
  @IsOptional()
  @IsIn(SHOP_EVENT_TYPES)
  type?: string;

  @ApiPropertyOptional({ enum: EVENT_OBJECT_TYPES, description: 'Only deliveries of events of this object type' })
  @IsOptional()
  @IsIn(EVENT_OBJECT_TYPES)
  objectType?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-01-15T00:00:00Z',
    description:
      'Only deliveries of events created at or after this time (ISO 8601 date-time with an offset; a bare day is refused)',
  })
  @IsOptional()
  @IsDateTime('time')
  since?: string;
}

export class RedeliveredCount {
  @ApiProperty({ example: 12, description: 'How many deliveries were queued again (pending, due now)' })
  redelivered: number;
}
