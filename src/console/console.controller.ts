import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import { randomBytes } from 'node:crypto';
import { BalanceService, type BalanceView } from '../balance/balance.service';
import { decodeCursor } from '../common/pagination';
import { logger } from '../common/logger';
import { Public } from '../common/public.decorator';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { consoleSignIns } from '../metrics/metrics';
import { NotificationsService } from '../notifications/notifications.service';
import { EventsService } from '../events/events.service';
import { fmtField, type DetailField } from './console-fields';
import { hourlyChart } from './console-format';
import { renderPage, stylesheet, type PageData } from './console-render';
import {
  ConsoleService,
  isObjectType,
  OBJECT_TYPES,
  type ObjectType,
  type SearchFilter,
} from './console.service';
import { ConsoleSessions, type ConsoleSession } from './console-sessions';
import { sameSecret } from '../common/sha256';
import { ConsoleActions, FINAL_STATUSES } from './console-actions';
import { DomainError, ValidationFailed } from '../common/errors';
import {
  dailyReportCsv,
  dayBefore,
  type DailyReport,
  reportFileName,
} from '../reports/daily-report';
import { ReportsService } from '../reports/reports.service';
import { PaymentTokensService } from '../payment-tokens/payment-tokens.service';
import { PAYMENT_TOKEN_STATUSES } from '../payment-tokens/dto/payment-token.view';
import {
  consoleList,
  exportFileName,
  FILTER_MAX,
  listFilters,
  listHref,
  writeListCsv,
  type ConsoleList,
} from './console-lists';
import { ConsoleSavedSearches } from './console-saved-searches';
import { PayoutBatchesService } from '../payouts/payout-batches.service';

/** Rows a console page shows at once. */
const LIST_PAGE = 100;

const SESSION_COOKIE = 'console_session';
const DELIVERY_STATES = ['pending', 'failed', 'dead', 'delivered'] as const;
const LOGIN_COOKIE = 'console_login';

/** Every console route, outside the /api/v1 prefix (bootstrap.ts excludes exactly these). */
export const CONSOLE_ROUTES = [
  'admin',
  'admin/login',
  'admin/logout',
  'admin/ui/console.css',
  'admin/ui/attention',
  'admin/ui/approvals',
  'admin/ui/approvals/:id/:decision',
  'admin/ui/batches',
  'admin/ui/batches/:batchId',
  'admin/ui/notifications',
  'admin/ui/notifications/:id/replay',
  'admin/ui/deliveries',
  'admin/ui/events/:id/redeliver',
  'admin/ui/sessions',
  'admin/ui/sessions/revoke',
  'admin/ui/payment-tokens',
  'admin/ui/payment-tokens/:id/revoke',
  'admin/ui/reports/daily',
  'admin/ui/reports/daily.csv',
  'admin/ui/lists/:list/export.csv',
  'admin/ui/lists/:list/searches',
  'admin/ui/lists/:list/searches/:id/delete',
  'admin/ui/:kind',
  'admin/ui/:kind/:id',
  'admin/ui/:kind/:id/resolve',
];

/** Reads one cookie without building any pattern from the header. */
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

/** The route's path parameters and the parsed query (the edge's parser: plain string values). */
const params = (req: FastifyRequest): Record<string, string | undefined> => req.params as Record<string, string | undefined>;
const query = (req: FastifyRequest): Record<string, unknown> => req.query as Record<string, unknown>;

/** A form field as a bounded string ('' when absent or not a string). */
function field(req: FastifyRequest, name: string, max = 1000): string {
  const body = req.body as Record<string, unknown> | undefined;
  const v = body && typeof body === 'object' ? body[name] : undefined;
  return typeof v === 'string' && v.length <= max ? v : '';
}

function queryText(req: FastifyRequest, name: string, max = 255): string | undefined {
  const v = query(req)[name];
  return typeof v === 'string' && v.length > 0 && v.length <= max ? v : undefined;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
function utcDay(text: string | undefined): Date | undefined | 'bad' {
  if (text === undefined) return undefined;
  if (!DAY.test(text)) return 'bad';
  const d = new Date(`${text}T00:00:00Z`);
  return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== text ? 'bad' : d;
}

/**
 * The operators' console: server-rendered pages behind a sign-in with an admin key. The global
 * bearer guard does not apply (@Public); every page checks the console session itself, and every
 * state-changing form carries the session's CSRF token.
 */
@ApiExcludeController()
@Public()
@Controller()
export class ConsoleController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sessions: ConsoleSessions,
    private readonly data: ConsoleService,
    private readonly actions: ConsoleActions,
    private readonly notifications: NotificationsService,
    private readonly balance: BalanceService,
    private readonly events: EventsService,
    private readonly reports: ReportsService,
    private readonly tokens: PaymentTokensService,
    private readonly savedSearches: ConsoleSavedSearches,
    private readonly batches: PayoutBatchesService,
  ) {}

  private get secure(): boolean {
    return this.config.publicBaseUrl.startsWith('https://');
  }

  private setCookie(
    res: FastifyReply,
    name: string,
    value: string,
    maxAgeS: number,
    path = '/admin',
  ): void {
    const parts = [
      `${name}=${encodeURIComponent(value)}`,
      `Path=${path}`,
      'HttpOnly',
      'SameSite=Strict',
      `Max-Age=${maxAgeS}`,
    ];
    if (this.secure) parts.push('Secure');
    res.header('set-cookie', parts.join('; '));
  }

  private send(res: FastifyReply, view: string, data: PageData, status = 200): void {
    res
      .status(status)
      .header('Cache-Control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(renderPage(view, data));
  }

  private message(
    res: FastifyReply,
    status: number,
    title: string,
    text: string,
    session: ConsoleSession | null,
    back?: string,
  ): void {
    this.send(res, 'message', { title, text, session, back }, status);
  }

  /** The session, or a redirect to the sign-in page (and null). */
  private async session(req: FastifyRequest, res: FastifyReply): Promise<ConsoleSession | null> {
    const s = await this.sessions.find(cookie(req, SESSION_COOKIE));
    if (!s) res.redirect('/admin/login', 303);
    return s;
  }

  /** A state-changing form: the session and its CSRF token, or a refusal (and null). */
  private async formSession(req: FastifyRequest, res: FastifyReply): Promise<ConsoleSession | null> {
    const s = await this.sessions.find(cookie(req, SESSION_COOKIE));
    if (!s) {
      this.message(
        res,
        401,
        'Signed out',
        'Your session has ended. Sign in again.',
        null,
        '/admin/login',
      );
      return null;
    }
    const token = field(req, '_csrf', 128);
    if (!token || !sameSecret(token, s.csrfToken)) {
      this.message(
        res,
        403,
        'Form refused',
        'The form was missing its security token. Reload the page and try again.',
        s,
      );
      return null;
    }
    return s;
  }

  @Get('admin/ui/console.css')
  css(@Res() res: FastifyReply): void {
    res
      .status(200)
      .header('Cache-Control', 'public, max-age=300')
      .type('text/css; charset=utf-8')
      .send(stylesheet());
  }

  @Get('admin/login')
  loginForm(@Res() res: FastifyReply): void {
    const token = randomBytes(24).toString('base64url');
    this.setCookie(res, LOGIN_COOKIE, token, 600, '/admin/login');
    this.send(res, 'login', { title: 'Sign in', loginToken: token });
  }

  @Post('admin/login')
  async login(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const address = req.ip ?? 'unknown';
    const wait = this.sessions.retryAfterS(address);
    if (wait > 0) {
      consoleSignIns.inc({ result: 'rate_limited' });
      res.header('Retry-After', String(wait));
      this.message(
        res,
        429,
        'Too many attempts',
        `Too many failed sign-ins from this address. Try again in ${wait} s.`,
        null,
        '/admin/login',
      );
      return;
    }
    const expected = cookie(req, LOGIN_COOKIE);
    const token = field(req, '_csrf', 128);
    if (!expected || !token || !sameSecret(expected, token)) {
      consoleSignIns.inc({ result: 'bad_csrf' });
      this.message(
        res,
        403,
        'Form refused',
        'The sign-in form expired. Reload it and try again.',
        null,
        '/admin/login',
      );
      return;
    }
    const opened = await this.sessions.signIn(field(req, 'key', 512), address);
    if (!opened) {
      const fresh = randomBytes(24).toString('base64url');
      this.setCookie(res, LOGIN_COOKIE, fresh, 600, '/admin/login');
      this.send(
        res,
        'login',
        {
          title: 'Sign in',
          loginToken: fresh,
          flash: { kind: 'error', text: 'That is not an admin key.' },
        },
        401,
      );
      return;
    }
    this.setCookie(res, LOGIN_COOKIE, '', 0, '/admin/login');
    this.setCookie(res, SESSION_COOKIE, opened.id, this.sessions.ttlS);
    res.redirect('/admin', 303);
  }

  @Post('admin/logout')
  async logout(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    if (!(await this.formSession(req, res))) return;
    await this.sessions.signOut(cookie(req, SESSION_COOKIE));
    this.setCookie(res, SESSION_COOKIE, '', 0);
    res.redirect('/admin/login', 303);
  }

  @Get('admin')
  async overview(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const o = await this.data.overview();
    let balance: BalanceView | null = null;
    let balanceError: string | null = null;
    try {
      balance = await this.balance.get();
    } catch (e) {
      balanceError = e instanceof Error ? e.message : 'unknown error';
    }
    this.send(res, 'overview', {
      title: 'Overview',
      session,
      active: '/admin',
      types: OBJECT_TYPES,
      byStatus: o.byStatus,
      attention: o.attention,
      chart: hourlyChart(o.hourly),
      balance,
      balanceError,
      deliveries: o.deliveries,
    });
  }

  @Get('admin/ui/attention')
  async attention(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const flash = queryText(req, 'done')
      ? { kind: 'ok' as const, text: `Resolved ${queryText(req, 'done')}.` }
      : null;
    this.send(res, 'attention', {
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
      })),
      finalStatuses: FINAL_STATUSES,
      flash,
      listTools: await this.listTools('attention', req, session),
    });
  }

  /** Payouts awaiting approval (issue #27), with Approve / Reject; the second-approver rule is the service's. */
  /** Payout batches (issue #27): each with its progress (rows sent, refused, still pending). */
  @Get('admin/ui/batches')
  async batchList(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    this.send(res, 'batches', {
      title: 'Payout batches',
      session,
      active: '/admin/ui/batches',
      items: await this.batches.list(LIST_PAGE),
    });
  }

  /** One batch: its counts and its rows with each row's answer, 100 a page. */
  @Get('admin/ui/batches/:batchId')
  async batchDetail(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
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
      this.message(res, e.status, 'No such batch', e.message, session, '/admin/ui/batches');
      return;
    }
    this.send(res, 'batch', {
      title: `Payout batch ${batchId}`,
      session,
      active: '/admin/ui/batches',
      batch,
    });
  }

  @Get('admin/ui/approvals')
  async approvals(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const done = queryText(req, 'done', 300);
    this.send(res, 'approvals', {
      title: 'Approvals',
      session,
      active: '/admin/ui/approvals',
      items: await this.actions.approvals(),
      flash: done ? { kind: 'ok', text: done } : null,
    });
  }

  @Post('admin/ui/approvals/:id/:decision')
  async decide(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.formSession(req, res);
    if (!session) return;
    const id = String(params(req).id);
    const decision = String(params(req).decision);
    const text = field(req, decision === 'reject' ? 'reason' : 'note', 500).trim();
    if (
      (decision !== 'approve' && decision !== 'reject') ||
      (decision === 'reject' && text === '')
    ) {
      this.message(
        res,
        400,
        'Not decided',
        'Approve, or reject with a reason.',
        session,
        '/admin/ui/approvals',
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
      this.message(
        res,
        e instanceof DomainError ? e.status : 409,
        'Not decided',
        e instanceof Error ? e.message : 'The payout could not be decided.',
        session,
        '/admin/ui/approvals',
      );
      return;
    }
    const said = decision === 'approve' ? 'approved' : 'rejected';
    res.redirect(`/admin/ui/approvals?done=${encodeURIComponent(`Payout ${id} ${said}: now ${status}.`)}`, 303);
  }

  @Get('admin/ui/notifications')
  async inbox(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const filter = {
      q: queryText(req, 'q'),
      status: queryText(req, 'status', 16),
      id: queryText(req, 'id', 64),
    };
    const done = queryText(req, 'replayed', 64);
    this.send(res, 'notifications', {
      title: 'Notifications inbox',
      session,
      active: '/admin/ui/notifications',
      filter,
      rows: await this.data.notifications(filter),
      listTools: await this.listTools('notifications', req, session),
      flash: done ? { kind: 'ok', text: `Notification ${done} replayed.` } : null,
    });
  }

  @Post('admin/ui/notifications/:id/replay')
  async replay(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.formSession(req, res);
    if (!session) return;
    const id = String(params(req).id);
    try {
      await this.notifications.replay(id, this.actions.operator(session));
    } catch (e) {
      this.message(
        res,
        409,
        'Replay refused',
        e instanceof Error ? e.message : 'The notification could not be replayed.',
        session,
        '/admin/ui/notifications',
      );
      return;
    }
    res.redirect(`/admin/ui/notifications?replayed=${encodeURIComponent(id)}`, 303);
  }

  @Get('admin/ui/deliveries')
  async deliveries(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const raw = queryText(req, 'state', 16);
    const state = DELIVERY_STATES.find((s) => s === raw);
    const done = queryText(req, 'redelivered', 64);
    this.send(res, 'deliveries', {
      title: 'Webhook deliveries',
      session,
      active: '/admin/ui/deliveries',
      state: state ?? '',
      states: DELIVERY_STATES,
      rows: (await this.events.deliveries({ state, limit: 100 })).items,
      listTools: await this.listTools('deliveries', req, session),
      flash: done ? { kind: 'ok', text: `Event ${done} queued for delivery again.` } : null,
    });
  }

  @Post('admin/ui/events/:id/redeliver')
  async redeliver(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.formSession(req, res);
    if (!session) return;
    const id = String(params(req).id);
    try {
      await this.events.redeliver(id);
    } catch (e) {
      this.message(
        res,
        409,
        'Not sent again',
        e instanceof Error ? e.message : 'The event could not be redelivered.',
        session,
        '/admin/ui/deliveries',
      );
      return;
    }
    res.redirect(`/admin/ui/deliveries?redelivered=${encodeURIComponent(id)}`, 303);
  }

  @Get('admin/ui/payment-tokens')
  async paymentTokens(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const raw = queryText(req, 'status', 16);
    const status = PAYMENT_TOKEN_STATUSES.find((s) => s === raw);
    const order = queryText(req, 'invoiceShopOrderId');
    const done = queryText(req, 'revoked', 64);
    this.send(res, 'payment-tokens', {
      title: 'Payment tokens',
      session,
      active: '/admin/ui/payment-tokens',
      status: status ?? '',
      statuses: PAYMENT_TOKEN_STATUSES,
      order: order ?? '',
      rows: (await this.tokens.list({ status, invoiceShopOrderId: order, limit: 200 })).items,
      flash: done ? { kind: 'ok', text: `Payment token ${done} revoked.` } : null,
    });
  }

  @Post('admin/ui/payment-tokens/:id/revoke')
  async revokePaymentToken(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.formSession(req, res);
    if (!session) return;
    const id = String(params(req).id);
    try {
      await this.tokens.revoke(id, this.actions.operator(session));
    } catch (e) {
      this.message(
        res,
        404,
        'Not revoked',
        e instanceof Error ? e.message : 'The payment token could not be revoked.',
        session,
        '/admin/ui/payment-tokens',
      );
      return;
    }
    res.redirect(`/admin/ui/payment-tokens?revoked=${encodeURIComponent(id)}`, 303);
  }

  @Get('admin/ui/sessions')
  async sessionsPage(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const revoked = queryText(req, 'revoked', 8);
    this.send(res, 'sessions', {
      title: 'Console sessions',
      session,
      active: '/admin/ui/sessions',
      rows: await this.sessions.list(),
      flash:
        revoked !== undefined && /^\d+$/.test(revoked)
          ? { kind: 'ok', text: `${revoked} session${revoked === '1' ? '' : 's'} revoked.` }
          : null,
    });
  }

  /** Ends one session (`session`: its handle) or every session of an admin key (`keyId`). */
  @Post('admin/ui/sessions/revoke')
  async revokeSessions(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.formSession(req, res);
    if (!session) return;
    const handle = field(req, 'session', 64);
    const keyId = field(req, 'keyId', 16);
    if ((handle === '') === (keyId === '')) {
      this.message(
        res,
        400,
        'Not revoked',
        'Choose one session or one admin key.',
        session,
        '/admin/ui/sessions',
      );
      return;
    }
    const n = await this.sessions.revoke(handle ? { handle } : { keyId });
    logger.info(
      { keyId: session.keyId, revoked: n, ...(keyId ? { ofKey: keyId } : {}) },
      'console sessions revoked',
    );
    // Revoking one's own session (or one's own key's) signs this browser out too.
    if (handle === session.handle || keyId === session.keyId) {
      this.setCookie(res, SESSION_COOKIE, '', 0);
      res.redirect('/admin/login', 303);
      return;
    }
    res.redirect(`/admin/ui/sessions?revoked=${n}`, 303);
  }

  /** The daily books for a chosen day (yesterday in REPORT_TIMEZONE by default). */
  @Get('admin/ui/reports/daily')
  async dailyReport(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const date = queryText(req, 'date', 10) ?? dayBefore(new Date(), this.reports.timeZone);
    const got = await this.report(date);
    this.send(
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
    const session = await this.session(req, res);
    if (!session) return;
    const got = await this.report(queryText(req, 'date', 10) ?? '');
    if (typeof got === 'string') {
      this.message(res, 400, 'No report', got, session, '/admin/ui/reports/daily');
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

  /**
   * What a list page shows of its saved searches and export (views/list-tools.eta): the page's
   * current filters (only names the list declares), the CSV link for them, this key's searches.
   */
  private async listTools(
    name: string,
    req: FastifyRequest,
    session: ConsoleSession,
  ): Promise<Record<string, unknown>> {
    const list = consoleList(name);
    if (!list) throw new Error(`no console list ${name}`);
    const filters: Record<string, string> = {};
    for (const f of list.filters) {
      const v = queryText(req, f, FILTER_MAX);
      if (v !== undefined) filters[f] = v;
    }
    return {
      name: list.name,
      filters,
      csvHref: listHref(list, filters, `/admin/ui/lists/${list.name}/export.csv`),
      saved: (await this.savedSearches.list(session.keyId, list.name)).map((s) => ({
        id: s.id,
        name: s.name,
        href: listHref(list, s.query),
      })),
    };
  }

  /** The list of a `:list` path segment, or a 404 page. */
  private consoleList(req: FastifyRequest, res: FastifyReply, session: ConsoleSession): ConsoleList | null {
    const list = consoleList(String(params(req).list));
    if (!list) this.message(res, 404, 'Not found', 'There is no such list.', session, '/admin');
    return list ?? null;
  }

  /**
   * Every row of a list that matches the filters, as CSV, read and sent batch by batch (never the
   * whole list in memory), at most EXPORT_CAP rows. Amounts exactly as stored, times ISO UTC,
   * accounts masked; text a spreadsheet would run as a formula starts with an apostrophe.
   */
  @Get('admin/ui/lists/:list/export.csv')
  async exportList(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const list = this.consoleList(req, res, session);
    if (!list) return;
    const filters = listFilters(list, query(req));
    if ('error' in filters) {
      this.message(res, 400, 'Not exported', filters.error, session, list.path);
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
      const got = await writeListCsv(
        list,
        { db: this.data.db, config: this.config },
        filters,
        write,
      );
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
    const session = await this.formSession(req, res);
    if (!session) return;
    const list = this.consoleList(req, res, session);
    if (!list) return;
    const body = (req.body ?? {}) as Record<string, unknown>;
    const filters = listFilters(list, body, ['_csrf', 'name']);
    const name = field(req, 'name', 100).trim();
    if ('error' in filters || name === '') {
      const why = 'error' in filters ? filters.error : 'name: a name of 1 to 100 characters';
      this.message(res, 400, 'Search not saved', why, session, list.path);
      return;
    }
    if ((await this.savedSearches.save(session.keyId, list.name, name, filters)) === 'full') {
      this.message(
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
    const session = await this.formSession(req, res);
    if (!session) return;
    const list = this.consoleList(req, res, session);
    if (!list) return;
    if (!(await this.savedSearches.remove(session.keyId, list.name, String(params(req).id)))) {
      this.message(res, 404, 'Not deleted', 'You have no such saved search.', session, list.path);
      return;
    }
    res.redirect(list.path, 303);
  }

  @Get('admin/ui/:kind')
  async list(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const type = this.kind(req, res, session);
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
    this.send(res, 'list', {
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
      listTools: await this.listTools(`${type}s`, req, session),
    });
  }

  @Get('admin/ui/:kind/:id')
  async detail(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const type = this.kind(req, res, session);
    if (!type) return;
    const id = String(params(req).id);
    const object = await this.data.detail(type, id);
    if (!object) {
      this.message(
        res,
        404,
        'Not found',
        `No ${type} with the shop id "${id}".`,
        session,
        `/admin/ui/${type}s`,
      );
      return;
    }
    const fields: Array<[string, DetailField]> = Object.entries(object).map(([k, v]) => [
      k,
      fmtField(k, v, object),
    ]);
    this.send(res, 'detail', {
      title: `${type[0].toUpperCase()}${type.slice(1)} ${id}`,
      session,
      active: `/admin/ui/${type}s`,
      fields,
      timeline: await this.data.timeline(type, id),
      type,
      refunds: type === 'invoice' ? await this.data.refundsOf(id) : null,
      deliveries: await this.data.deliveriesOf(type, id),
    });
  }

  @Post('admin/ui/:kind/:id/resolve')
  async resolve(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.formSession(req, res);
    if (!session) return;
    const type = this.kind(req, res, session);
    if (!type) return;
    const id = String(params(req).id);
    const action = field(req, 'action', 16);
    const status = field(req, 'status', 32);
    const note = field(req, 'note', 1000).trim();
    const holdAction = action === 'charge' || action === 'unhold';
    if (action !== 'recheck' && action !== 'accept' && !(holdAction && type === 'invoice')) {
      this.message(
        res,
        400,
        'Not resolved',
        type === 'invoice'
          ? 'Choose Recheck, Accept, Charge or Unhold.'
          : 'Choose Recheck or Accept.',
        session,
        '/admin/ui/attention',
      );
      return;
    }
    if (action === 'accept' && (!FINAL_STATUSES[type].includes(status) || note === '')) {
      this.message(
        res,
        400,
        'Not resolved',
        'Accept needs a final status and a note saying what you verified.',
        session,
        '/admin/ui/attention',
      );
      return;
    }
    try {
      await this.actions.resolve(
        type,
        id,
        action === 'accept' ? { action, status, note } : { action },
        this.actions.operator(session),
      );
    } catch (e) {
      this.message(
        res,
        409,
        'Not resolved',
        e instanceof Error ? e.message : 'The item could not be resolved.',
        session,
        '/admin/ui/attention',
      );
      return;
    }
    res.redirect(`/admin/ui/attention?done=${encodeURIComponent(`${type} ${id}`)}`, 303);
  }

  /** The object kind of a `:kind` path segment (invoices, refunds, payouts), or a 404 page. */
  private kind(req: FastifyRequest, res: FastifyReply, session: ConsoleSession): ObjectType | null {
    const raw = String(params(req).kind);
    const type = raw.endsWith('s') ? raw.slice(0, -1) : '';
    if (isObjectType(type)) return type;
    this.message(res, 404, 'Not found', 'There is no such page.', session, '/admin');
    return null;
  }
}
