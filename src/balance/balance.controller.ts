import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../common/openapi';
import { BalanceSchema } from './dto/balance.schemas';
import { BalanceService, type BalanceView } from './balance.service';
import { Scopes } from '../common/access.decorator';

@ApiTags('payouts')
@ApiBearerAuth()
@Scopes('payouts')
@Controller('balance')
export class BalanceController {
  constructor(private readonly balance: BalanceService) {}

  @Get()
  @ApiOperation({
    summary:
      'shop_balance of the agent shop (GATEWAY_PAYOUT_SHOP_ID): {shopId, balances: [{currency, available, hold, frozen, total}]}, decimal strings',
  })
  @ApiOkResponse({ description: 'total = available + hold + frozen, exact', type: BalanceSchema })
  @ApiProblems(422, 502, 504)
  get(): Promise<BalanceView> {
    return this.balance.get();
  }
}
