import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { Acting, type Actor } from '../common/actor';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblems, pageOf } from '../common/openapi';
import type { Page } from '../common/pagination';
import { ListPayoutsQuery } from './dto/list-payouts.query';
import { PayoutView } from './dto/payout.view';
import { PayoutsService } from './payouts.service';
import { AdminOnly } from '../common/access.decorator';
import { ApprovePayoutDto, RejectPayoutDto } from './dto/payout-decision.dto';
import { PayoutApprovalView } from './dto/payout-approval.view';

@ApiTags('admin')
@ApiBearerAuth()
@AdminOnly()
@Controller('admin/payouts')
export class AdminPayoutsController {
  constructor(private readonly payouts: PayoutsService) {}

  @Get()
  @ApiOperation({ summary: 'Payouts by status, e.g. ?status=needs_attention' })
  @ApiOkResponse({ type: pageOf(PayoutView) })
  list(@Query() q: ListPayoutsQuery): Promise<Page<PayoutView>> {
    return this.payouts.list(q);
  }

  @Post(':shopPaymentId/reconcile')
  @HttpCode(200)
  @ApiOperation({ summary: 'Ask the gateway for the payout status now and apply it' })
  @ApiOkResponse({ type: PayoutView })
  @ApiParam({ name: 'shopPaymentId', description: "The shop's payout id", example: 'payout-2001' })
  @ApiProblems(404, 502, 504)
  reconcile(
    @Param('shopPaymentId') shopPaymentId: string,
    @Acting() by: Actor,
  ): Promise<PayoutView> {
    return this.payouts.reconcile(shopPaymentId, by);
  }

  @Get(':shopPaymentId/approval')
  @ApiOperation({
    summary: 'What an approver sees: check_account on the payee and the fee withdraw/try quotes, asked now',
    description:
      'For a payout awaiting approval the gateway is asked fresh (check_account on its account and payway, withdraw/try ' +
      'for its fee), each answer with the time it was asked; neither call sends the payout. An approval of an account the ' +
      'check refuses needs a note (422 payee-check-failed). `decisions` lists every decision so far with the check and ' +
      'the quote its approver was shown.',
  })
  @ApiOkResponse({ type: PayoutApprovalView })
  @ApiParam({ name: 'shopPaymentId', description: "The shop's payout id", example: 'payout-2001' })
  @ApiProblems(404)
  approval(@Param('shopPaymentId') shopPaymentId: string): Promise<PayoutApprovalView> {
    return this.payouts.approvalView(shopPaymentId);
  }

  @Post(':shopPaymentId/approve')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Approve a payout awaiting approval (admin keys; above the dual threshold two distinct keys, the second sends it)',
    description:
      'The approval that sends it admits its write-off (the one quoted at its create, else withdraw/try now) against ' +
      'the daily caps of that day and the balance: 422 cap-exceeded / insufficient-balance, or 503 write-off-unquoted ' +
      'when the write-off cannot be quoted now; the payout stays awaiting_approval and the approval is not recorded. ' +
      'The payee is checked again (check_account) and the fee quoted (withdraw/try): when the gateway says the account ' +
      'cannot be credited, an approval without a note is 422 payee-check-failed (nothing recorded, nothing sent); ' +
      'each approval keeps the check and the quote it was judged on.',
  })
  @ApiOkResponse({ type: PayoutView })
  @ApiParam({ name: 'shopPaymentId', description: "The shop's payout id", example: 'payout-2001' })
  @ApiProblems(400, 404, 409, 422, 503)
  approve(
    @Param('shopPaymentId') shopPaymentId: string,
    @Body() body: ApprovePayoutDto,
    @Acting() by: Actor,
  ): Promise<PayoutView> {
    return this.payouts.approve(shopPaymentId, by, body.note);
  }

  @Post(':shopPaymentId/reject')
  @HttpCode(200)
  @ApiOperation({ summary: 'Reject a payout awaiting approval: rejected, never sent' })
  @ApiOkResponse({ type: PayoutView })
  @ApiParam({ name: 'shopPaymentId', description: "The shop's payout id", example: 'payout-2001' })
  @ApiProblems(400, 404, 409)
  reject(
    @Param('shopPaymentId') shopPaymentId: string,
    @Body() body: RejectPayoutDto,
    @Acting() by: Actor,
  ): Promise<PayoutView> {
    return this.payouts.rejectPayout(shopPaymentId, body.reason, by);
  }
}
