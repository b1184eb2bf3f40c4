import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import {
  ReconciliationList,
  ReconciliationListQuery,
  ReconciliationQuery,
  ReconciliationSchema,
  RunReconciliationDto,
} from './dto/reconciliation.dto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminOnly } from '../common/access.decorator';
import { Acting, type Actor } from '../common/actor';
import { ApiProblems } from '../common/openapi';
import { csvCell } from '../reports/daily-report';
import { wantsCsv } from '../reports/reports.controller';
import { type Reconciliation, ReconciliationService } from './reconciliation.service';

const CSV_COLUMNS = [
  'kind',
  'object_type',
  'object_id',
  'account',
  'currency',
  'ours',
  'gateway',
  'amount',
] as const;
const CSV_TEXT = new Set(['kind', 'object_type', 'object_id', 'account', 'ours', 'gateway']);

/** A reconciliation's items as one RFC 4180 table. */
export function itemsCsv(r: Reconciliation): string {
  const lines: string[] = [CSV_COLUMNS.join(',')];
  for (const i of r.items) {
    const row: Record<string, string | number | null | undefined> = {
      kind: i.kind,
      object_type: i.objectType,
      object_id: i.objectId,
      account: i.account,
      currency: i.currency,
      ours: i.ours,
      gateway: i.gateway,
      amount: i.amount,
    };
    lines.push(CSV_COLUMNS.map((c) => csvCell(row[c], CSV_TEXT.has(c))).join(','));
  }
  return lines.join('\r\n') + '\r\n';
}

@ApiTags('admin')
@ApiBearerAuth()
@ApiExtraModels(ReconciliationSchema)
@AdminOnly()
@Controller('admin/reconciliations')
export class ReconciliationController {
  constructor(private readonly reconciliations: ReconciliationService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary:
      'Reconcile the books with the gateway now (a day in REPORT_TIMEZONE, default the last finished one): the agent shop balance and every object that moved that day or is not final',
  })
  @ApiCreatedResponse({ type: ReconciliationSchema })
  @ApiProblems(400, 403, 502, 503)
  run(@Body() body: RunReconciliationDto, @Acting() by: Actor): Promise<Reconciliation> {
    return this.reconciliations.run(body?.date, by.keyId);
  }

  @Get()
  @ApiOperation({ summary: 'Reconciliations, newest first' })
  @ApiOkResponse({ type: ReconciliationList })
  @ApiProblems(400)
  async list(@Query() q: ReconciliationListQuery): Promise<ReconciliationList> {
    return { items: await this.reconciliations.list(q.limit ?? 50) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'One reconciliation; format=csv for its items' })
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse({
    content: {
      'application/json': { schema: { $ref: getSchemaPath(ReconciliationSchema) } },
      'text/csv': {
        schema: { type: 'string' },
        example:
          'kind,object_type,object_id,account,currency,ours,gateway,amount\r\n' +
          'balance,,,agent_available,643,998960.00,998965.00,5.00\r\n',
      },
    },
  })
  @ApiProblems(404)
  async get(
    @Param('id') id: string,
    @Query() q: ReconciliationQuery,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<Reconciliation | string> {
    const r = await this.reconciliations.get(id);
    if (!wantsCsv(req, q.format)) return r;
    res.type('text/csv; charset=utf-8');
    return itemsCsv(r);
  }
}
