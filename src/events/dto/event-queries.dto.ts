import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { EVENT_OBJECT_TYPES, SHOP_EVENT_TYPES } from '../../audit/shop-events';
import { PageQuery } from '../../common/pagination';

const blankToUndefined = ({ value }: { value: unknown }): unknown =>
  value === '' ? undefined : value;

export class EventFeedQuery {
  @ApiPropertyOptional({
    description: 'A `nextCursor` from an earlier page; omitted: from the first event',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  @Transform(blankToUndefined)
  after?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;

  @ApiPropertyOptional({
    enum: SHOP_EVENT_TYPES,
    description:
      "Only events of this type; a type of an object the key's scopes do not cover is 403",
  })
  @IsOptional()
  @IsIn(SHOP_EVENT_TYPES)
  type?: string;

  @ApiPropertyOptional({
    enum: EVENT_OBJECT_TYPES,
    description: "Only events of this object type; one the key's scopes do not cover is 403",
  })
  @IsOptional()
  @IsIn(EVENT_OBJECT_TYPES)
  objectType?: string;

  @ApiPropertyOptional({
    maxLength: 255,
    description:
      'Only events of the object with this shop id (shopOrderId, shopRefundId or shopPaymentId)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  objectId?: string;
}

export { DELIVERY_STATES, type DeliveryState } from '../delivery-states';
import { DELIVERY_STATES, type DeliveryState } from '../delivery-states';

export class ListDeliveriesQuery extends PageQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATES })
  @IsOptional()
  @IsIn(DELIVERY_STATES)
  state?: DeliveryState;
}
