import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { Acting, type Actor } from '../common/actor';
import {
  ApiBearerAuth,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { AttentionObject } from '../common/attention';
import { NotFound } from '../common/errors';
import { ApiProblems } from '../common/openapi';
import { InvoiceSchema } from '../invoices/dto/invoice.schemas';
import { PayoutView } from '../payouts/dto/payout.view';
import { RefundView } from '../refunds/dto/refund.view';
import { AttentionService } from './attention.service';
import { AttentionList, AttentionQuery, ResolveAttentionDto } from './dto/resolve-attention.dto';
import { AdminOnly } from '../common/access.decorator';

const KINDS: Record<string, AttentionObject> = {
  invoices: 'invoice',
  refunds: 'refund',
  payouts: 'payout',
};

@ApiTags('admin')
@ApiBearerAuth()
@ApiExtraModels(InvoiceSchema, RefundView, PayoutView)
@AdminOnly()
@Controller('admin')
export class AttentionController {
  constructor(private readonly attention: AttentionService) {}

  @Get('attention')
  @ApiOperation({
    summary: 'Everything flagged for an operator (invoices, refunds, payouts), oldest first',
  })
  @ApiOkResponse({ type: AttentionList })
  async list(@Query() q: AttentionQuery): Promise<AttentionList> {
    return { items: await this.attention.list(q.limit) };
  }

  @Post(':kind/:id/resolve')
  @HttpCode(200)
  @ApiParam({ name: 'kind', enum: Object.keys(KINDS) })
  @ApiParam({ name: 'id', description: "The shop's id of the object" })
  @ApiOperation({
    summary:
      'Resolve attention: recheck with the gateway now, accept a final status the gateway does not contradict, charge / unhold a held invoice, or unlock an id locked by conflicting repeats (idempotency-locked)',
  })
  @ApiOkResponse({
    description:
      'The object as its GET returns it. Recheck keeps the flag (and the watch) unless the gateway settles the object or confirms its final status; accept clears it; unlock lifts the lock (its create takes repeats again) and resolves the flag its conflicting repeats raised (409 not-locked when there is no lock)',
    content: {
      'application/json': {
        schema: {
          oneOf: [
            { $ref: getSchemaPath(InvoiceSchema) },
            { $ref: getSchemaPath(RefundView) },
            { $ref: getSchemaPath(PayoutView) },
          ],
        },
        example: {
          shopRefundId: 'refund-1001-1',
          shopOrderId: 'order-1001',
          amount: '50.00',
          currency: 643,
          status: 'SUCCESS',
          errorCode: null,
          createdAt: '2026-01-15T10:05:00.000Z',
          updatedAt: '2026-01-15T11:00:00.000Z',
          processedAt: '2026-01-15T11:00:00.000Z',
          needsAttention: false,
          attentionReason: null,
        },
      },
    },
  })
  @ApiProblems(400, 404, 409)
  resolve(
    @Param('kind') kind: string,
    @Param('id') id: string,
    @Body() dto: ResolveAttentionDto,
    @Acting() by: Actor,
  ): Promise<unknown> {
    const object = KINDS[kind];
    if (object === undefined) throw new NotFound('Route', `admin/${kind}`);
    return this.attention.resolve(object, id, dto, by);
  }
}
