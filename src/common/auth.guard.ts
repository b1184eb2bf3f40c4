import { CanActivate, ExecutionContext, Inject, Injectable, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA } from '@nestjs/common/constants.js';
import { Reflector } from '@nestjs/core';
import { timingSafeEqual } from 'node:crypto';
import { sha256Bytes } from './sha256';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ACCESS, type Access } from './access.decorator';
import { DomainError } from './errors';
import { logger } from './logger';
import { IS_PUBLIC, PER_ADDRESS_LIMIT } from './public.decorator';
import { RateLimiter } from './rate-limit';
import { SCOPES, type Actor, type Role, type Scope } from './actor';

export type { Role } from './actor';

export class Unauthorized extends DomainError {
  constructor() {
    super(
      'unauthorized',
      401,
      'Unauthorized',
      'A valid bearer key is required: Authorization: Bearer <key>',
    );
  }
}

export class Forbidden extends DomainError {
  constructor(detail = 'This route needs the admin role') {
    super('forbidden', 403, 'Forbidden', detail);
  }
}

const digest = sha256Bytes;

/** The key's public name in logs, audit entries and events: the first 12 hex digits of its SHA-256. */
export const keyIdOf = (key: string): string => digest(key).toString('hex').slice(0, 12);

interface KnownKey {
  digest: Buffer;
  actor: Actor;
}

/** The configured shop and admin keys; finds the actor an Authorization header names. */
export class ApiKeyTable {
  private readonly keys: KnownKey[];

  constructor(config: Pick<AppConfig, 'shopKeys' | 'adminApiKeys'>) {
    const admin = new Set(config.adminApiKeys);
    this.keys = [
      ...config.shopKeys
        .filter((k) => !admin.has(k.key))
        .map((k) => ({
          digest: digest(k.key),
          actor: { keyId: keyIdOf(k.key), role: 'shop' as Role, scopes: k.scopes },
        })),
      ...config.adminApiKeys.map((k) => ({
        digest: digest(k),
        actor: { keyId: keyIdOf(k), role: 'admin' as Role, scopes: SCOPES },
      })),
    ];
  }

  actorOf(header: string | undefined): Actor | null {
    const h = header ?? '';
    const match = h.length > 1024 ? null : /^Bearer\s+(\S+)\s*$/i.exec(h);
    if (!match) return null;
    const given = digest(match[1]);
    // Check every key (no early exit) so timing says nothing about which key matched.
    let found: Actor | null = null;
    for (const k of this.keys) if (timingSafeEqual(k.digest, given)) found = k.actor;
    return found;
  }
}

/**
 * Global guard. Every route needs a key unless marked @Public(); what a key may call comes only
 * from the route's own metadata (@AdminOnly / @Scopes on the handler or controller), never from
 * the URL, so no spelling of a path (case, encoding, slashes, absolute form) changes the answer.
 * A guarded route that declares nothing is refused to every key. Keys are compared in constant
 * time; the acting key is put on the request (`@Acting()`), for the audit trail.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly keys: ApiKeyTable;
  private readonly log = logger.child({ component: 'auth' });

  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.keys = new ApiKeyTable(config);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.ruleOf(context);
    const req = context.switchToHttp().getRequest<FastifyRequest & { role?: Role }>();
    if (rule.isPublic) {
      if (rule.perAddress) await this.limiter.takeForAddress(req.ip, rule.perAddress);
      return true;
    }
    // The edge's gate read the header already (same table, same header); otherwise read it here.
    const actor =
      req.keyActor !== undefined ? req.keyActor : this.keys.actorOf(req.headers.authorization);
    if (!actor) throw new Unauthorized();
    const access = rule.access;
    if (!access) {
      this.log.error(
        { handler: `${context.getClass().name}.${context.getHandler().name}` },
        'route declares no access rule: refused',
      );
      throw new Forbidden('This route declares no access rule');
    }
    if (!allows(actor, access, rule.isGet)) {
      throw new Forbidden(
        access.kind === 'admin'
          ? undefined
          : `This route needs a key with the scope ${access.anyOf.join(' or ')}`,
      );
    }
    // With tracing on, the request's span goes with who acts, so the events its writes record
    // name it (actor.ts, traceParentOf) and their webhook deliveries continue its trace.
    req.actor =
      req.trace === undefined ? actor : { ...actor, traceparent: req.trace.span.traceparent };
    req.role = actor.role;
    await this.limiter.takeForKey(actor.keyId);
    return true;
  }

  /**
   * What the route declares (handler over controller), read once per handler and controller: a
   * route's metadata is fixed once its decorators have run, and reading it afresh (five metadata
   * look-ups) was a tenth of the edge's CPU per create. A handler shared by two controllers
   * (inheritance) is kept apart by its controller.
   */
  private ruleOf(context: ExecutionContext): RouteRule {
    const handler = context.getHandler();
    const cls = context.getClass();
    let byClass = this.rules.get(handler);
    if (!byClass) this.rules.set(handler, (byClass = new WeakMap()));
    let rule = byClass.get(cls);
    if (!rule) {
      const targets = [handler, cls];
      rule = {
        isPublic: this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets) === true,
        perAddress: this.reflector.getAllAndOverride<'pay' | undefined>(PER_ADDRESS_LIMIT, targets),
        access: this.reflector.getAllAndOverride<Access | undefined>(ACCESS, targets),
        isGet: Reflect.getMetadata(METHOD_METADATA, handler) === RequestMethod.GET,
      };
      byClass.set(cls, rule);
    }
    return rule;
  }

  private readonly rules = new WeakMap<object, WeakMap<object, RouteRule>>();
}

/** A route's access declaration as the guard reads it (AuthGuard.ruleOf). */
interface RouteRule {
  isPublic: boolean;
  perAddress: 'pay' | undefined;
  access: Access | undefined;
  isGet: boolean;
}

/** Whether `actor` may call a route declaring `access`; `isGet`: the handler is a GET route. */
export function allows(actor: Actor, access: Access, isGet: boolean): boolean {
  if (actor.role === 'admin') return true;
  if (access.kind === 'admin') return false;
  const held = new Set<Scope>(actor.scopes);
  return access.anyOf.some((s) => held.has(s)) || (isGet && held.has('read'));
}
