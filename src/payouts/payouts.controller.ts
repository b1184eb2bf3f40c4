import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { Acting, type Actor } from '../common/actor';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { ApiProblems, pageOf } from '../common/openapi';
import { AccountCheckSchema, PayoutQuoteSchema } from './dto/payout.schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Page } from '../common/pagination';
import { ListPayoutsQuery } from './dto/list-payouts.query';
import { CheckAccountDto, CreatePayoutDto, QuotePayoutDto } from './dto/payout-requests.dto';
import { PayoutView } from './dto/payout.view';
import { PayoutsService } from './payouts.service';
import { Scopes } from '../common/access.decorator';
import { sendStoredAnswer } from '../common/stored-answer';

export const SHOP_PAYMENT_ID = {
  name: 'shopPaymentId',
  description: "The shop's payout id",
  example: 'payout-2001',
};

@ApiTags('payouts')
@ApiBearerAuth()
@Scopes('payouts')
@Controller('payouts')
export class PayoutsController {
  constructor(private readonly payouts: PayoutsService) {}

  @Post('quote')
  @HttpCode(200)
  @ApiOperation({ summary: 'withdraw/try: what the payee receives and what is written off' })
  @ApiOkResponse({ type: PayoutQuoteSchema })
  @ApiProblems(422, 502, 504)
  quote(@Body() dto: QuotePayoutDto): Promise<Record<string, unknown>> {
    return this.payouts.quote(dto);
  }

  @Post('check-account')
  @HttpCode(200)
  @ApiOperation({ summary: 'check_account: whether the account exists and can be credited' })
  @ApiOkResponse({ type: AccountCheckSchema })
  @ApiProblems(422, 502, 504)
  checkAccount(
    @Body() dto: CheckAccountDto,
  ): Promise<{ exists: boolean; accountInfo: Record<string, unknown> | null }> {
    return this.payouts.checkAccount(dto);
  }

  @Post()
  @ApiOperation({
    summary: 'Create a payout (withdraw/create), idempotent by shopPaymentId',
    description:
      'Sent through the agent shop (GATEWAY_PAYOUT_SHOP_ID), whose balance it is paid from. ' +
      'Validated against the payway (bounds, account_info_config), stored pending and committed before the gateway is ' +
      'called. The same shopPaymentId with the same body replays the stored answer; another body is 409. The status ' +
      'is then polled every PAYOUT_POLL_INTERVAL_S until final or PAYOUT_POLL_MAX_S, then needs_attention. ' +
      '422 cap-exceeded: the payout would pass PAYOUT_DAILY_CAP or PAYOUT_RECIPIENT_DAILY_CAP of the UTC day ' +
      '(members cap, currency, limit, used, remaining, requested; what counts is the write-off in the shop currency: ' +
      'amount for shop_amount, shop_write_off when known for ps_amount; rejected and failed payouts free their share). ' +
      "422 insufficient-balance: the agent shop's available balance (read at most every BALANCE_CACHE_S, read again " +
      "once before refusing on a cached figure) less the write-offs of payouts in flight does not cover this payout's " +
      'write-off from withdraw/try (members currency, available, inFlight, needed, shortBy). In both cases no row is ' +
      'written and nothing is sent. While BALANCE_CACHE_S > 0 a new payout costs one more withdraw/try.',
  })
  @ApiAcceptedResponse({
    type: PayoutView,
    description: 'The payout (also the replayed answer of an identical repeat)',
  })
  @ApiProblems(409, 422, 502, 504)
  async create(
    @Body() dto: CreatePayoutDto,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
    @Acting() by: Actor,
  ): Promise<PayoutView> {
    const stored = await this.payouts.create(dto, by);
    return sendStoredAnswer(req, res, stored);
  }

  @Get(':shopPaymentId')
  @ApiOperation({ summary: 'The stored payout' })
  @ApiOkResponse({ type: PayoutView })
  @ApiParam(SHOP_PAYMENT_ID)
  @ApiProblems(404)
  get(@Param('shopPaymentId') shopPaymentId: string): Promise<PayoutView> {
    return this.payouts.get(shopPaymentId);
  }

  @Get()
  @ApiOperation({ summary: 'Stored payouts, newest first; {items, nextCursor}' })
  @ApiOkResponse({ type: pageOf(PayoutView) })
  list(@Query() q: ListPayoutsQuery): Promise<Page<PayoutView>> {
    return this.payouts.list(q);
  }
}
