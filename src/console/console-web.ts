import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sameSecret } from '../common/sha256';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { consoleList, FILTER_MAX, listHref } from './console-lists';
import { renderPage, type PageData } from './console-render';
import { ConsoleSavedSearches } from './console-saved-searches';
import { ConsoleSessions, type ConsoleSession, type Flash } from './console-sessions';

/** Rows a console page shows at once. */
export const LIST_PAGE = 100;
export const SESSION_COOKIE = 'console_session';
export const LOGIN_COOKIE = 'console_login';

/** Reads one cookie without building any pattern from the header. */
export function cookie(req: FastifyRequest, name: string): string | undefined {
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
export const params = (req: FastifyRequest): Record<string, string | undefined> =>
  req.params as Record<string, string | undefined>;
export const query = (req: FastifyRequest): Record<string, unknown> =>
  req.query as Record<string, unknown>;

/** A form field as a bounded string ('' when absent or not a string). */
export function field(req: FastifyRequest, name: string, max = 1000): string {
  const body = req.body as Record<string, unknown> | undefined;
  const v = body && typeof body === 'object' ? body[name] : undefined;
  return typeof v === 'string' && v.length <= max ? v : '';
}

export function queryText(req: FastifyRequest, name: string, max = 255): string | undefined {
  const v = query(req)[name];
  return typeof v === 'string' && v.length > 0 && v.length <= max ? v : undefined;
}

/** The error text of a refused action (the service's own words), or a fallback. */
export function refusal(e: unknown, fallback: string): string {
  return e instanceof Error && e.message ? e.message : fallback;
}

/**
 * What every console page does: cookies, rendering, the session checks of pages and forms, and
 * the one-time status message. A status message is written by the action itself on the server
 * (keyed by the session) and shown once by the next page: never read from the link.
 */
@Injectable()
export class ConsoleWeb {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    readonly sessions: ConsoleSessions,
    private readonly savedSearches: ConsoleSavedSearches,
  ) {}

  private get secure(): boolean {
    return this.config.publicBaseUrl.startsWith('https://');
  }

  setCookie(res: FastifyReply, name: string, value: string, maxAgeS: number, path = '/admin'): void {
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

  /**
   * Renders a page. A signed-in page without a message of its own shows the session's pending
   * status message once (and clears it).
   */
  async send(res: FastifyReply, view: string, data: PageData, status = 200): Promise<void> {
    let flash = data.flash;
    if (flash === undefined && data.session && 'handle' in data.session) {
      flash = await this.sessions.takeFlash(data.session as ConsoleSession);
    }
    res
      .status(status)
      .header('Cache-Control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(renderPage(view, { ...data, flash: flash ?? null }));
  }

  message(
    res: FastifyReply,
    status: number,
    title: string,
    text: string,
    session: ConsoleSession | null,
    back?: string,
  ): Promise<void> {
    return this.send(res, 'message', { title, text, session, back, flash: null }, status);
  }

  /** Records what an action did, for the next page this session opens, then goes there. */
  async done(res: FastifyReply, session: ConsoleSession, to: string, flash: Flash): Promise<void> {
    await this.sessions.setFlash(session, flash);
    res.redirect(to, 303);
  }

  /** The session, or a redirect to the sign-in page (and null). */
  async session(req: FastifyRequest, res: FastifyReply): Promise<ConsoleSession | null> {
    const s = await this.sessions.find(cookie(req, SESSION_COOKIE));
    if (!s) res.redirect('/admin/login', 303);
    return s;
  }

  /** A state-changing form: the session and its CSRF token, or a refusal (and null). */
  async formSession(req: FastifyRequest, res: FastifyReply): Promise<ConsoleSession | null> {
    const s = await this.sessions.find(cookie(req, SESSION_COOKIE));
    if (!s) {
      await this.message(res, 401, 'Signed out', 'Your session has ended. Sign in again.', null, '/admin/login');
      return null;
    }
    const token = field(req, '_csrf', 128);
    if (!token || !sameSecret(token, s.csrfToken)) {
      await this.message(
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

  /**
   * What a list page shows of its saved searches and export (views/list-tools.eta): the page's
   * current filters (only names the list declares), the CSV link for them, this key's searches.
   */
  async listTools(
    name: string,
    req: FastifyRequest,
    session: ConsoleSession,
  ): Promise<Record<string, unknown>> {
    const list = consoleList(name);
    if (!list) throw new Error(`no console list ${name}`);
    const filters: Record<string, string> = {};
    for (const f of list.filters) {
      const v = queryText(req, f, FILTER_MAX);
      // A filter left empty is no filter: with none, there is nothing to save.
      if (v !== undefined && v.trim() !== '') filters[f] = v;
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
}
