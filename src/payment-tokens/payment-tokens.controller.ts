import { Controller, Delete, Get, HttpCode, Param, Query } from '@nestjs/common';
import { Acting, type Actor } from '../common/actor';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Scopes } from '../common/access.decorator';
import { ApiProblems, pageOf } from '../common/openapi';
import type { Page } from '../common/pagination';
import { ListPaymentTokensQuery, PaymentTokenView } from './dto/payment-token.view';
import { PaymentTokensService } from './payment-tokens.service';

@ApiTags('payments')
@ApiBearerAuth()
@Scopes('payments')
@Controller('payment-tokens')
export class PaymentTokensController {
  constructor(private readonly tokens: PaymentTokensService) {}

  @Get()
  @ApiOperation({
    summary: "Recurrent tokens issued to this shop's invoices, newest first (masked; never the token)",
    description:
      'One entry per token: a token issued again by a later invoice is the same entry. `status` is `expired` ' +
      "once the gateway's expiry has passed, `revoked` after DELETE.",
  })
  @ApiOkResponse({ type: pageOf(PaymentTokenView) })
  list(@Query() q: ListPaymentTokensQuery): Promise<Page<PaymentTokenView>> {
    return this.tokens.list(q);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Revoke a token (the customer withdrew consent)',
    description:
      'From then on an invoice naming the token (`paymentToken`, or `paymentTokenFrom` an invoice issued it) is ' +
      '409 `token-revoked`, with no gateway call and nothing written. Idempotent: revoking a revoked token answers ' +
      '200 with it and no second event. Event `payment_token.revoked`, audited with the acting key id.',
  })
  @ApiParam({ name: 'id', format: 'uuid', example: '0b6f6a52-3c1e-4a8f-9a7e-2d5c1f0e9b11' })
  @ApiOkResponse({ description: 'The token, revoked', type: PaymentTokenView })
  @ApiProblems(404)
  revoke(@Param('id') id: string, @Acting() by: Actor): Promise<PaymentTokenView> {
    return this.tokens.revoke(id, by);
  }
}
