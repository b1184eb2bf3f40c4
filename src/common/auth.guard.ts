import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { DomainError } from './errors';
import { IS_PUBLIC } from './public.decorator';

export type Role = 'shop' | 'admin';

export class Unauthorized extends DomainError {
  constructor() {
    super('unauthorized', 401, 'Unauthorized', 'A valid bearer key is required: Authorization: Bearer <key>');
  }
}

export class Forbidden extends DomainError {
  constructor() {
    super('forbidden', 403, 'Forbidden', 'This route needs the admin role');
  }
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * Global guard: every route needs a key unless marked @Public(). Admin keys can call every
 * route; shop keys everything but /api/v1/admin/**. Keys are compared in constant time.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly shopKeys: Buffer[];
  private readonly adminKeys: Buffer[];

  constructor(
    private readonly reflector: Reflector,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.shopKeys = config.apiKeys.map(digest);
    this.adminKeys = config.adminApiKeys.map(digest);
  }

  canActivate(context: ExecutionContext): boolean {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const req = context.switchToHttp().getRequest<Request & { role?: Role }>();
    const role = this.roleOf(req.headers.authorization);
    if (!role) throw new Unauthorized();
    const path = req.originalUrl.split('?')[0];
    if (/^\/api\/v1\/admin(\/|$)/.test(path) && role !== 'admin') throw new Forbidden();
    req.role = role;
    return true;
  }

  private roleOf(header: string | undefined): Role | null {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!match) return null;
    const given = digest(match[1]);
    // Check every key (no early exit) so timing says nothing about which list matched.
    let role: Role | null = null;
    for (const k of this.shopKeys) if (timingSafeEqual(k, given) && role === null) role = 'shop';
    for (const k of this.adminKeys) if (timingSafeEqual(k, given)) role = 'admin';
    return role;
  }
}
