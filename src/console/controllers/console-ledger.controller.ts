import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseCurrencyInput } from '../../common/currency';
import { DomainError, ValidationFailed } from '../../common/errors';
import { logger } from '../../common/logger';
import { Public } from '../../common/public.decorator';
import { ACCOUNTS, LEDGER_OBJECT_TYPES } from '../../ledger/ledger.chart';
import { entriesCsv, LedgerService } from '../../ledger/ledger.service';
import type { EntryView } from '../../ledger/dto/ledger.dto';
import { itemsCsv } from '../../reconciliation/reconciliation.controller';
import { ReconciliationService } from '../../reconciliation/reconciliation.service';
import type { ConsoleSession } from '../console-sessions';
import { ConsoleWeb, field, queryText } from '../console-web';

/** The most entries one console download holds (the API pages past it). */
const ENTRIES_EXPORT_CAP = 10_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The Ledger page's filters as the form sends them, and what the service is asked. */
export interface LedgerFilter {
  objectType: string;
  objectId: string;
  account: string;
  currency: string;
  from: string;
  to: string;
}

/** A calendar day's start in UTC, or null when it is not a real YYYY-MM-DD day. */
function dayStart(day: string): Date | null {
  if (!DAY.test(day)) return null;
  const d = new Date(`${day}T00:00:00.000Z`);
  return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== day ? null : d;
}

/** The filters of a Ledger request, checked: the service's query, or what is wrong with them. */
export function ledgerQuery(
  f: LedgerFilter,
):
  | {
      query: {
        objectType?: string;
        objectId?: string;
        account?: string;
        currency?: number;
        from?: string;
        to?: string;
      };
    }
  | { error: string } {
  const currency = f.currency === '' ? undefined : parseCurrencyInput(f.currency);
  if (currency === null) return { error: 'Currency: a code such as 643 or RUB.' };
  if (f.account !== '' && !(ACCOUNTS as readonly string[]).includes(f.account))
    return { error: `Account: one of ${ACCOUNTS.join(', ')}.` };
  const from = f.from === '' ? undefined : dayStart(f.from);
  const to = f.to === '' ? undefined : dayStart(f.to);
  if (from === null || to === null) return { error: 'From and to: calendar days (YYYY-MM-DD).' };
  // `to` is a day, inclusive: entries before the next day's start.
  const end = to === undefined ? undefined : new Date(to.getTime() + 86_400_000);
  if (from !== undefined && end !== undefined && from >= end)
    return { error: 'From: a day on or before to.' };
  return {
    query: {
      objectType: (LEDGER_OBJECT_TYPES as readonly string[]).includes(f.objectType) ? f.objectType : undefined,
      objectId: f.objectId === '' ? undefined : f.objectId,
      account: f.account === '' ? undefined : f.account,
      currency,
      from: from?.toISOString(),
      to: end?.toISOString(),
    },
  };
}

function ledgerFilter(req: FastifyRequest): LedgerFilter {
  return {
    objectType: queryText(req, 'objectType', 16) ?? '',
    objectId: queryText(req, 'objectId') ?? '',
    account: queryText(req, 'account', 32) ?? '',
    currency: queryText(req, 'currency', 8) ?? '',
    from: queryText(req, 'from', 10) ?? '',
    to: queryText(req, 'to', 10) ?? '',
  };
}

/** The filters as a query string (the next page's link, the CSV link). */
function filterQuery(f: LedgerFilter): string {
  return Object.entries(f)
    .filter(([, v]) => v !== '')
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');
}

/**
 * The books in the console: the Ledger page (balances; entries, filtered by object) and the
 * Reconciliations pages (run, list, one run's items linking to their objects). Sessions, CSRF
 * and status messages are the console's own (console-web.ts), as on every other page.
 */
@ApiExcludeController()
@Public()
@Controller()
export class ConsoleLedgerController {
  constructor(
    private readonly web: ConsoleWeb,
    private readonly ledger: LedgerService,
    private readonly reconciliations: ReconciliationService,
  ) {}

  @Get('admin/ui/ledger')
  async ledgerPage(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const filter = ledgerFilter(req);
    const q = ledgerQuery(filter);
    let error: string | null = 'error' in q ? q.error : null;
    let entries = null;
    if ('query' in q) {
      try {
        entries = await this.ledger.entries({
          ...q.query,
          cursor: queryText(req, 'cursor', 200),
          limit: 100,
        });
      } catch (e) {
        if (!(e instanceof DomainError)) throw e;
        error = e.message;
      }
    }
    const reconciliation = queryText(req, 'reconciliation', 64);
    const query = filterQuery(filter);
    await this.web.send(
      res,
      'ledger',
      {
        title: 'Ledger',
        session,
        active: '/admin/ui/ledger',
        balances: (await this.ledger.balances()).balances,
        entries,
        filter,
        accounts: ACCOUNTS,
        csvHref: `/admin/ui/ledger/entries.csv${query ? `?${query}` : ''}`,
        query,
        adjustNote: reconciliation ? `Explains reconciliation ${reconciliation}` : '',
        adjustableAccounts: ACCOUNTS.filter((a) => a !== 'adjustments'),
        error,
      },
      error ? 400 : 200,
    );
  }

  /** The entries the page's filters match, as the API's CSV (a row per posting), in this session. */
  @Get('admin/ui/ledger/entries.csv')
  async entriesCsv(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const q = ledgerQuery(ledgerFilter(req));
    if ('error' in q) {
      await this.web.message(res, 400, 'Not exported', q.error, session, '/admin/ui/ledger');
      return;
    }
    const items: EntryView[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.ledger.entries({ ...q.query, cursor, limit: 500 });
      items.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined && items.length < ENTRIES_EXPORT_CAP);
    logger.info({ keyId: session.keyId, entries: items.length }, 'console ledger exported');
    res
      .status(200)
      .header('Cache-Control', 'no-store')
      .header('Content-Disposition', 'attachment; filename="ledger-entries.csv"')
      .type('text/csv; charset=utf-8')
      .send(entriesCsv(items.slice(0, ENTRIES_EXPORT_CAP)));
  }

  /** An operator's adjustment from the Ledger page: the admin API's own rules, as the signed-in key. */
  @Post('admin/ui/ledger/adjustments')
  async adjust(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const body = {
      account: field(req, 'account', 32),
      currency: field(req, 'currency', 8),
      amount: field(req, 'amount', 64).trim(),
      note: field(req, 'note', 1000),
    };
    let entry: EntryView;
    try {
      entry = (await this.ledger.adjust(body, session.keyId)).entry;
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      const why =
        e instanceof ValidationFailed
          ? e.errors.map((x) => `${x.field} ${x.message}`).join('; ')
          : e.message;
      await this.web.message(res, e.status, 'Adjustment not posted', why, session, '/admin/ui/ledger#adjust');
      return;
    }
    await this.web.done(res, session, '/admin/ui/ledger', {
      kind: 'ok',
      text: `Adjustment ${entry.id} posted.`,
    });
  }

  /** A reconciliation's items as the API's CSV, in this session. */
  @Get('admin/ui/reconciliations/:id/items.csv')
  async itemsCsv(
    @Param('id') id: string,
    @Req() req: FastifyRequest,
    @Res() res: FastifyReply,
  ): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    try {
      const rec = await this.reconciliations.get(id);
      res
        .status(200)
        .header('Cache-Control', 'no-store')
        .header('Content-Disposition', `attachment; filename="reconciliation-${rec.date}-${rec.id}.csv"`)
        .type('text/csv; charset=utf-8')
        .send(itemsCsv(rec));
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      await this.web.message(res, e.status, 'Not found', e.message, session, '/admin/ui/reconciliations');
    }
  }

  @Get('admin/ui/reconciliations')
  async list(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    await this.listPage(res, session, null, 200);
  }

  @Post('admin/ui/reconciliations')
  async run(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    try {
      const rec = await this.reconciliations.run(
        field(req, 'date', 10) || undefined,
        session.keyId,
      );
      await this.web.done(res, session, `/admin/ui/reconciliations/${rec.id}`, {
        kind: 'ok',
        text: `Reconciliation of ${rec.date}: ${rec.status}.`,
      });
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      await this.listPage(res, session, e.message, e.status);
    }
  }

  @Get('admin/ui/reconciliations/:id')
  async detail(
    @Param('id') id: string,
    @Req() req: FastifyRequest,
    @Res() res: FastifyReply,
  ): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    try {
      const rec = await this.reconciliations.get(id);
      await this.web.send(res, 'reconciliation', {
        title: `Reconciliation of ${rec.date}`,
        session,
        active: '/admin/ui/reconciliations',
        rec,
      });
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      await this.web.message(
        res,
        e.status,
        'Not found',
        e.message,
        session,
        '/admin/ui/reconciliations',
      );
    }
  }

  private async listPage(
    res: FastifyReply,
    session: ConsoleSession,
    error: string | null,
    status: number,
  ): Promise<void> {
    await this.web.send(
      res,
      'reconciliations',
      {
        title: 'Reconciliations',
        session,
        active: '/admin/ui/reconciliations',
        items: await this.reconciliations.list(100),
        defaultDay: this.reconciliations.defaultDay(),
        error,
      },
      status,
    );
  }
}
