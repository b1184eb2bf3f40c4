import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import { ValidationFailed } from '../../common/errors';
import { logger } from '../../common/logger';
import { Public } from '../../common/public.decorator';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { dailyReportCsv, type DailyReport, reportFileName } from '../../reports/daily-report';
import { ReportsService } from '../../reports/reports.service';
import {
  consoleList,
  exportFileName,
  listFilters,
  listHref,
  writeListCsv,
  type ConsoleList,
} from '../console-lists';
import { ConsoleSavedSearches } from '../console-saved-searches';
import { ConsoleService } from '../console.service';
import type { ConsoleSession } from '../console-sessions';
import { ConsoleWeb, field, params, query, queryText } from '../console-web';
import { clock } from '../../common/clock';

/** Today's date (YYYY-MM-DD) in a time zone. */
export function dayIn(now: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(now);
}

/** The daily report, list exports as CSV, and saved searches. */
@ApiExcludeController()
@Public()
@Controller()
export class ConsoleReportsController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly web: ConsoleWeb,
    private readonly data: ConsoleService,
    private readonly reports: ReportsService,
    private readonly savedSearches: ConsoleSavedSearches,
  ) {}

  /** The daily books for a chosen day: today so far in REPORT_TIMEZONE by default. */
  @Get('admin/ui/reports/daily')
  async dailyReport(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const date = queryText(req, 'date', 10) ?? dayIn(clock.date(), this.reports.timeZone);
    const got = await this.report(date);
    await this.web.send(
      res,
      'reports',
      {
        title: 'Daily report',
        session,
        active: '/admin/ui/reports/daily',
        timeZone: this.reports.timeZone,
        date,
        report: typeof got === 'string' ? null : got,
        error: typeof got === 'string' ? got : null,
      },
      typeof got === 'string' ? 400 : 200,
    );
  }

  /** The same report as the CSV the API gives, as a download. */
  @Get('admin/ui/reports/daily.csv')
  async dailyReportCsv(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const got = await this.report(queryText(req, 'date', 10) ?? '');
    if (typeof got === 'string') {
      await this.web.message(res, 400, 'No report', got, session, '/admin/ui/reports/daily');
      return;
    }
    res
      .status(200)
      .header('Cache-Control', 'no-store')
      .header('Content-Disposition', `attachment; filename="${reportFileName(got)}"`)
      .type('text/csv; charset=utf-8')
      .send(dailyReportCsv(got));
  }

  /** The report, or what is wrong with the day asked for. */
  private async report(date: string): Promise<DailyReport | string> {
    try {
      return await this.reports.daily(date);
    } catch (e) {
      if (e instanceof ValidationFailed)
        return `The day ${e.errors.map((x) => x.message).join('; ')} (YYYY-MM-DD).`;
      throw e;
    }
  }

  /** The list of a `:list` path segment, or a 404 page. */
  private async consoleList(
    req: FastifyRequest,
    res: FastifyReply,
    session: ConsoleSession,
  ): Promise<ConsoleList | null> {
    const list = consoleList(String(params(req).list));
    if (!list) await this.web.message(res, 404, 'Not found', 'There is no such list.', session, '/admin');
    return list ?? null;
  }

  /**
   * Every row of a list that matches the filters, as CSV, read and sent batch by batch (never the
   * whole list in memory), at most EXPORT_CAP rows. Amounts with their currency's minor-unit digits, times ISO UTC,
   * accounts masked; text a spreadsheet would run as a formula starts with an apostrophe.
   */
  @Get('admin/ui/lists/:list/export.csv')
  async exportList(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const list = await this.consoleList(req, res, session);
    if (!list) return;
    const filters = listFilters(list, query(req));
    if ('error' in filters) {
      await this.web.message(res, 400, 'Not exported', filters.error, session, list.path);
      return;
    }
    // Streamed by hand: the file is written as the rows are read, so the reply is taken over
    // (hijack) with the headers it holds so far (the edge's security headers among them).
    const headers = {
      ...res.getHeaders(),
      'cache-control': 'no-store',
      'content-disposition': `attachment; filename="${exportFileName(list)}"`,
      'content-type': 'text/csv; charset=utf-8',
    };
    res.hijack();
    const out = res.raw;
    out.writeHead(200, headers as OutgoingHttpHeaders);
    const write = (chunk: string): Promise<void> =>
      new Promise((resolve, reject) => {
        if (out.destroyed) return reject(new Error('the client went away'));
        if (out.write(chunk)) return resolve();
        const done = (): void => {
          out.off('drain', done);
          out.off('close', done);
          if (out.destroyed) reject(new Error('the client went away'));
          else resolve();
        };
        out.on('drain', done);
        out.on('close', done);
      });
    try {
      const got = await writeListCsv(list, { db: this.data.db, config: this.config }, filters, write);
      out.end();
      logger.info({ keyId: session.keyId, list: list.name, ...got }, 'console list exported');
    } catch (e) {
      // The status line is sent: an unfinished file must not look complete.
      logger.warn(
        { keyId: session.keyId, list: list.name, err: e instanceof Error ? e.message : String(e) },
        'console export stopped',
      );
      out.destroy();
    }
  }

  /** Saves the posted filters under a name for this admin key (private to the key). */
  @Post('admin/ui/lists/:list/searches')
  async saveSearch(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const list = await this.consoleList(req, res, session);
    if (!list) return;
    const body = (req.body ?? {}) as Record<string, unknown>;
    const filters = listFilters(list, body, ['_csrf', 'name']);
    const name = field(req, 'name', 100).trim();
    const none = !('error' in filters) && Object.values(filters).every((v) => String(v ?? '').trim() === '');
    if ('error' in filters || name === '' || none) {
      const why =
        'error' in filters
          ? filters.error
          : none
            ? 'There are no filters to save: choose some first.'
            : 'name: a name of 1 to 100 characters';
      await this.web.message(res, 400, 'Search not saved', why, session, list.path);
      return;
    }
    if ((await this.savedSearches.save(session.keyId, list.name, name, filters)) === 'full') {
      await this.web.message(
        res,
        409,
        'Search not saved',
        'You have as many saved searches of this list as it keeps: delete one first.',
        session,
        list.path,
      );
      return;
    }
    res.redirect(listHref(list, filters), 303);
  }

  @Post('admin/ui/lists/:list/searches/:id/delete')
  async deleteSearch(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const list = await this.consoleList(req, res, session);
    if (!list) return;
    if (!(await this.savedSearches.remove(session.keyId, list.name, String(params(req).id)))) {
      await this.web.message(res, 404, 'Not deleted', 'You have no such saved search.', session, list.path);
      return;
    }
    res.redirect(list.path, 303);
  }
}
