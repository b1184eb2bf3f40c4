import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { Acting, type Actor } from '../common/actor';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { ApiProblems } from '../common/openapi';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Page } from '../common/pagination';
import { CreateRefundDto } from './dto/create-refund.dto';
import { AdminRefundsQuery, InvoiceRefundsQuery } from './dto/list-refunds.query';
import { RefundPage, RefundView } from './dto/refund.view';
import { RefundsService } from './refunds.service';
import { AdminOnly, Scopes } from '../common/access.decorator';
import { sendStoredAnswer } from '../common/stored-answer';

const CREATE_DOC =
  'Full or partial refund of a succeeded invoice, in its currency. The refunds that are not FAILED never exceed the paid ' +
  'amount (422 refund-exceeds-paid-amount otherwise, nothing sent), and never take what the invoice’s disputes open, lost or ' +
  'accepted hold (422 refund-exceeds-refundable naming disputedAmount). Idempotent by shopRefundId: the same body replays the ' +
  'stored answer, a different body is 409. A refund whose outcome is not known yet (gateway time-out) is WAITING and is ' +
  'settled by notification or reconciliation; a refund the gateway refuses outright is answered with a gateway-error problem.';

const SHOP_ORDER_ID = { name: 'shopOrderId', description: 'The invoice', example: 'order-1001' };

@ApiTags('refunds')
@ApiBearerAuth()
@Scopes('refunds')
@Controller('invoices/:shopOrderId/refunds')
export class RefundsController {
  constructor(private readonly refunds: RefundsService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Refund an invoice', description: CREATE_DOC })
  @ApiCreatedResponse({
    type: RefundView,
    description: 'The refund (also the replayed answer of an identical repeat)',
  })
  @ApiParam(SHOP_ORDER_ID)
  @ApiProblems(404, 409, 422, 502, 503, 504)
  async create(
    @Param('shopOrderId') shopOrderId: string,
    @Body() dto: CreateRefundDto,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
    @Acting() by: Actor,
  ): Promise<RefundView> {
    const result = await this.refunds.create(shopOrderId, dto, 'api', by);
    return sendStoredAnswer(req, res, result);
  }

  @Get()
  @ApiOperation({ summary: "The invoice's refunds; ?refresh=true asks invoice/get-refunds first" })
  @ApiOkResponse({ type: RefundPage })
  @ApiParam(SHOP_ORDER_ID)
  @ApiProblems(404, 502, 503, 504)
  list(
    @Param('shopOrderId') shopOrderId: string,
    @Query() q: InvoiceRefundsQuery,
    @Acting() by: Actor,
  ): Promise<Page<RefundView>> {
    return this.refunds.listForInvoice(shopOrderId, q, by);
  }
}

@ApiTags('admin')
@ApiBearerAuth()
@AdminOnly()
@Controller('admin')
export class AdminRefundsController {
  constructor(private readonly refunds: RefundsService) {}

  @Post('invoices/:shopOrderId/refunds')
  @HttpCode(201)
  @ApiOperation({ summary: 'Refund an invoice (operator)', description: CREATE_DOC })
  @ApiCreatedResponse({
    type: RefundView,
    description: 'The refund (also the replayed answer of an identical repeat)',
  })
  @ApiParam(SHOP_ORDER_ID)
  @ApiProblems(404, 409, 422, 502, 503, 504)
  async create(
    @Param('shopOrderId') shopOrderId: string,
    @Body() dto: CreateRefundDto,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
    @Acting() by: Actor,
  ): Promise<RefundView> {
    const result = await this.refunds.create(shopOrderId, dto, 'admin', by);
    return sendStoredAnswer(req, res, result);
  }

  @Get('refunds')
  @ApiOperation({ summary: 'All refunds, newest first, filtered by status and shopOrderId' })
  @ApiOkResponse({ type: RefundPage })
  list(@Query() q: AdminRefundsQuery): Promise<Page<RefundView>> {
    return this.refunds.listAll(q);
  }
}
