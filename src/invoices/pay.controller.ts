import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import {
  ApiFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { ApiProblems } from '../common/openapi';
import { PublicPerAddressLimited } from '../common/public.decorator';
import { InvoicesService } from './invoices.service';

/**
 * CSP of the payer page: nothing loads, only the one script with this response's nonce runs, no
 * framing. No form-action: the form's target (and wherever the gateway redirects that POST, e.g.
 * a card issuer's 3-D Secure page) is the gateway's to choose, and browsers apply form-action to
 * those redirects too.
 */
const payPageCsp = (nonce: string): string =>
  `default-src 'none'; script-src 'nonce-${nonce}'; base-uri 'none'; frame-ancestors 'none'`;

/** The payer's entry point (outside /api/v1): where `payUrl` leads. */
@ApiTags('payer')
@PublicPerAddressLimited('pay')
@Controller()
export class PayController {
  constructor(private readonly invoices: InvoicesService) {}

  @Get('pay/:shopOrderId')
  @ApiOperation({
    summary: 'Sends the payer on to the gateway',
    description:
      'POST redirect: an HTML form that posts itself to the redirect url (one hidden input per parameter); ' +
      'GET redirect: 302 to url?query. A final invoice shows a status page (paid / not paid); a redirect address ' +
      "that is not http(s) shows an error page and flags the invoice. t must be the invoice's pay token, otherwise " +
      '404; other query parameters (utm_… and the like) are ignored. Rate-limited per address.',
  })
  @ApiParam({ name: 'shopOrderId', example: 'order-1001' })
  @ApiQuery({
    name: 't',
    required: true,
    description: "The invoice's pay token, from payUrl",
    example: 'Qm9vay1vcmRlcg',
  })
  @ApiOkResponse({
    description:
      'An HTML page: the form that posts itself to the gateway, or a status page (paid / not paid)',
    content: {
      'text/html': {
        schema: { type: 'string' },
        example:
          '<!doctype html><form method="post" action="https://pay.example/gateway/pay/98765">…</form>',
      },
    },
  })
  @ApiFoundResponse({ description: 'Location: the gateway page (GET redirect)' })
  @ApiProblems(404, 429)
  async pay(
    @Param('shopOrderId') shopOrderId: string,
    @Req() req: FastifyRequest,
    @Res() res: FastifyReply,
  ): Promise<void> {
    // Read by hand, not through a DTO: links pick up parameters of other tools (utm_source…).
    const t = (req.query as Record<string, unknown>).t;
    const token = typeof t === 'string' && t.length <= 128 ? t : undefined;
    const nonce = randomBytes(16).toString('base64');
    const step = await this.invoices.payerStep(shopOrderId, token, nonce);
    // The URL carries a secret: keep it out of caches and Referer headers.
    res.header('Cache-Control', 'no-store').header('Referrer-Policy', 'no-referrer');
    if (step.kind === 'redirect') {
      void res.redirect(step.location, 302);
      return;
    }
    void res
      .header('Content-Security-Policy', payPageCsp(nonce))
      .status(step.kind === 'blocked' ? 502 : 200)
      .type('text/html; charset=utf-8')
      .send(step.html);
  }
}
