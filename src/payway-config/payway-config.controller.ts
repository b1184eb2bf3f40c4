import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../common/openapi';
import { ListPaywaysQuery } from './dto/list-payways.query';
import { PaywayListSchema } from './dto/payway-list.schema';
import { PaywayConfigService, type PaywayList } from './payway-config.service';
import { Scopes } from '../common/access.decorator';

@ApiTags('payment ways')
@ApiBearerAuth()
@Scopes('payments', 'payouts')
@Controller('payways')
export class PaywayConfigController {
  constructor(private readonly payways: PaywayConfigService) {}

  @Get()
  @ApiOperation({
    summary:
      'Groups and payways of shop_input_config/shop (payment) or shop_output_config/shop (payout)',
    description:
      'Payment ways are the payment shop’s, payout ways the agent shop’s (GATEWAY_PAYOUT_SHOP_ID). ' +
      'Cached per shop and direction (stored and refreshed on a schedule); refresh=true refetches from the gateway.',
  })
  @ApiOkResponse({ description: '{direction, fetchedAt, groups}: the gateway groups as received', type: PaywayListSchema })
  @ApiProblems(502, 503, 504)
  list(@Query() q: ListPaywaysQuery): Promise<PaywayList> {
    return this.payways.list(q.direction, q.refresh ?? false);
  }
}
