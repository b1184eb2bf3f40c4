import { Controller, Get, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { BalanceService, type BalanceView } from '../../balance/balance.service';
import { sameSecret } from '../../common/sha256';
import { Public } from '../../common/public.decorator';
import { LedgerService } from '../../ledger/ledger.service';
import { consoleSignIns } from '../../metrics/metrics';
import { ReconciliationService } from '../../reconciliation/reconciliation.service';
import { booksTile, type BooksTile } from '../console-books';
import { hourlyChart } from '../console-format';
import { stylesheet } from '../console-render';
import { ConsoleService, OBJECT_TYPES } from '../console.service';
import { cookie, ConsoleWeb, field, LOGIN_COOKIE, SESSION_COOKIE } from '../console-web';
import { ConsoleSessions } from '../console-sessions';

/** Sign-in and sign-out, the stylesheet, and the overview. */
@ApiExcludeController()
@Public()
@Controller()
export class ConsoleHomeController {
  constructor(
    private readonly web: ConsoleWeb,
    private readonly sessions: ConsoleSessions,
    private readonly data: ConsoleService,
    private readonly balance: BalanceService,
    private readonly ledger: LedgerService,
    private readonly reconciliations: ReconciliationService,
  ) {}

  @Get('admin/ui/console.css')
  css(@Res() res: FastifyReply): void {
    res
      .status(200)
      .header('Cache-Control', 'public, max-age=300')
      .type('text/css; charset=utf-8')
      .send(stylesheet());
  }

  @Get('admin/login')
  async loginForm(@Res() res: FastifyReply): Promise<void> {
    const token = randomBytes(24).toString('base64url');
    this.web.setCookie(res, LOGIN_COOKIE, token, 600, '/admin/login');
    await this.web.send(res, 'login', { title: 'Sign in', loginToken: token });
  }

  @Post('admin/login')
  async login(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const address = req.ip ?? 'unknown';
    const wait = this.sessions.retryAfterS(address);
    if (wait > 0) {
      consoleSignIns.inc({ result: 'rate_limited' });
      res.header('Retry-After', String(wait));
      await this.web.message(
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
      await this.web.message(
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
      this.web.setCookie(res, LOGIN_COOKIE, fresh, 600, '/admin/login');
      await this.web.send(
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
    this.web.setCookie(res, LOGIN_COOKIE, '', 0, '/admin/login');
    this.web.setCookie(res, SESSION_COOKIE, opened.id, this.sessions.ttlS);
    res.redirect('/admin', 303);
  }

  @Post('admin/logout')
  async logout(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    if (!(await this.web.formSession(req, res))) return;
    await this.sessions.signOut(cookie(req, SESSION_COOKIE));
    this.web.setCookie(res, SESSION_COOKIE, '', 0);
    res.redirect('/admin/login', 303);
  }

  @Get('admin')
  async overview(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const session = await this.web.session(req, res);
    if (!session) return;
    const o = await this.data.overview();
    let balance: BalanceView | null = null;
    let balanceError: string | null = null;
    try {
      balance = await this.balance.get();
    } catch (e) {
      balanceError = e instanceof Error ? e.message : 'unknown error';
    }
    await this.web.send(res, 'overview', {
      title: 'Overview',
      session,
      active: '/admin',
      types: OBJECT_TYPES,
      byStatus: o.byStatus,
      attention: o.attention,
      awaitingApproval: o.awaitingApproval,
      chart: hourlyChart(o.hourly),
      balance,
      balanceError,
      deliveries: o.deliveries,
      books: await this.books(),
    });
  }

  /** The books tile: the last reconciliation and, where the ledger can check itself, its mismatches. */
  private async books(): Promise<BooksTile> {
    const [last] = await this.reconciliations.list(1);
    // The position check (GET /admin/ledger/check) where this build has it.
    const check = (this.ledger as unknown as { check?: () => Promise<unknown> }).check;
    let positions: unknown = null;
    let positionsError: string | null = null;
    if (typeof check === 'function') {
      try {
        positions = await check.call(this.ledger);
      } catch (e) {
        positionsError = e instanceof Error ? e.message : 'unknown error';
      }
    }
    return booksTile(last ?? null, positions, positionsError);
  }
}
