import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import type { NotificationStatus } from '../notification.entity';

const STATUSES: NotificationStatus[] = ['pending', 'applied', 'stale', 'rejected', 'ignored'];

export class ListNotificationsQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'invoice, refund, ...', example: 'invoice' })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  type?: string;

  @ApiPropertyOptional({
    description: 'Signature verified (false: refused, kept for operators)',
    example: true,
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) =>
    value === 'true' ? true : value === 'false' ? false : value,
  )
  @IsBoolean()
  verified?: boolean;

  @ApiPropertyOptional({ enum: STATUSES, description: 'What applying it did', example: 'applied' })
  @IsOptional()
  @IsIn(STATUSES)
  status?: NotificationStatus;

  @ApiPropertyOptional({ example: 'order-1001' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  shopOrderId?: string;
}

export class ListEventsQuery extends PageQuery {
  @ApiPropertyOptional({
    enum: ['invoice', 'refund', 'payout', 'notification', 'dispute', 'webhook_delivery'],
    example: 'invoice',
  })
  @IsOptional()
  @IsIn(['invoice', 'refund', 'payout', 'notification', 'dispute', 'webhook_delivery'])
  entityType?: string;

  @ApiPropertyOptional({
    description: "The shop's id of the object (shopOrderId, shopRefundId, shopPaymentId; a dispute's dp_ id)",
    example: 'order-1001',
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  entityId?: string;
}
