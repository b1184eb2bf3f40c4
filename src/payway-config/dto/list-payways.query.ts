import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import type { PaywayDirection } from '../payway-config.entity';

export class ListPaywaysQuery {
  @ApiProperty({ enum: ['payment', 'payout'], example: 'payment' })
  @IsIn(['payment', 'payout'])
  direction: PaywayDirection;

  @ApiPropertyOptional({ description: 'true: fetch the configuration from the gateway first', example: false })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) =>
    value === 'true' ? true : value === 'false' ? false : value,
  )
  @IsBoolean()
  refresh?: boolean;
}
