import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../common/errors';
import { Public } from '../common/public.decorator';
import { sameSecret } from '../common/sha256';
import { renderPage, type PageData } from '../console/console-render';
import { ConsoleSessions, type ConsoleSession } from '../console/console-sessions';
import { ReconciliationService } from '../reconciliation/reconciliation.service';
import { LedgerService } from './ledger.service';

/**
 * The console's Ledger page (balances; entries, filtered by object) and Reconciliations pages
 * (run, list, one run's items linking to their objects). Signed-in console sessions only, as the
 * rest of the console; the run is a CSRF-checked form.
 */
const SESSION_COOKIE = 'console_session';

function cookie(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string' || header.length > 8192) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function text(source: unknown, name: string, max = 255): string | undefined {
  const v =
    source && typeof source === 'object' ? (source as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' && v.length > 0 && v.length <= max ? v : undefined;
}

@ApiExcludeController()
@Public()
@Controller()
export class LedgerConsoleController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly ledger: LedgerService,
    private readonly reconciliations: ReconciliationService,
  ) {}

  private send(res: FastifyReply, view: string, data: PageData, status = 200): void {
    res
      .status(status)
      .header('Cache-Control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(renderPage(view, data));
  }

  private async session(req: FastifyRequest, res: FastifyReply): Promise<ConsoleSession | null> {
    const s = await this.sessions.find(cookie(req, SESSION_COOKIE));
    if (!s) res.redirect('/admin/login', 303);
    return s;
  }

  @Get('admin/ui/ledger')
  async ledgerPage(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const objectType = text(req.query, 'objectType', 16);
    const objectId = text(req.query, 'objectId');
    let error: string | null = null;
    let entries = null;
    try {
      entries = await this.ledger.entries({
        objectType:
          objectType && ['invoice', 'refund', 'payout'].includes(objectType)
            ? objectType
            : undefined,
        objectId,
        cursor: text(req.query, 'cursor', 200),
        limit: 100,
      });
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      error = e.message;
    }
    this.send(
      res,
      'ledger',
      {
        title: 'Ledger',
        session,
        active: '/admin/ui/ledger',
        balances: (await this.ledger.balances()).balances,
        entries,
        objectType: objectType ?? '',
        objectId: objectId ?? '',
        error,
      },
      error ? 400 : 200,
    );
  }

  @Get('admin/ui/reconciliations')
  async list(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    this.send(res, 'reconciliations', {
      title: 'Reconciliations',
      session,
      active: '/admin/ui/reconciliations',
      items: await this.reconciliations.list(100),
      defaultDay: this.reconciliations.defaultDay(),
      error: null,
    });
  }

  @Post('admin/ui/reconciliations')
  async run(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.sessions.find(cookie(req, SESSION_COOKIE));
    if (!session) return void res.redirect('/admin/login', 303);
    const token = text(req.body, '_csrf', 128);
    if (!token || !sameSecret(token, session.csrfToken)) {
      return this.send(
        res,
        'message',
        {
          title: 'Form refused',
          text: 'The form was missing its security token. Reload the page and try again.',
          session,
        },
        403,
      );
    }
    try {
      const rec = await this.reconciliations.run(text(req.body, 'date', 10), session.keyId);
      res.redirect(`/admin/ui/reconciliations/${rec.id}`, 303);
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      this.send(
        res,
        'reconciliations',
        {
          title: 'Reconciliations',
          session,
          active: '/admin/ui/reconciliations',
          items: await this.reconciliations.list(100),
          defaultDay: this.reconciliations.defaultDay(),
          error: e.message,
        },
        e.status,
      );
    }
  }

  @Get('admin/ui/reconciliations/:id')
  async detail(
    @Param('id') id: string,
    @Req() req: FastifyRequest,
    @Res() res: FastifyReply,
  ): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    try {
      const rec = await this.reconciliations.get(id);
      this.send(res, 'reconciliation', {
        title: `Reconciliation of ${rec.date}`,
        session,
        active: '/admin/ui/reconciliations',
        rec,
      });
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      this.send(
        res,
        'message',
        { title: 'Not found', text: e.message, session, back: '/admin/ui/reconciliations' },
        e.status,
      );
    }
  }
}
