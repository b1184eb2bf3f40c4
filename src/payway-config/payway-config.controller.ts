import { Controller, Get, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ApiProblems } from '../common/openapi';
import { ListPaywaysQuery } from './dto/list-payways.query';
import {
  PAYWAY_LIST_SCHEMA,
  PaymentPaywayListSchema,
  PayoutPaywayListSchema,
} from './dto/payway-list.schema';
import { PaywayConfigService } from './payway-config.service';
import { toPaywayListView, type PaywayListView } from './payway.view';
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
  @ApiExtraModels(PaymentPaywayListSchema, PayoutPaywayListSchema)
  @ApiOkResponse({
    description:
      '{direction, fetchedAt, groups}: the gateway groups, fields in camelCase and typed, amounts as decimal strings',
    schema: PAYWAY_LIST_SCHEMA,
  })
  @ApiProblems(502, 503, 504)
  async list(@Query() q: ListPaywaysQuery): Promise<PaywayListView> {
    return toPaywayListView(await this.payways.list(q.direction, q.refresh ?? false));
  }
}
