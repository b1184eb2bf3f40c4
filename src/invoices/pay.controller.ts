import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../common/public.decorator';
import { PayPageQuery } from './dto/invoice-queries.dto';
import { InvoicesService } from './invoices.service';

/** The payer's entry point (outside /api/v1): where `payUrl` leads. */
@ApiTags('payer')
@Public()
@Controller()
export class PayController {
  constructor(private readonly invoices: InvoicesService) {}

  @Get('pay/:shopOrderId')
  @ApiOperation({
    summary: 'Sends the payer on to the gateway',
    description:
      'POST redirect: an HTML form that posts itself to the redirect url (one hidden input per parameter); ' +
      "GET redirect: 302 to url?query. t must be the invoice's pay token; otherwise 404.",
  })
  async pay(
    @Param('shopOrderId') shopOrderId: string,
    @Query() q: PayPageQuery,
    @Res() res: Response,
  ): Promise<void> {
    const step = await this.invoices.payerStep(shopOrderId, q.t);
    // The URL carries a secret: keep it out of caches and Referer headers.
    res.set('Cache-Control', 'no-store').set('Referrer-Policy', 'no-referrer');
    if (step.kind === 'redirect') {
      res.redirect(302, step.location);
      return;
    }
    res.status(200).type('html').send(step.html);
  }
}
