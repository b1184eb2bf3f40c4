import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { parseDay } from '../../common/date-time';
import { decodeCursor } from '../../common/pagination';
import { DomainError, ValidationFailed } from '../../common/errors';
import { isLockReason } from '../../common/idempotency';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { statusFromGatewayNumber as invoiceStatusOfNumber } from '../../invoices/invoice.state';
import { statusFromGatewayNumber as payoutStatusOfNumber } from '../../payouts/payout.state';
import { Public } from '../../common/public.decorator';
import type { EntryView } from '../../ledger/dto/ledger.dto';
import { LedgerService } from '../../ledger/ledger.service';
import { DisputesService } from '../../disputes/disputes.service';
import { clock } from '../../common/clock';
import { Amount, moneyText } from '../../common/money';
import { ConsoleActions, FINAL_STATUSES } from '../console-actions';
import { fieldLabel, fmtField, type DetailField } from '../console-fields';
import {
  ConsoleService,
  isObjectType,
  type ObjectType,
  type SearchFilter,
} from '../console.service';
import type { ConsoleSession } from '../console-sessions';
import { ConsoleWeb, field, params, query, queryText, refusal } from '../console-web';

function utcDay(text: string | undefined): Date | undefined | 'bad' {
  if (text === undefined) return undefined;
  return parseDay(text) ?? 'bad';
}

const pageOf = (type: ObjectType, id: string): string => `/admin/ui/${type}s/${encodeURIComponent(id)}`;

/** The words of a refused action: a field error names the field, a domain error says why. */
function why(e: unknown, fallback: string): string {
  if (e instanceof ValidationFailed) return e.errors.map((x) => `${x.field}: ${x.message}`).join('; ');
  return refusal(e, fallback);
}

/**
 * What an object's own page offers (views/object-actions.eta): only the actions that apply to
 * it now; the service decides again when the form is sent.
 */
export function objectActions(type: ObjectType, o: Record<string, unknown>): Record<string, unknown> {
  const status = String(o.status);
  return {
    recheck: true,
    refund: type === 'invoice' && status === 'succeeded',
    hold: type === 'invoice' && status === 'held',
    decide: type === 'payout' && status === 'awaiting_approval',
    accept: o.needsAttention === true,
    // An id locked by conflicting repeats: the operator lifts the lock with a note.
    unlock: o.needsAttention === true && isLockReason(o.attentionReason as string | null),
    finalStatuses: FINAL_STATUSES[type],
    // A fresh id for each showing of the refund form: the same form sent twice is one refund.
    shopRefundId: type === 'invoice' ? `console-${randomBytes(12).toString('base64url')}` : null,
    // A paid invoice can be disputed; the form's Idempotency-Key is fresh for each showing too.
    dispute: type === 'invoice' && status === 'succeeded',
    disputeKey: type === 'invoice' ? `console-${randomBytes(12).toString('base64url')}` : null,
    now: clock.date().toISOString(),
  };
}

/**
 * An invoice's money at a glance: paid (its amount once succeeded), refunded, refund pending,
 * disputed (open, lost or accepted), still refundable, and the payer's fee (payer price − amount, when paid in the invoice's currency).
 */
export function moneyAtAGlance(o: Record<string, unknown>): Array<[string, string, number]> {
  const currency = Number(o.currency);
  const text = (v: unknown): string => (typeof v === 'string' ? v : '0');
  const paid = o.status === 'succeeded' ? text(o.amount) : '0';
  const rows: Array<[string, string, number]> = [
    ['Paid', moneyText(paid, currency), currency],
    ['Refunded', text(o.refundedAmount), currency],
    ['Refund pending', text(o.refundPendingAmount), currency],
    ['Disputed', text(o.disputedAmount), currency],
    ['Refundable', text(o.refundableAmount), currency],
  ];
  const sameCurrency = o.psCurrency === null || o.psCurrency === undefined || Number(o.psCurrency) === currency;
  if (typeof o.payerPrice === 'string' && sameCurrency) {
    const fee = Amount.fromText(o.payerPrice).minus(Amount.fromText(text(o.amount)));
    rows.push(['Payer’s fee', moneyText(fee, currency), currency]);
  }
  return rows;
}

/** Invoices, refunds and payouts: the searchable lists, each object's page and its actions. */
@ApiExcludeController()
@Public()
@Controller()
export class ConsoleObjectsController {
  constructor(
    private readonly web: ConsoleWeb,
    private readonly data: ConsoleService,
    private readonly actions: ConsoleActions,
    private readonly ledger: LedgerService,
    private readonly disputes: DisputesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('admin/ui/:kind')
  async list(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const type = await this.kind(req, res, session);
    if (!type) return;
    const fromText = queryText(req, 'from', 10);
    const toText = queryText(req, 'to', 10);
    const from = utcDay(fromText);
    const to = utcDay(toText);
    const filter: SearchFilter & { fromText?: string; toText?: string } = {
      q: queryText(req, 'q')?.trim() || undefined,
      status: queryText(req, 'status', 32),
      payway: queryText(req, 'payway', 150),
      fromText,
      toText,
    };
    let error: string | null = null;
    if (from === 'bad' || to === 'bad') error = 'Dates are days in the form YYYY-MM-DD.';
    else {
      filter.from = from;
      filter.to = to;
    }
    // `after`: the cursor of an "Older" link; anything else is a stale or edited link.
    let after: string | null = null;
    try {
      const given = query(req).after;
      if (given !== undefined) after = decodeCursor(typeof given === 'string' ? given : 'x');
    } catch {
      error ??= 'This page link is not valid any more: search again.';
    }
    const page = error ? { rows: [], next: null } : await this.data.search(type, filter, after);
    // The links keep the search; values go through URLSearchParams, never pasted into the href.
    const href = (cursor: string | null): string => {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries({
        q: filter.q,
        status: filter.status,
        payway: filter.payway,
        from: filter.fromText,
        to: filter.toText,
      }))
        if (v !== undefined) q.set(k, v);
      if (cursor !== null) q.set('after', cursor);
      const text = q.toString();
      return `/admin/ui/${type}s${text ? `?${text}` : ''}`;
    };
    await this.web.send(res, 'list', {
      title: `${type[0].toUpperCase()}${type.slice(1)}s`,
      session,
      active: `/admin/ui/${type}s`,
      type,
      filter,
      error,
      statuses: await this.data.statuses(type),
      rows: page.rows,
      paged: after !== null,
      newestHref: href(null),
      olderHref: page.next === null ? null : href(page.next),
      listTools: await this.web.listTools(`${type}s`, req, session),
    });
  }

  @Get('admin/ui/:kind/:id')
  async detail(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const type = await this.kind(req, res, session);
    if (!type) return;
    const id = String(params(req).id);
    const object = await this.data.detail(type, id);
    if (!object) {
      await this.web.message(
        res,
        404,
        'Not found',
        `No ${type} with the shop id "${id}".`,
        session,
        `/admin/ui/${type}s`,
      );
      return;
    }
    const statusName = (n: number): string | null =>
      type === 'invoice'
        ? invoiceStatusOfNumber(n)
        : type === 'payout'
          ? payoutStatusOfNumber(n, this.config.payouts.status).status
          : null;
    const fields: Array<[string, DetailField]> = Object.entries(object).map(([k, v]) => [
      fieldLabel(k),
      fmtField(k, v, object, statusName),
    ]);
    const refunds = type === 'invoice' ? await this.data.refundsOf(id) : null;
    const disputes = type === 'invoice' ? await this.disputes.ofInvoice(id) : null;
    await this.web.send(res, 'detail', {
      title: `${type[0].toUpperCase()}${type.slice(1)} ${id}`,
      glance: type === 'invoice' ? moneyAtAGlance(object) : null,
      session,
      active: `/admin/ui/${type}s`,
      fields,
      id,
      timeline: await this.data.timeline(type, id),
      type,
      actions: objectActions(type, object),
      approval: type === 'payout' ? await this.actions.approvalOf(id) : null,
      refunds,
      disputes,
      deliveries: await this.data.deliveriesOf(type, id),
      // The object's entries in the books (newest first), as the Ledger page shows them; an
      // invoice's with those of its refunds and disputes.
      ledger: await this.entriesOf(
        type,
        id,
        (refunds ?? []).map((r) => r.shopRefundId),
        (disputes ?? []).map((d) => d.id),
      ),
      ledgerHref: `/admin/ui/ledger?objectType=${type}&objectId=${encodeURIComponent(id)}`,
    });
  }

  /** The object's ledger entries and its refunds' and disputes', newest first. */
  private async entriesOf(
    type: ObjectType,
    id: string,
    refundIds: string[],
    disputeIds: string[] = [],
  ): Promise<EntryView[]> {
    const own = (await this.ledger.entries({ objectType: type, objectId: id, limit: 50 })).items;
    const of = (objectType: string, ids: string[]): Promise<EntryView[][]> =>
      Promise.all(
        ids.map(async (r) => (await this.ledger.entries({ objectType, objectId: r, limit: 20 })).items),
      );
    const [ofRefunds, ofDisputes] = [await of('refund', refundIds), await of('dispute', disputeIds)];
    return [...own, ...ofRefunds.flat(), ...ofDisputes.flat()].sort((a, b) => Number(b.id) - Number(a.id));
  }

  /** Refund an invoice from its page: the admin API's create, with its validation and rules. */
  @Post('admin/ui/invoices/:id/refund')
  async refund(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const id = String(params(req).id);
    const back = pageOf('invoice', id);
    const reason = field(req, 'reason', 500).trim();
    if (reason === '') {
      await this.web.message(res, 400, 'Not refunded', 'reason: say why you refund (1 to 500 characters).', session, back);
      return;
    }
    let made: Awaited<ReturnType<ConsoleActions['refund']>>;
    try {
      made = await this.actions.refund(
        id,
        { shopRefundId: field(req, 'shopRefundId', 255), amount: field(req, 'amount', 64).trim(), reason },
        this.actions.operator(session),
      );
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      await this.web.message(res, e.status, 'Not refunded', why(e, 'The refund was refused.'), session, back);
      return;
    }
    const r = made.body;
    await this.web.done(res, session, back, {
      kind: 'ok',
      text: made.replayed
        ? `Refund ${r.shopRefundId} was already made by this form: ${r.amount}, now ${r.status}.`
        : `Refund ${r.shopRefundId} of ${r.amount} made: now ${r.status}.`,
    });
  }

  /**
   * Recheck, accept, or charge / unhold a held invoice, from the attention queue or the object's
   * own page (`from=page`): the admin API's resolve, its guard included.
   */
  @Post('admin/ui/:kind/:id/resolve')
  async resolve(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const type = await this.kind(req, res, session);
    if (!type) return;
    const id = String(params(req).id);
    const back = field(req, 'from', 8) === 'page' ? pageOf(type, id) : '/admin/ui/attention';
    const action = field(req, 'action', 16);
    const status = field(req, 'status', 32);
    const note = field(req, 'note', 1000).trim();
    const holdAction = action === 'charge' || action === 'unhold';
    if (
      action !== 'recheck' &&
      action !== 'accept' &&
      action !== 'unlock' &&
      !(holdAction && type === 'invoice')
    ) {
      await this.web.message(
        res,
        400,
        'Not resolved',
        type === 'invoice' ? 'Choose Recheck, Accept, Charge or Unhold.' : 'Choose Recheck or Accept.',
        session,
        back,
      );
      return;
    }
    if (action === 'unlock' && note === '') {
      await this.web.message(
        res,
        400,
        'Not unlocked',
        'Unlock needs a note saying why repeats of this id may be taken again.',
        session,
        back,
      );
      return;
    }
    if (action === 'accept' && (!FINAL_STATUSES[type].includes(status) || note === '')) {
      await this.web.message(
        res,
        400,
        'Not resolved',
        'Accept needs a final status and a note saying what you verified.',
        session,
        back,
      );
      return;
    }
    let after: { status?: unknown };
    try {
      after = (await this.actions.resolve(
        type,
        id,
        action === 'accept'
          ? { action, status, note }
          : action === 'unlock'
            ? { action, note }
            : { action },
        this.actions.operator(session),
      )) as { status?: unknown };
    } catch (e) {
      await this.web.message(
        res,
        409,
        'Not resolved',
        refusal(e, 'The item could not be resolved.'),
        session,
        back,
      );
      return;
    }
    const did = {
      recheck: 'rechecked',
      accept: 'accepted',
      charge: 'charged',
      unhold: 'released',
      unlock: 'unlocked: repeats of its create are taken again',
    }[action];
    await this.web.done(res, session, back, {
      kind: 'ok',
      text: `${type[0].toUpperCase()}${type.slice(1)} ${id} ${did}: now ${String(after?.status ?? 'unchanged')}.`,
    });
  }

  /** The object kind of a `:kind` path segment (invoices, refunds, payouts), or a 404 page. */
  private async kind(
    req: FastifyRequest,
    res: FastifyReply,
    session: ConsoleSession,
  ): Promise<ObjectType | null> {
    const raw = String(params(req).kind);
    const type = raw.endsWith('s') ? raw.slice(0, -1) : '';
    if (isObjectType(type)) return type;
    await this.web.message(res, 404, 'Not found', 'There is no such page.', session, '/admin');
    return null;
  }
}
