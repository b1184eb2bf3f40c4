import { Controller, Get, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ValidationFailed } from '../../common/errors';
import { Public } from '../../common/public.decorator';
import { createValidationPipe } from '../../common/validation';
import { DisputesService } from '../../disputes/disputes.service';
import { DISPUTE_STATUSES, type DisputeStatus } from '../../disputes/dispute.state';
import { CreateDisputeDto, ResolveDisputeDto } from '../../disputes/dto/create-dispute.dto';
import { ConsoleActions } from '../console-actions';
import { ConsoleWeb, field, LIST_PAGE, params, queryText, refusal } from '../console-web';

const invoicePage = (id: string): string => `/admin/ui/invoices/${encodeURIComponent(id)}`;

/** The words of a refused form: a field error names the field, a domain error says why. */
function why(e: unknown, fallback: string): string {
  if (e instanceof ValidationFailed) return e.errors.map((x) => `${x.field}: ${x.message}`).join('; ');
  return refusal(e, fallback);
}

/**
 * The disputes desk (open disputes, the nearest deadline first; or every dispute of a status)
 * and the forms that record a dispute from an invoice's page and resolve one: the admin API's
 * create and resolve, with their validation and rules, acting as the signed-in operator.
 */
@ApiExcludeController()
@Public()
@Controller()
export class ConsoleDisputesController {
  constructor(
    private readonly web: ConsoleWeb,
    private readonly actions: ConsoleActions,
    private readonly disputes: DisputesService,
  ) {}

  private readonly pipe = createValidationPipe();

  @Get('admin/ui/disputes')
  async desk(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const asked = queryText(req, 'status', 16);
    const status = (DISPUTE_STATUSES as readonly string[]).includes(asked ?? '')
      ? (asked as DisputeStatus)
      : 'open';
    const rows =
      status === 'open'
        ? await this.disputes.open(LIST_PAGE)
        : (await this.disputes.list({ status, limit: LIST_PAGE })).items;
    await this.web.send(res, 'disputes', {
      title: 'Disputes',
      session,
      active: '/admin/ui/disputes',
      status,
      statuses: DISPUTE_STATUSES,
      rows,
    });
  }

  /** Record a dispute from the invoice's page. */
  @Post('admin/ui/invoices/:id/disputes')
  async record(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const id = String(params(req).id);
    const back = invoicePage(id);
    const optional = (name: string, max: number): string | undefined => {
      const v = field(req, name, max).trim();
      return v === '' ? undefined : v;
    };
    try {
      const dto = (await this.pipe.transform(
        {
          amount: field(req, 'amount', 64).trim(),
          reason: field(req, 'reason', 500).trim(),
          reportedAt: field(req, 'reportedAt', 40).trim(),
          respondBy: optional('respondBy', 40),
          gatewayReference: optional('gatewayReference', 255),
          note: field(req, 'note', 1000).trim(),
        },
        { type: 'body', metatype: CreateDisputeDto, data: '' },
      )) as CreateDisputeDto;
      // The form's key is made when the page is shown: the same form sent twice is one dispute.
      const made = await this.disputes.create(
        id,
        dto,
        field(req, 'idempotencyKey', 255) || undefined,
        this.actions.operator(session),
      );
      const d = made.body;
      await this.web.done(res, session, back, {
        kind: 'ok',
        text: made.replayed
          ? `Dispute ${d.id} was already recorded by this form: ${d.amount}, now ${d.status}.`
          : `Dispute ${d.id} of ${d.amount} recorded: open until resolved.`,
      });
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      await this.web.message(res, e.status, 'Not recorded', why(e, 'The dispute was refused.'), session, back);
    }
  }

  /** Resolve a dispute (from the invoice's page or the desk): won, lost or accepted. */
  @Post('admin/ui/disputes/:id/resolve')
  async resolve(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const id = String(params(req).id);
    const from = field(req, 'from', 255);
    const back = from !== '' ? invoicePage(from) : '/admin/ui/disputes';
    try {
      const dto = (await this.pipe.transform(
        { outcome: field(req, 'outcome', 16), note: field(req, 'note', 1000).trim() },
        { type: 'body', metatype: ResolveDisputeDto, data: '' },
      )) as ResolveDisputeDto;
      const d = await this.disputes.resolve(id, dto, this.actions.operator(session));
      await this.web.done(res, session, back, {
        kind: 'ok',
        text: `Dispute ${d.id} resolved: ${d.status}${d.status === 'won' ? '' : ` (a chargeback of ${d.amount})`}.`,
      });
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      await this.web.message(res, e.status, 'Not resolved', why(e, 'The dispute could not be resolved.'), session, back);
    }
  }
}
