import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { BalanceService, type BalanceView } from './balance.service';

@ApiTags('payouts')
@ApiBearerAuth()
@Controller('balance')
export class BalanceController {
  constructor(private readonly balance: BalanceService) {}

  @Get()
  @ApiOperation({
    summary:
      'shop_balance: {shopId, balances: [{currency, available, hold, frozen, total}]}, decimal strings',
  })
  @ApiOkResponse({ description: 'total = available + hold + frozen, exact' })
  get(): Promise<BalanceView> {
    return this.balance.get();
  }
}
