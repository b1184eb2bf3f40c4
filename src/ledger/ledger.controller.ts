import { Body, Controller, Get, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminOnly } from '../common/access.decorator';
import { Acting, type Actor } from '../common/actor';
import { ApiProblems } from '../common/openapi';
import { wantsCsv } from '../reports/reports.controller';
import {
  AdjustmentDto,
  BalancesQuery,
  BalancesView,
  EntriesQuery,
  EntryPage,
  EntryView,
  LedgerCheckView,
} from './dto/ledger.dto';
import { entriesCsv, LedgerService } from './ledger.service';

@ApiTags('admin')
@ApiBearerAuth()
@ApiExtraModels(EntryPage)
@AdminOnly()
@Controller('admin/ledger')
export class LedgerController {
  constructor(private readonly ledger: LedgerService) {}

  @Get('balances')
  @ApiOperation({ summary: 'Every account’s balance per currency (debits − credits) at a time' })
  @ApiOkResponse({ type: BalancesView })
  @ApiProblems(400)
  balances(@Query() q: BalancesQuery): Promise<BalancesView> {
    return this.ledger.balances(q.at);
  }

  @Get('check')
  @ApiOperation({
    summary:
      'Every object whose ledger entries do not sum to the position its status implies (empty when the books follow the state)',
  })
  @ApiOkResponse({ type: LedgerCheckView })
  async check(@Res({ passthrough: true }) res: FastifyReply): Promise<LedgerCheckView> {
    res.header('Cache-Control', 'no-store');
    return this.ledger.check();
  }

  @Get('entries')
  @ApiOperation({
    summary: 'Ledger entries with their postings, newest first; CSV a row per posting',
  })
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse({
    content: {
      'application/json': { schema: { $ref: getSchemaPath(EntryPage) } },
      'text/csv': {
        schema: { type: 'string' },
        example:
          'id,created_at,kind,object_type,object_id,event_id,key_id,note,account,currency,amount\r\n' +
          '42,2026-01-15T10:00:00.000Z,invoice.succeeded,invoice,order-1001,evt_01900000-0000-7000-8000-000000000000,,,gateway_payment_shop,643,100.00\r\n' +
          '42,2026-01-15T10:00:00.000Z,invoice.succeeded,invoice,order-1001,evt_01900000-0000-7000-8000-000000000000,,,sales,643,-100.00\r\n',
      },
    },
  })
  @ApiProblems(400)
  async entries(
    @Query() q: EntriesQuery,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<EntryPage | string> {
    const page = await this.ledger.entries(q);
    res.header('Cache-Control', 'no-store').header('Vary', 'Accept');
    if (!wantsCsv(req, q.format)) return page;
    if (page.nextCursor !== null) res.header('X-Next-Cursor', page.nextCursor);
    res.type('text/csv; charset=utf-8');
    return entriesCsv(page.items);
  }

  @Post('adjustments')
  @HttpCode(201)
  @ApiOperation({
    summary:
      'Post an adjustment an operator explains (top-up, gateway fee, correction): the account moves by amount, `adjustments` by its opposite',
  })
  @ApiCreatedResponse({ type: EntryView })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'Optional, 1–255 visible ASCII characters, per admin key: the same request posts once (a repeat answers the first entry, with `Idempotent-Replayed: true`); a different request under the same key is a 409',
  })
  @ApiProblems(400, 403, 409)
  async adjust(
    @Body() body: AdjustmentDto,
    @Acting() by: Actor,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<EntryView> {
    const { entry, replayed } = await this.ledger.adjust(
      body,
      by.keyId,
      req.headers['idempotency-key'],
    );
    if (replayed) res.header('Idempotent-Replayed', 'true');
    return entry;
  }
}
