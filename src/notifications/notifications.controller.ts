import { Controller, Header, HttpCode, Post, Query, Req } from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
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
      'values (401), stored in the notifications inbox and applied in one transaction; answered 200 text/plain "OK" only after it ' +
      'committed. A repeated notification changes nothing and is answered OK; one that does not match the invoice is stored as ' +
      'rejected and answered OK (the gateway cannot fix it by retrying). A storage failure is a 5xx so the gateway retries.',
  })
  @ApiQuery({
    name: 'type',
    required: false,
    description: 'invoice | refund (other kinds are stored and ignored)',
  })
  @ApiConsumes('application/json', 'application/x-www-form-urlencoded')
  @ApiResponse({ status: 200, description: 'OK (text/plain)' })
  @ApiResponse({ status: 400, description: 'Unreadable body' })
  @ApiResponse({ status: 401, description: 'Signature does not verify' })
  @ApiResponse({ status: 403, description: 'Source address not allowed' })
  @ApiResponse({ status: 413, description: 'Body larger than 64 kB' })
  async receive(
    @Req() req: Request & { rawBody?: Buffer },
    @Query('type') type?: string | string[],
  ): Promise<string> {
    await this.notifications.receive({
      type: Array.isArray(type) ? type[0] : type,
      rawBody: req.rawBody,
      contentType: req.headers['content-type'],
      sourceIp: req.ip ?? req.socket.remoteAddress,
    });
    return 'OK';
  }
}
