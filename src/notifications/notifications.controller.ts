import { Controller, Header, HttpCode, Post, Query, Req } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { ApiProblems } from '../common/openapi';
import type { FastifyRequest } from 'fastify';
import { Public } from '../common/public.decorator';
import { NotificationsService } from './notifications.service';

/**
 * The gateway's server notifications. Public (the gateway has no bearer key): trust comes from the
 * source address and the signature, checked in that order before anything is stored.
 */
@ApiTags('webhooks')
@Controller()
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @Public()
  @Post('webhooks/gateway')
  @HttpCode(200)
  @Header('Content-Type', 'text/plain; charset=utf-8')
  @ApiOperation({
    summary: 'Gateway server notification',
    description:
      'JSON or application/x-www-form-urlencoded (64 kB at most). Checked against NOTIFY_ALLOWED_IPS (403), verified on the raw ' +
      'values with the secret of the shop its shop_id names (401; a shop that is not configured: 403), stored in the notifications inbox and applied in one transaction; answered 200 text/plain "OK" only after it ' +
      'committed. A repeated notification changes nothing and is answered OK; "repeated" is decided on the kind (type) and ' +
      'exactly the values the signature covers. One that does not match the invoice is stored as rejected and answered OK ' +
      '(the gateway cannot fix it by retrying). A type other than invoice or refund (exactly so spelt; given twice, the ' +
      'same value), or one the body does not fit (refund: the body names shop_refund_id; invoice: shop_order_id and no ' +
      'shop_refund_id), is 400 notification-type-invalid naming type, and nothing is stored, so the gateway sends it ' +
      'again and its genuine copy is never taken as a repeat. A storage failure is a 5xx so the gateway retries.',
  })
  @ApiQuery({
    name: 'type',
    required: true,
    description: 'invoice | refund (anything else is 400 and nothing is stored)',
    schema: { type: 'string', example: 'invoice' },
  })
  @ApiConsumes('application/json', 'application/x-www-form-urlencoded')
  @ApiBody({
    description:
      "The gateway's notification fields, signed with the secret key of the shop its shop_id names",
    schema: {
      type: 'object',
      additionalProperties: { type: 'string' },
      example: {
        shop_id: '1001',
        shop_order_id: 'order-1001',
        invoice_id: '98765',
        status: 'success',
        amount: '100.10',
        currency: '643',
        sign: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      },
    },
  })
  @ApiOkResponse({
    description: 'Stored and applied',
    content: { 'text/plain': { schema: { type: 'string' }, example: 'OK' } },
  })
  @ApiProblems(400, 401, 403, 413)
  async receive(
    @Req() req: FastifyRequest,
    @Query('type') type?: string | string[],
  ): Promise<string> {
    await this.notifications.receive({
      type,
      rawBody: req.rawBody,
      contentType: req.headers['content-type'],
      sourceIp: req.ip,
    });
    return 'OK';
  }
}
