import accepts from 'accepts';
import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminOnly } from '../common/access.decorator';
import { ApiProblems } from '../common/openapi';
import { type DailyReport, dailyReportCsv, reportFileName } from './daily-report';
import { DailyReportQuery, DailyReportSchema } from './dto/daily-report.dto';
import { ReportsService } from './reports.service';

const CSV_EXAMPLE =
  'section,currency,count,amount,not_computed,object_type,object_id,status,current_status,created_at,age_seconds,reason,raised_at,flagged_at_end,flagged_now\r\n' +
  'payments,643,3,1500.00,,,,,,,,,,,\r\n' +
  'ledger:sales,643,,-1500.00,,,,,,,,,,,\r\n' +
  'open_total,,1,,,,,,,,,,,,\r\n' +
  'open,643,,500.00,,invoice,order-1001,awaiting_payer,succeeded,2026-01-15T18:02:11.000Z,21469,,,,\r\n';

/** Whether the caller asked for CSV: `format` wins, else the Accept header decides (JSON by default). */
export function wantsCsv(req: FastifyRequest, format: 'json' | 'csv' | undefined): boolean {
  if (format !== undefined) return format === 'csv';
  return accepts(req.raw).type(['application/json', 'text/csv']) === 'text/csv';
}

@ApiTags('admin')
@ApiBearerAuth()
@ApiExtraModels(DailyReportSchema)
@AdminOnly()
@Controller('admin/reports')
export class ReportsController {
  constructor(private readonly reports: ReportsService) {}

  @Get('daily')
  @ApiOperation({
    summary:
      'The daily books: per currency, what was paid, refunded and paid out, and the fees; what was still open and flagged at the day’s end',
    description:
      'The day is the calendar day in REPORT_TIMEZONE. Sums are exact (computed in numeric). CSV (Accept: text/csv or format=csv) is one RFC 4180 table whose `section` column names each row; text cells a spreadsheet would run as a formula start with an apostrophe.',
  })
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse({
    content: {
      'application/json': { schema: { $ref: getSchemaPath(DailyReportSchema) } },
      'text/csv': { schema: { type: 'string' }, example: CSV_EXAMPLE },
    },
  })
  @ApiProblems(400)
  async daily(
    @Query() q: DailyReportQuery,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<DailyReport | string> {
    const report = await this.reports.daily(q.date);
    res.header('Cache-Control', 'no-store').header('Vary', 'Accept');
    if (!wantsCsv(req, q.format)) return report;
    res
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="${reportFileName(report)}"`);
    return dailyReportCsv(report);
  }
}
