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
      'The approval thresholds, the daily caps and the balance check weigh one figure, the write-off in the shop ' +
      'currency: amount for shop_amount; for ps_amount the shop_write_off withdraw/try quotes (asked whenever a ' +
      'threshold, a cap or the balance check of the currency is configured: one more withdraw/try per new ps_amount ' +
      'payout, none for shop_amount). At or above PAYOUT_APPROVAL_THRESHOLD: stored awaiting_approval, nothing sent. ' +
      '422 cap-exceeded: the payout would pass PAYOUT_DAILY_CAP or PAYOUT_RECIPIENT_DAILY_CAP of the UTC day ' +
      '(members cap, currency, limit, used, remaining, requested; rejected and failed payouts free their share). ' +
      "422 insufficient-balance: the agent shop's available balance (read at most every BALANCE_CACHE_S, read again " +
      "once before refusing on a cached figure) less the write-offs of payouts in flight does not cover this payout's " +
      'write-off (members currency, available, inFlight, needed, shortBy). 503 write-off-unquoted (Retry-After): ' +
      'withdraw/try could not quote the write-off of a ps_amount payout now while a control weighs it; it is never ' +
      'weighed by its amount instead: repeat the request (a refusal withdraw/try calls fatal is 422 gateway-error). ' +
      'In every refusal no row is written and nothing is sent.',
  })
  @ApiAcceptedResponse({
    type: PayoutView,
    description: 'The payout (also the replayed answer of an identical repeat)',
  })
  @ApiProblems(409, 422, 502, 503, 504)
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
