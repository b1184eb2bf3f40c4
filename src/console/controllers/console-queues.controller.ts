import { Controller, Get, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../common/errors';
import { Public } from '../../common/public.decorator';
import { PayoutBatchesService } from '../../payouts/payout-batches.service';
import { attentionActions, ConsoleActions } from '../console-actions';
import { ConsoleWeb, field, LIST_PAGE, params, queryText, refusal } from '../console-web';

/** Where a decision's answer goes: the payout's own page, or the approvals queue. */
function decisionBack(req: FastifyRequest, id: string): string {
  return field(req, 'from', 8) === 'page'
    ? `/admin/ui/payouts/${encodeURIComponent(id)}`
    : '/admin/ui/approvals';
}

/** The operator's queues: attention, approvals (with Approve / Reject) and payout batches. */
@ApiExcludeController()
@Public()
@Controller()
export class ConsoleQueuesController {
  constructor(
    private readonly web: ConsoleWeb,
    private readonly actions: ConsoleActions,
    private readonly batches: PayoutBatchesService,
  ) {}

  @Get('admin/ui/attention')
  async attention(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    await this.web.send(res, 'attention', {
      title: 'Attention queue',
      session,
      active: '/admin/ui/attention',
      items: (await this.actions.queue()).map((a) => ({
        objectType: a.objectType,
        shopId: a.id,
        status: a.status,
        amount: a.amount,
        currency: a.currency,
        reason: a.attentionReason,
        since: a.attentionAt,
        nextCheckAt: a.nextCheckAt,
        actions: attentionActions(a),
      })),
      listTools: await this.web.listTools('attention', req, session),
    });
  }

  /** Payout batches: each with its progress (rows sent, refused, still pending). */
  @Get('admin/ui/batches')
  async batchList(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    await this.web.send(res, 'batches', {
      title: 'Payout batches',
      session,
      active: '/admin/ui/batches',
      items: await this.batches.list(LIST_PAGE),
    });
  }

  /** One batch: its counts and its rows with each row's answer, 100 a page. */
  @Get('admin/ui/batches/:batchId')
  async batchDetail(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const batchId = String(params(req).batchId);
    let batch: Awaited<ReturnType<PayoutBatchesService['get']>>;
    try {
      batch = await this.batches.get(batchId, {
        limit: LIST_PAGE,
        cursor: queryText(req, 'cursor', 64) ?? undefined,
      });
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      await this.web.message(res, e.status, 'No such batch', e.message, session, '/admin/ui/batches');
      return;
    }
    await this.web.send(res, 'batch', {
      title: `Payout batch ${batchId}`,
      session,
      active: '/admin/ui/batches',
      batch,
    });
  }

  /** Payouts awaiting approval, with Approve / Reject; the second-approver rule is the service's. */
  @Get('admin/ui/approvals')
  async approvals(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    await this.web.send(res, 'approvals', {
      title: 'Approvals',
      session,
      active: '/admin/ui/approvals',
      items: await this.actions.approvals(),
    });
  }

  /**
   * Approve (an optional note) or reject (a reason and a ticked confirmation), from the queue or
   * the payout's own page: the same service methods as the admin API.
   */
  @Post('admin/ui/approvals/:id/:decision')
  async decide(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const id = String(params(req).id);
    const decision = String(params(req).decision);
    const back = decisionBack(req, id);
    const text = field(req, decision === 'reject' ? 'reason' : 'note', 500).trim();
    if (
      (decision !== 'approve' && decision !== 'reject') ||
      (decision === 'reject' && (text === '' || field(req, 'confirm', 8) !== 'yes'))
    ) {
      await this.web.message(
        res,
        400,
        'Not decided',
        'Approve, or reject with a reason and the box ticked to confirm it.',
        session,
        back,
      );
      return;
    }
    let status: string;
    try {
      const p = (await this.actions.decide(
        id,
        decision === 'approve'
          ? { action: 'approve', note: text === '' ? undefined : text }
          : { action: 'reject', reason: text },
        this.actions.operator(session),
      )) as { status: string };
      status = p.status;
    } catch (e) {
      await this.web.message(
        res,
        e instanceof DomainError ? e.status : 409,
        'Not decided',
        refusal(e, 'The payout could not be decided.'),
        session,
        back,
      );
      return;
    }
    const said = decision === 'approve' ? 'approved' : 'rejected';
    await this.web.done(res, session, back, {
      kind: 'ok',
      text: `Payout ${id} ${said}: now ${status}.`,
    });
  }
}
