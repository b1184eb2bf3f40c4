import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { Scopes } from '../common/access.decorator';
import { Acting, type Actor } from '../common/actor';
import { REPLAYED_HEADER, ValidationFailed } from '../common/errors';
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

const KEY = /^[\x21-\x7e]{1,255}$/;

/** The create's Idempotency-Key: absent, or one header of printable ASCII (else a 400 naming it). */
function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header === 'string' && KEY.test(header)) return header;
  throw new ValidationFailed([
    { field: 'Idempotency-Key', message: 'must be one header of 1 to 255 printable ASCII characters' },
  ]);
}

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
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'Makes the create once: a repeat with the same key and fields answers the link as it is now (Idempotent-Replayed: true); other fields are 409 naming them. 1-255 printable ASCII characters.',
    example: 'link-2026-01-15-0001',
  })
  @ApiCreatedResponse({ type: PaymentLinkSchema })
  @ApiProblems(400, 409)
  async create(
    @Body() dto: CreatePaymentLinkDto,
    @Headers('idempotency-key') key: string | string[] | undefined,
    @Res({ passthrough: true }) res: FastifyReply,
    @Acting() by: Actor,
  ): Promise<PaymentLinkView> {
    const made = await this.links.create(dto, by, idempotencyKeyOf(key));
    if (made.replayed) res.header(REPLAYED_HEADER, 'true');
    return made.link;
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
