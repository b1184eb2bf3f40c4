import { DELIVERY_STATES } from '../../events/delivery-states';
import { shownAddress } from '../../common/redact';
import { SCOPES } from '../../common/actor';
import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EVENT_OBJECT_TYPES, SHOP_EVENT_TYPES } from '../../audit/shop-events';
import { logger } from '../../common/logger';
import { dateTimeMessage, parseTime } from '../../common/date-time';
import { Public } from '../../common/public.decorator';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { EventsService } from '../../events/events.service';
import { NotificationsService } from '../../notifications/notifications.service';
import { PAYMENT_TOKEN_STATUSES } from '../../payment-tokens/dto/payment-token.view';
import { PaymentTokensService } from '../../payment-tokens/payment-tokens.service';
import { ConsoleActions } from '../console-actions';
import { ConsoleService } from '../console.service';
import { ConsoleWeb, field, params, queryText, refusal, SESSION_COOKIE } from '../console-web';


/**
 * What comes in and goes out: the notifications inbox (replay), webhook deliveries (redeliver one
 * event, or every failed / dead delivery at once), payment tokens (revoke) and console sessions.
 */
@ApiExcludeController()
@Public()
@Controller()
export class ConsoleInboxController {
  constructor(
    private readonly web: ConsoleWeb,
    private readonly actions: ConsoleActions,
    private readonly data: ConsoleService,
    private readonly notifications: NotificationsService,
    private readonly events: EventsService,
    private readonly tokens: PaymentTokensService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('admin/ui/notifications')
  async inbox(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const filter = {
      q: queryText(req, 'q'),
      status: queryText(req, 'status', 16),
      id: queryText(req, 'id', 64),
    };
    await this.web.send(res, 'notifications', {
      title: 'Notifications inbox',
      session,
      active: '/admin/ui/notifications',
      filter,
      rows: await this.data.notifications(filter),
      listTools: await this.web.listTools('notifications', req, session),
    });
  }

  @Post('admin/ui/notifications/:id/replay')
  async replay(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const id = String(params(req).id);
    try {
      await this.notifications.replay(id, this.actions.operator(session));
    } catch (e) {
      await this.web.message(
        res,
        409,
        'Replay refused',
        refusal(e, 'The notification could not be replayed.'),
        session,
        '/admin/ui/notifications',
      );
      return;
    }
    await this.web.done(res, session, '/admin/ui/notifications', {
      kind: 'ok',
      text: `Notification ${id} replayed.`,
    });
  }

  @Get('admin/ui/deliveries')
  async deliveries(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const raw = queryText(req, 'state', 16);
    const state = DELIVERY_STATES.find((s) => s === raw);
    const rows = (await this.events.deliveries({ state, limit: 100 })).items;
    // A delivery to an address SHOP_WEBHOOK_URL no longer names is still retried: say so. Both
    // sides as shown (without user information or query): the rows' addresses come so.
    const configured = new Set(this.config.shopEvents.urls.map(shownAddress));
    const unconfigured = rows.filter((d) => !configured.has(d.url) && (d.state === 'pending' || d.state === 'failed')).length;
    await this.web.send(res, 'deliveries', {
      title: 'Webhook deliveries',
      session,
      active: '/admin/ui/deliveries',
      state: state ?? '',
      states: DELIVERY_STATES,
      eventTypes: SHOP_EVENT_TYPES,
      objectTypes: EVENT_OBJECT_TYPES,
      rows,
      configuredUrls: [...configured],
      unconfigured,
      listTools: await this.web.listTools('deliveries', req, session),
    });
  }

  @Post('admin/ui/events/:id/redeliver')
  async redeliver(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const id = String(params(req).id);
    try {
      await this.events.redeliver(id);
    } catch (e) {
      await this.web.message(
        res,
        409,
        'Not sent again',
        refusal(e, 'The event could not be redelivered.'),
        session,
        '/admin/ui/deliveries',
      );
      return;
    }
    await this.web.done(res, session, '/admin/ui/deliveries', {
      kind: 'ok',
      text: `Event ${id} queued for delivery again.`,
    });
  }

  /** Every failed (or dead) delivery matching the form's filter, sent again: the API's bulk route. */
  @Post('admin/ui/deliveries/redeliver')
  async redeliverMany(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const state = field(req, 'state', 8);
    const type = field(req, 'type', 64) || undefined;
    const objectType = field(req, 'objectType', 32) || undefined;
    const since = field(req, 'since').trim() || undefined;
    if (since !== undefined && parseTime(since) === null) {
      await this.web.message(
        res,
        400,
        'Not sent again',
        `Since ${dateTimeMessage('time')}.`,
        session,
        '/admin/ui/deliveries',
      );
      return;
    }
    if (
      (state !== 'failed' && state !== 'dead') ||
      (type !== undefined && !SHOP_EVENT_TYPES.includes(type)) ||
      (objectType !== undefined && !(EVENT_OBJECT_TYPES as readonly string[]).includes(objectType))
    ) {
      await this.web.message(
        res,
        400,
        'Not sent again',
        'Choose failed or dead, and optionally one event type and one object type from the lists.',
        session,
        '/admin/ui/deliveries',
      );
      return;
    }
    let n: number;
    try {
      n = await this.events.redeliverMany({ state, type, objectType, since });
    } catch (e) {
      await this.web.message(
        res,
        409,
        'Not sent again',
        refusal(e, 'The deliveries could not be sent again.'),
        session,
        '/admin/ui/deliveries',
      );
      return;
    }
    logger.info({ keyId: session.keyId, state, type, objectType, since, redelivered: n }, 'console bulk redelivery');
    await this.web.done(res, session, '/admin/ui/deliveries', {
      kind: 'ok',
      text: `${n} ${state} deliver${n === 1 ? 'y' : 'ies'} queued again.`,
    });
  }

  /**
   * Drops every delivery still owed to an address SHOP_WEBHOOK_URL no longer names (a ticked
   * confirmation): dead, never sent again, audited with the operator's key.
   */
  @Post('admin/ui/deliveries/drop-unconfigured')
  async dropUnconfigured(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    if (field(req, 'confirm', 8) !== 'yes') {
      await this.web.message(
        res,
        400,
        'Not dropped',
        'Tick the box to confirm: dropped deliveries are never sent again (the events stay in the feed).',
        session,
        '/admin/ui/deliveries',
      );
      return;
    }
    const done = await this.events.dropUnconfigured({ keyId: session.keyId, role: 'admin', scopes: SCOPES });
    logger.info({ keyId: session.keyId, dropped: done.dropped, addresses: done.addresses }, 'console dropped deliveries to unconfigured addresses');
    await this.web.done(res, session, '/admin/ui/deliveries', {
      kind: 'ok',
      text:
        done.dropped === 0
          ? 'Nothing dropped: no delivery owed to an address that is no longer configured is waiting (one being sent right now is left to finish).'
          : `${done.dropped} deliver${done.dropped === 1 ? 'y' : 'ies'} dropped (${done.addresses.map((a) => `${a.url}: ${a.count}`).join(', ')}): never sent again.`,
    });
  }

  @Get('admin/ui/payment-tokens')
  async paymentTokens(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const raw = queryText(req, 'status', 16);
    const status = PAYMENT_TOKEN_STATUSES.find((s) => s === raw);
    const order = queryText(req, 'invoiceShopOrderId');
    await this.web.send(res, 'payment-tokens', {
      title: 'Payment tokens',
      session,
      active: '/admin/ui/payment-tokens',
      status: status ?? '',
      statuses: PAYMENT_TOKEN_STATUSES,
      order: order ?? '',
      rows: (await this.tokens.list({ status, invoiceShopOrderId: order, limit: 200 })).items,
    });
  }

  @Post('admin/ui/payment-tokens/:id/revoke')
  async revokePaymentToken(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const id = String(params(req).id);
    try {
      await this.tokens.revoke(id, this.actions.operator(session));
    } catch (e) {
      await this.web.message(
        res,
        404,
        'Not revoked',
        refusal(e, 'The payment token could not be revoked.'),
        session,
        '/admin/ui/payment-tokens',
      );
      return;
    }
    await this.web.done(res, session, '/admin/ui/payment-tokens', {
      kind: 'ok',
      text: `Payment token ${id} revoked.`,
    });
  }

  @Get('admin/ui/sessions')
  async sessionsPage(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    await this.web.send(res, 'sessions', {
      title: 'Console sessions',
      session,
      active: '/admin/ui/sessions',
      rows: await this.web.sessions.list(),
    });
  }

  /** Ends one session (`session`: its handle) or every session of an admin key (`keyId`). */
  @Post('admin/ui/sessions/revoke')
  async revokeSessions(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.formSession(req, res);
    if (!session) return;
    const handle = field(req, 'session', 64);
    const keyId = field(req, 'keyId', 16);
    if ((handle === '') === (keyId === '')) {
      await this.web.message(
        res,
        400,
        'Not revoked',
        'Choose one session or one admin key.',
        session,
        '/admin/ui/sessions',
      );
      return;
    }
    const n = await this.web.sessions.revoke(handle ? { handle } : { keyId });
    logger.info(
      { keyId: session.keyId, revoked: n, ...(keyId ? { ofKey: keyId } : {}) },
      'console sessions revoked',
    );
    // Revoking one's own session (or one's own key's) signs this browser out too.
    if (handle === session.handle || keyId === session.keyId) {
      this.web.setCookie(res, SESSION_COOKIE, '', 0);
      res.redirect('/admin/login', 303);
      return;
    }
    await this.web.done(res, session, '/admin/ui/sessions', {
      kind: 'ok',
      text: `${n} session${n === 1 ? '' : 's'} revoked.`,
    });
  }
}
