import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminOnly } from '../common/access.decorator';
import { Acting, type Actor } from '../common/actor';
import { ApiProblems, pageOf } from '../common/openapi';
import type { Page } from '../common/pagination';
import { sendStoredAnswer } from '../common/stored-answer';
import { DisputesService } from './disputes.service';
import { CreateDisputeDto, ResolveDisputeDto } from './dto/create-dispute.dto';
import { DisputeView } from './dto/dispute.view';
import { AdminDisputesQuery } from './dto/list-disputes.query';

const CREATE_DOC =
  'Records a chargeback the gateway’s manager reported (the gateway’s interface has none; nothing is sent to it). ' +
  'Only a succeeded invoice can be disputed (409 invalid-state otherwise); the amount must fit what is left to dispute, ' +
  'paid − refunds not FAILED − the other disputes open, lost or accepted (400 naming amount otherwise). From then on the ' +
  'amount is not refundable (the invoice’s disputedAmount; a refund into it is 422 refund-exceeds-refundable). Idempotent ' +
  'by the Idempotency-Key header (per admin key) and by gatewayReference (per shop): the same facts replay the dispute as ' +
  'it is now with Idempotent-Replayed: true, other facts are 409 naming them. Event dispute.opened; audited.';

const RESOLVE_DOC =
  'Records what the gateway decided: won (the amount is refundable again), lost or accepted (a chargeback: chargebacks ' +
  'debited and gateway_payment_shop credited for the amount, by the position rule; never refundable). Only an open ' +
  'dispute can be resolved: resolving it again is 409 invalid-state and changes nothing. Events dispute.won|lost|accepted; audited.';

@ApiTags('admin')
@ApiBearerAuth()
@AdminOnly()
@Controller('admin')
export class AdminDisputesController {
  constructor(private readonly disputes: DisputesService) {}

  @Post('invoices/:shopOrderId/disputes')
  @HttpCode(201)
  @ApiOperation({ summary: 'Record a dispute (chargeback) of an invoice', description: CREATE_DOC })
  @ApiParam({ name: 'shopOrderId', description: 'The disputed invoice', example: 'order-1001' })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'Optional, 1–255 visible ASCII characters, per admin key: the same request records once (a repeat answers the dispute, with `Idempotent-Replayed: true`); a different request under the same key is a 409',
  })
  @ApiCreatedResponse({
    type: DisputeView,
    description: 'The dispute (also the replayed answer of an identical repeat)',
  })
  @ApiProblems(400, 404, 409)
  async create(
    @Param('shopOrderId') shopOrderId: string,
    @Body() dto: CreateDisputeDto,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
    @Acting() by: Actor,
  ): Promise<DisputeView> {
    const result = await this.disputes.create(shopOrderId, dto, req.headers['idempotency-key'], by);
    return sendStoredAnswer(req, res, result);
  }

  @Post('disputes/:id/resolve')
  @HttpCode(200)
  @ApiOperation({ summary: 'Resolve a dispute: won, lost or accepted', description: RESOLVE_DOC })
  @ApiParam({ name: 'id', description: 'The dispute', example: 'dp_3kTq9vX2bLm8RzW4yN6pA1cD' })
  @ApiOkResponse({ type: DisputeView })
  @ApiProblems(400, 404, 409)
  resolve(
    @Param('id') id: string,
    @Body() dto: ResolveDisputeDto,
    @Acting() by: Actor,
  ): Promise<DisputeView> {
    return this.disputes.resolve(id, dto, by);
  }

  @Get('disputes')
  @ApiOperation({ summary: 'All disputes, newest first, filtered by status and shopOrderId' })
  @ApiOkResponse({ type: pageOf(DisputeView) })
  list(@Query() q: AdminDisputesQuery): Promise<Page<DisputeView>> {
    return this.disputes.list(q);
  }
}
