import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../common/errors';
import { Public } from '../../common/public.decorator';
import { LedgerService } from '../../ledger/ledger.service';
import { ReconciliationService } from '../../reconciliation/reconciliation.service';
import type { ConsoleSession } from '../console-sessions';
import { ConsoleWeb, field, queryText } from '../console-web';

const LEDGER_OBJECT_TYPES = ['invoice', 'refund', 'payout'];

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
    const objectType = queryText(req, 'objectType', 16);
    const objectId = queryText(req, 'objectId');
    let error: string | null = null;
    let entries = null;
    try {
      entries = await this.ledger.entries({
        objectType: objectType && LEDGER_OBJECT_TYPES.includes(objectType) ? objectType : undefined,
        objectId,
        cursor: queryText(req, 'cursor', 200),
        limit: 100,
      });
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      error = e.message;
    }
    await this.web.send(
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
