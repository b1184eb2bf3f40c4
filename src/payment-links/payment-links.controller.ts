import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { Scopes } from '../common/access.decorator';
import { Acting, type Actor } from '../common/actor';
import { ValidationFailed } from '../common/errors';
import { ApiProblems, pageOf } from '../common/openapi';
import type { Page } from '../common/pagination';
import { CreatePaymentLinkDto, ListPaymentLinksQuery } from './dto/create-payment-link.dto';
import { PaymentLinkSchema, type PaymentLinkView } from './dto/payment-link.view';
import { PaymentLinksService } from './payment-links.service';

const LINK_ID = {
  name: 'id',
  description: 'The link id (`plink_…`)',
  example: 'plink_0b6f6a523c1e4a8f9a7e2d5c1f0e9b11',
};

@ApiTags('payment links')
@ApiBearerAuth()
@Scopes('payments')
@Controller('payment-links')
export class PaymentLinksController {
  constructor(private readonly links: PaymentLinksService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a payment link (a payer page that takes a payment without a shop order)',
    description:
      'The fields are checked as an invoice create checks them (amount digits and the bounds of every payway offered, ' +
      'currency, description, metadata limits, no card data); nothing is written on a refusal. Without `payways` the ' +
      "link offers every active payway of the currency that takes the amount. The payer opens `url`, chooses a payway, " +
      "fills its add-on fields (checked as `extras` are) and is sent on to the gateway; each attempt is the invoice " +
      '`<id>-<n>` (carrying `paymentLinkId`). A single-use link is paid at most once (`paid`); a reusable one stays ' +
      'active. Event `payment_link.created`.',
  })
  @ApiCreatedResponse({ type: PaymentLinkSchema })
  @ApiProblems(400)
  create(@Body() dto: CreatePaymentLinkDto, @Acting() by: Actor): Promise<PaymentLinkView> {
    return this.links.create(dto, by);
  }

  @Get()
  @ApiOperation({ summary: 'Payment links, newest first, with cursor pagination; `status` filters' })
  @ApiOkResponse({ type: pageOf(PaymentLinkSchema) })
  list(@Query() q: ListPaymentLinksQuery): Promise<Page<PaymentLinkView>> {
    return this.links.list(q);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'One payment link, with the shopOrderId of every invoice made from it',
  })
  @ApiOkResponse({ type: PaymentLinkSchema })
  @ApiParam(LINK_ID)
  @ApiProblems(404)
  get(@Param('id') id: string): Promise<PaymentLinkView> {
    return this.links.get(id);
  }

  @Post(':id/deactivate')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Deactivate a payment link: its page takes no new payment',
    description:
      'Takes no body (or {}). Event `payment_link.deactivated`; a repeat answers the link with no second event. A paid ' +
      'or expired link is 409. A payment already under way on the gateway page is not undone.',
  })
  @ApiOkResponse({ type: PaymentLinkSchema })
  @ApiParam(LINK_ID)
  @ApiProblems(400, 404, 409)
  deactivate(
    @Param('id') id: string,
    @Body() body: unknown,
    @Acting() by: Actor,
  ): Promise<PaymentLinkView> {
    if (body !== undefined && body !== null) {
      const fields = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : ['body'];
      if (fields.length > 0)
        throw new ValidationFailed(
          fields.map((field) => ({ field, message: 'is not accepted: deactivate takes no fields' })),
        );
    }
    return this.links.deactivate(id, by);
  }
}
