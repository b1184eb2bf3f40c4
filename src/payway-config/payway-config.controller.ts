import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ListPaywaysQuery } from './dto/list-payways.query';
import { PaywayConfigService, type PaywayList } from './payway-config.service';

@ApiTags('payment ways')
@ApiBearerAuth()
@Controller('payways')
export class PaywayConfigController {
  constructor(private readonly payways: PaywayConfigService) {}

  @Get()
  @ApiOperation({
    summary:
      'Groups and payways of shop_input_config/shop (payment) or shop_output_config/shop (payout)',
    description:
      'Cached (stored and refreshed on a schedule); refresh=true refetches from the gateway.',
  })
  @ApiOkResponse({ description: '{direction, fetchedAt, groups}: the gateway groups as received' })
  list(@Query() q: ListPaywaysQuery): Promise<PaywayList> {
    return this.payways.list(q.direction, q.refresh ?? false);
  }
}
