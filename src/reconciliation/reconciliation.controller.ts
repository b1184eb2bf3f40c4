import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminOnly } from '../common/access.decorator';
import { Acting, type Actor } from '../common/actor';
import { ApiProblems } from '../common/openapi';
import { csvCell } from '../reports/daily-report';
import { wantsCsv } from '../reports/reports.controller';
import { type Reconciliation, ReconciliationService } from './reconciliation.service';

export class RunReconciliationDto {
  @ApiPropertyOptional({ description: 'YYYY-MM-DD in REPORT_TIMEZONE; default the last finished day' })
  @IsOptional()
  @IsString()
  date?: string;
}

export class ReconciliationListQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;
}

export class ReconciliationQuery {
  @ApiPropertyOptional({ enum: ['json', 'csv'] })
  @IsOptional()
  @IsIn(['json', 'csv'])
  format?: 'json' | 'csv';
}

const CSV_COLUMNS = ['kind', 'object_type', 'object_id', 'account', 'currency', 'ours', 'gateway', 'amount'] as const;
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
  @ApiProblems(400, 403, 502)
  run(@Body() body: RunReconciliationDto, @Acting() by: Actor): Promise<Reconciliation> {
    return this.reconciliations.run(body?.date, by.keyId);
  }

  @Get()
  @ApiOperation({ summary: 'Reconciliations, newest first' })
  async list(@Query() q: ReconciliationListQuery): Promise<{ items: Reconciliation[] }> {
    return { items: await this.reconciliations.list(q.limit ?? 50) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'One reconciliation; format=csv for its items' })
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse({ description: 'The reconciliation' })
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
