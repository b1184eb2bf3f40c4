import { Controller, Get, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, NotFound, ValidationFailed } from '../../common/errors';
import { Public } from '../../common/public.decorator';
import { createValidationPipe } from '../../common/validation';
import { CreatePaymentLinkDto } from '../../payment-links/dto/create-payment-link.dto';
import { PAYMENT_LINK_STATUSES } from '../../payment-links/payment-link.state';
import { PaymentLinksService } from '../../payment-links/payment-links.service';
import { ConsoleActions } from '../console-actions';
import type { ConsoleSession } from '../console-sessions';
import { ConsoleWeb, field, params, queryText, refusal } from '../console-web';

const LIST = '/admin/ui/payment-links';
const pageOf = (id: string): string => `${LIST}/${encodeURIComponent(id)}`;

/** The words of a refused action: each field error names its field. */
function why(e: unknown, fallback: string): string {
  if (e instanceof ValidationFailed) return e.errors.map((x) => `${x.field}: ${x.message}`).join('; ');
  return refusal(e, fallback);
}

/**
 * Payment links in the console: the list (by status) with the form that makes one, a link's
 * page with its invoices, and its deactivation. The form goes through the API's own validation
 * (the same pipe, the same messages naming the field) and the same service as
 * `POST /payment-links`; the operator's key is what the audit trail records.
 */
@ApiExcludeController()
@Public()
@Controller()
export class ConsoleLinksController {
  private readonly pipe = createValidationPipe();

  constructor(
    private readonly web: ConsoleWeb,
    private readonly actions: ConsoleActions,
    private readonly links: PaymentLinksService,
  ) {}

  @Get('admin/ui/payment-links')
  async list(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const raw = queryText(req, 'status', 16);
    const status = PAYMENT_LINK_STATUSES.find((s) => s === raw);
    await this.web.send(res, 'payment-links', {
      title: 'Payment links',
      session,
      active: LIST,
      status: status ?? '',
      statuses: PAYMENT_LINK_STATUSES,
      rows: (await this.links.list({ status, limit: 200 })).items,
      form: {},
      formKey: `console-${randomBytes(12).toString('base64url')}`,
    });
  }

  @Post('admin/ui/payment-links')
  async create(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const form = {
      amount: field(req, 'amount', 64).trim(),
      currency: field(req, 'currency', 16).trim(),
      description: field(req, 'description', 1000),
      payways: field(req, 'payways', 20_000),
      expiresAt: field(req, 'expiresAt', 64).trim(),
      reusable: field(req, 'reusable', 8),
      formKey: field(req, 'formKey', 64),
    };
    const key = form.formKey;
    const payways = form.payways
      .split(/[\r\n]+/)
      .map((p) => p.trim())
      .filter((p) => p !== '');
    let made;
    try {
      const dto = (await this.pipe.transform(
        {
          amount: form.amount,
          currency: form.currency,
          description: form.description,
          ...(payways.length > 0 ? { payways } : {}),
          ...(form.expiresAt !== '' ? { expiresAt: form.expiresAt } : {}),
          reusable: form.reusable === 'on',
        },
        { type: 'body', metatype: CreatePaymentLinkDto, data: '' },
      )) as CreatePaymentLinkDto;
      // The form's key is made when the page is shown: the same form sent twice is one link.
      made = (await this.links.create(dto, this.actions.operator(session), key || undefined)).link;
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      await this.refused(res, session, e, form);
      return;
    }
    await this.web.done(res, session, pageOf(made.id), {
      kind: 'ok',
      text: `Payment link ${made.id} made: send the payer ${made.url}`,
    });
  }

  /** The list again, the form keeping what was typed, the refusal in words naming each field. */
  private async refused(
    res: FastifyReply,
    session: ConsoleSession,
    e: DomainError,
    form: Record<string, string>,
  ): Promise<void> {
    await this.web.send(
      res,
      'payment-links',
      {
        title: 'Payment links',
        session,
        active: LIST,
        status: '',
        statuses: PAYMENT_LINK_STATUSES,
        rows: (await this.links.list({ limit: 200 })).items,
        form,
        // Nothing was made: the corrected form is the same form (its key kept).
        formKey: form.formKey,
        flash: { kind: 'error', text: `Not made. ${why(e, 'The payment link was refused.')}` },
      },
      e.status,
    );
  }

  @Get('admin/ui/payment-links/:id')
  async detail(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const id = String(params(req).id);
    let link;
    try {
      link = await this.links.get(id);
    } catch (e) {
      if (!(e instanceof NotFound)) throw e;
      await this.web.message(res, 404, 'Not found', `No payment link "${id}".`, session, LIST);
      return;
    }
    await this.web.send(res, 'payment-link', {
      title: `Payment link ${link.id}`,
      session,
      active: LIST,
      link,
      invoices: await this.links.invoicesOf(link.id),
      history: await this.links.historyOf(link.id),
    });
  }

  @Post('admin/ui/payment-links/:id/deactivate')
  async deactivate(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const id = String(params(req).id);
    try {
      await this.links.deactivate(id, this.actions.operator(session));
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      await this.web.message(res, e.status, 'Not deactivated', why(e, 'The link could not be deactivated.'), session, pageOf(id));
      return;
    }
    await this.web.done(res, session, pageOf(id), { kind: 'ok', text: `Payment link ${id} deactivated.` });
  }
}
