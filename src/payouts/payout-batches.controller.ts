import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Scopes } from '../common/access.decorator';
import { PAYOUT_BATCH_ROUTE } from '../common/input-guard';
import { Acting, type Actor } from '../common/actor';
import { sendStoredAnswer } from '../common/stored-answer';
import { ApiProblems } from '../common/openapi';
import {
  BatchRowsQuery,
  PayoutBatchCancelSchema,
  PayoutBatchDryRunSchema,
  PayoutBatchRequestSchema,
  PayoutBatchSummarySchema,
  PayoutBatchWithRowsSchema,
  SubmitBatchQuery,
} from './dto/payout-batch.schemas';
import { PayoutBatchesService } from './payout-batches.service';

const CSV_EXAMPLE =
  'shopPaymentId,amount,amountType,shopCurrency,payway,account,accountDetails.name\n' +
  'payout-2001,1000.00,ps_amount,643,card_rub,4111111111111111,Ivan Petrov\n';

@ApiTags('payouts')
@ApiBearerAuth()
@Scopes('payouts')
@Controller('payouts/batches')
export class PayoutBatchesController {
  constructor(private readonly batches: PayoutBatchesService) {}

  @Post()
  // The edge checks this same rule before the body is read (src/common/upload-gate.ts).
  @Scopes(...PAYOUT_BATCH_ROUTE.scopes)
  @ApiOperation({
    summary: 'Many payout creates in one request (at most 10,000 rows), sent in the background',
    description:
      'JSON {batchId?, rows} or text/csv: a header row of the create fields (accountDetails.<name> and ' +
      'metadata.<key> for object fields; an empty cell is an absent field; batchId in the query). Every row is ' +
      'checked as POST /payouts checks its body; any invalid row is a 400 naming rows[n].field (rows from 1) and ' +
      'nothing is stored. A real batch is stored at once (202) and each row then goes through the create path ' +
      '(idempotent by its shopPaymentId) with bounded concurrency; GET /payouts/batches/{batchId} reports it and ' +
      'the event payout_batch.completed comes when every row has an answer. ?dryRun=true answers 200 per row ' +
      "(create rules, the payway's bounds and account patterns, repeated and already used shopPaymentIds) and " +
      'stores and sends nothing; its rows are paged (limit, cursor: send the same body again) and its answer is ' +
      'smaller than the request, with at most 20 errors a row. A CSV header with more metadata.<key> or ' +
      'accountDetails.<name> columns than a JSON object may have keys is refused before any row is read. The ' +
      'same batchId with the same rows replays (Idempotent-Replayed: true); with other rows it is a 409 ' +
      'idempotency conflict that names no row, counted toward IDEMPOTENCY_CONFLICT_LIMIT (then the batchId is ' +
      'locked). Rows are created under the submitting key. Bodies up to 5 MB; larger is 413. The key\'s scope is ' +
      'checked before the body is read (403), and at most BATCH_UPLOADS_PER_KEY uploads of one key run at once ' +
      '(more: 429 with Retry-After); the body is parsed a slice at a time, never holding the service.',
  })
  @ApiConsumes('application/json', 'text/csv')
  @ApiExtraModels(PayoutBatchRequestSchema)
  @ApiBody({
    schema: { $ref: getSchemaPath(PayoutBatchRequestSchema) },
    examples: {
      json: {
        value: {
          batchId: 'payroll-2026-01',
          rows: [
            {
              shopPaymentId: 'payout-2001',
              amount: '1000.00',
              amountType: 'ps_amount',
              shopCurrency: 643,
              payway: 'card_rub',
              account: '4111111111111111',
            },
          ],
        },
      },
      csv: { value: CSV_EXAMPLE },
    },
  })
  @ApiAcceptedResponse({
    type: PayoutBatchSummarySchema,
    description: 'Stored; sent in the background',
  })
  @ApiOkResponse({
    type: PayoutBatchDryRunSchema,
    description: 'dryRun=true: per-row results, nothing stored',
  })
  @ApiProblems(409, 413)
  async submit(
    @Body() body: unknown,
    @Query() q: SubmitBatchQuery,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
    @Acting() by: Actor,
  ): Promise<unknown> {
    const input = await this.batches.parse(body, isCsv(req.headers['content-type']), q.batchId);
    if (q.dryRun === 'true') {
      res.status(200);
      return this.batches.dryRun(input, {
        limit: q.limit,
        cursor: q.cursor,
        bodyBytes: bodyBytes(req.headers['content-length'], body),
      });
    }
    const stored = await this.batches.submit(input, by);
    return sendStoredAnswer(req, res, stored);
  }

  @Get(':batchId')
  @ApiOperation({
    summary: "A batch: counts by state, its payouts' statuses, and its rows in order (paged)",
  })
  @ApiParam({ name: 'batchId', example: 'payroll-2026-01' })
  @ApiOkResponse({ type: PayoutBatchWithRowsSchema })
  @ApiProblems(404)
  get(@Param('batchId') batchId: string, @Query() q: BatchRowsQuery): Promise<unknown> {
    return this.batches.get(batchId, q);
  }

  @Post(':batchId/cancel')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Cancel every row of a batch not yet sent; rows already sent go on',
    description:
      'Rows the background sending has not begun become cancelled (never sent; event payout.cancelled), and so ' +
      'do payouts of the batch still waiting for approval. Answers the batch with its counts and cancelledNow. ' +
      'Repeating it is harmless.',
  })
  @ApiParam({ name: 'batchId', example: 'payroll-2026-01' })
  @ApiOkResponse({ type: PayoutBatchCancelSchema })
  @ApiProblems(404)
  cancel(@Param('batchId') batchId: string, @Acting() by: Actor): Promise<unknown> {
    return this.batches.cancel(batchId, by);
  }
}

/** The request's size, for the dry run's answer to stay below it. */
function bodyBytes(contentLength: string | undefined, body: unknown): number {
  const declared = Number(contentLength);
  if (Number.isSafeInteger(declared) && declared > 0) return declared;
  return Buffer.byteLength(typeof body === 'string' ? body : JSON.stringify(body ?? ''));
}

function isCsv(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.split(';')[0].trim().toLowerCase() === 'text/csv';
}
