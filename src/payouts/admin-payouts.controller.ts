import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Page } from '../common/pagination';
import { ListPayoutsQuery } from './dto/list-payouts.query';
import { PayoutView } from './dto/payout.view';
import { PayoutsService } from './payouts.service';

@ApiTags('admin')
@ApiBearerAuth()
@Controller('admin/payouts')
export class AdminPayoutsController {
  constructor(private readonly payouts: PayoutsService) {}

  @Get()
  @ApiOperation({ summary: 'Payouts by status, e.g. ?status=needs_attention' })
  list(@Query() q: ListPayoutsQuery): Promise<Page<PayoutView>> {
    return this.payouts.list(q);
  }

  @Post(':shopPaymentId/reconcile')
  @HttpCode(200)
  @ApiOperation({ summary: 'Ask the gateway for the payout status now and apply it' })
  @ApiOkResponse({ type: PayoutView })
  reconcile(@Param('shopPaymentId') shopPaymentId: string): Promise<PayoutView> {
    return this.payouts.reconcile(shopPaymentId);
  }
}
