import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { ApiProblems, pageOf } from '../common/openapi';
import { InvoiceSchema, QuoteSchema } from './dto/invoice.schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Role } from '../common/auth.guard';
import type { Page } from '../common/pagination';
import { CreateInvoiceDto, QuoteInvoiceDto } from './dto/create-invoice.dto';
import { GetInvoiceQuery, ListInvoicesQuery } from './dto/invoice-queries.dto';
import type { InvoiceView } from './invoice.view';
import { InvoicesService, type QuoteView } from './invoices.service';
import { Scopes } from '../common/access.decorator';
import { Acting, type Actor } from '../common/actor';
import { ValidationFailed } from '../common/errors';
import { sendStoredAnswer } from '../common/stored-answer';
import { holdActionBodyErrors } from './hold-action-body';

const SHOP_ORDER_ID = {
  name: 'shopOrderId',
  description: "The shop's order id",
  example: 'order-1001',
};

const isAdmin = (req: FastifyRequest & { role?: Role }): boolean => req.role === 'admin';

@ApiTags('invoices')
@ApiBearerAuth()
@Scopes('payments')
@Controller('invoices')
export class InvoicesController {
  constructor(private readonly invoices: InvoicesService) {}

  @Post('quote')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Pre-calculation (invoice/try): payer price and the add-on fields of the payway',
    description:
      'fields: [{name, label, hint, example, regex, prefix}]; label and hint are maps language → text.',
  })
  @ApiOkResponse({ type: QuoteSchema })
  @ApiProblems(422, 502, 504)
  quote(@Body() dto: QuoteInvoiceDto): Promise<QuoteView> {
    return this.invoices.quote(dto);
  }

  @Post()
  @ApiOperation({
    summary: 'Create an invoice (invoice/create, or invoice/hold with twoStep)',
    description:
      'A new invoice is checked against the payway configuration before anything is written; a repeat is answered ' +
      'whatever the configuration says now. Idempotent by shopOrderId: the same body ' +
      'replays the stored answer (same status and body), another body is 409. A fatal gateway error answers 502 ' +
      '(invoice rejected); a non-fatal one 201 with status created (the notification settles it); a lost answer ' +
      '(time-out) 201 with status unknown, settled by invoice/check, never re-sent. Card data is passed to the gateway ' +
      'and never stored or logged.',
  })
  @ApiCreatedResponse({
    description: 'The invoice (also the replayed answer of an identical repeat)',
    type: InvoiceSchema,
  })
  @ApiProblems(409, 502, 504)
  async create(
    @Body() dto: CreateInvoiceDto,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
    @Acting() by: Actor,
  ): Promise<unknown> {
    const answer = await this.invoices.create(await this.invoices.resolvePaymentTokenFrom(dto), by);
    return sendStoredAnswer(req, res, answer);
  }

  @Get()
  @ApiOperation({ summary: 'List invoices, newest first, with cursor pagination' })
  @ApiOkResponse({ type: pageOf(InvoiceSchema) })
  list(@Query() q: ListInvoicesQuery, @Req() req: FastifyRequest): Promise<Page<InvoiceView>> {
    return this.invoices.list(q, isAdmin(req));
  }

  @Get(':shopOrderId')
  @ApiOperation({ summary: 'The stored invoice; refresh=true asks invoice/check first' })
  @ApiOkResponse({
    description: 'The invoice (paymentToken masked; the raw token to admin keys only)',
    type: InvoiceSchema,
  })
  @ApiParam(SHOP_ORDER_ID)
  @ApiProblems(404, 502, 504)
  get(
    @Param('shopOrderId') shopOrderId: string,
    @Query() q: GetInvoiceQuery,
    @Req() req: FastifyRequest,
    @Acting() by: Actor,
  ): Promise<InvoiceView> {
    return this.invoices.get(shopOrderId, q.refresh ?? false, isAdmin(req), by);
  }

  @Post(':shopOrderId/charge')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Charge a held invoice (invoice/charge): the whole held amount',
    description:
      'Takes no body (or {}): any field is 400 naming it (amount: partial capture is not offered). ' +
      'A repeat after the charge happened answers 200 with the invoice; 409 unless held otherwise.',
  })
  @ApiOkResponse({ type: InvoiceSchema })
  @ApiParam(SHOP_ORDER_ID)
  @ApiProblems(400, 404, 409, 502, 504)
  charge(
    @Param('shopOrderId') shopOrderId: string,
    @Body() body: unknown,
    @Acting() by: Actor,
  ): Promise<InvoiceView> {
    refuseBodyFields(body);
    return this.invoices.charge(shopOrderId, by);
  }

  @Post(':shopOrderId/unhold')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Release a hold (invoice/unhold)',
    description:
      'Takes no body (or {}): any field is 400 naming it. A repeat after the release answers 200 ' +
      'with the invoice; 409 unless held otherwise.',
  })
  @ApiOkResponse({ type: InvoiceSchema })
  @ApiParam(SHOP_ORDER_ID)
  @ApiProblems(400, 404, 409, 502, 504)
  unhold(
    @Param('shopOrderId') shopOrderId: string,
    @Body() body: unknown,
    @Acting() by: Actor,
  ): Promise<InvoiceView> {
    refuseBodyFields(body);
    return this.invoices.unhold(shopOrderId, by);
  }
}

/** Before anything is read or sent: charge and unhold take no body fields. */
function refuseBodyFields(body: unknown): void {
  const errors = holdActionBodyErrors(body);
  if (errors.length > 0) throw new ValidationFailed(errors);
}
