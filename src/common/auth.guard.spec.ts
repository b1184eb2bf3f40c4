import { Controller, Get, Post, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { loadConfig } from '../config/config';
import { AdminOnly, Scopes } from './access.decorator';
import { allows, AuthGuard, Forbidden, keyIdOf, Unauthorized } from './auth.guard';
import { Public } from './public.decorator';
import { RateLimiter } from './rate-limit';
import { RateLimitStore } from './rate-limit-store';

const SHOP = 'shop-key-0123456789abcdef';
const READER = 'read-key-0123456789abcdef';
const ADMIN = 'admin-key-0123456789abcdef';
const PAYOUTER = 'payouts-key-0123456789abcdef';

@Controller('x')
class Undeclared {
  @Get() list(): void {}
  @Post() create(): void {}
}

@Scopes('payments')
@Controller('y')
class Payments {
  @Get() list(): void {}
  @Post() create(): void {}
  @AdminOnly() @Post('admin') adminOnly(): void {}
}

@Public()
@Controller('z')
class Open {
  @Get() page(): void {}
}

/** One handler under two controllers (inheritance): each controller's own rule applies. */
class SharedBase {
  @Post() create(): void {}
}
@Scopes('payouts')
@Controller('p')
class PayoutsShared extends SharedBase {}
@AdminOnly()
@Controller('q')
class AdminShared extends SharedBase {}

function guard(): AuthGuard {
  const config = loadConfig({
    GATEWAY_BASE_URL: 'https://pay.example.com/gateway/v1/',
    GATEWAY_SHOP_ID: '1',
    GATEWAY_SECRET_KEY: 'secret',
    API_KEYS: `${SHOP}:payments,${READER}:read,${PAYOUTER}:payouts`,
    ADMIN_API_KEYS: ADMIN,
    PUBLIC_BASE_URL: 'https://payments.example.com',
    DATA_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  });
  return new AuthGuard(new Reflector(), new RateLimiter(config, new RateLimitStore(config)), config);
}

function context(cls: new () => object, method: string, key?: string): ExecutionContext {
  const handler = (cls.prototype as Record<string, () => void>)[method];
  const req = { headers: key ? { authorization: `Bearer ${key}` } : {}, ip: '127.0.0.1' };
  return {
    getHandler: () => handler,
    getClass: () => cls,
    switchToHttp: () => ({ getRequest: () => req }),
  } as unknown as ExecutionContext;
}

describe('AuthGuard', () => {
  const g = guard();

  it('refuses a guarded route that declares no access rule to every key, admin included (fails closed)', async () => {
    for (const key of [SHOP, READER, ADMIN]) {
      for (const m of ['list', 'create']) {
        await expect(g.canActivate(context(Undeclared, m, key))).rejects.toThrow(Forbidden);
      }
    }
    await expect(g.canActivate(context(Undeclared, 'list'))).rejects.toThrow(Unauthorized);
  });

  it('takes scopes from the controller and the admin role from the handler', async () => {
    expect(await g.canActivate(context(Payments, 'create', SHOP))).toBe(true);
    await expect(g.canActivate(context(Payments, 'adminOnly', SHOP))).rejects.toThrow(Forbidden);
    expect(await g.canActivate(context(Payments, 'adminOnly', ADMIN))).toBe(true);
  });

  it('lets the read scope call GET handlers only', async () => {
    expect(await g.canActivate(context(Payments, 'list', READER))).toBe(true);
    await expect(g.canActivate(context(Payments, 'create', READER))).rejects.toThrow(Forbidden);
  });

  it('reads each route rule once, and keeps a handler shared by two controllers apart', async () => {
    const fresh = guard();
    const refused = (c: ExecutionContext) => expect(fresh.canActivate(c)).rejects.toThrow(Forbidden);
    // Alternating, so an answer remembered for one controller would be given to the other.
    for (let i = 0; i < 3; i++) {
      expect(await fresh.canActivate(context(PayoutsShared, 'create', PAYOUTER))).toBe(true);
      await refused(context(PayoutsShared, 'create', SHOP));
      await refused(context(AdminShared, 'create', PAYOUTER));
      expect(await fresh.canActivate(context(AdminShared, 'create', ADMIN))).toBe(true);
      await refused(context(Payments, 'create', READER));
      expect(await fresh.canActivate(context(Payments, 'list', READER))).toBe(true);
      await refused(context(Undeclared, 'list', ADMIN));
    }
  });

  it('opens @Public routes without a key', async () => {
    expect(await g.canActivate(context(Open, 'page'))).toBe(true);
  });

  it('puts the acting key id (never the key) on the request, for @Acting()', async () => {
    const ctx = context(Payments, 'create', SHOP);
    await g.canActivate(ctx);
    const seen = (ctx.switchToHttp().getRequest() as { actor?: unknown }).actor;
    expect(seen).toEqual({ keyId: keyIdOf(SHOP), role: 'shop', scopes: ['payments'] });
    expect(keyIdOf(SHOP)).toMatch(/^[0-9a-f]{12}$/);
  });

  it.each(['Bearer', 'Bearer ', `Basic ${SHOP}`, `Bearer ${SHOP}x`, `Bearer ${SHOP.toUpperCase()}`, `Bearer ${'a'.repeat(5000)}`])(
    'refuses the header %j',
    async (h) => {
      const ctx = context(Payments, 'list');
      (ctx.switchToHttp().getRequest() as { headers: Record<string, string> }).headers.authorization = h;
      await expect(g.canActivate(ctx)).rejects.toThrow(Unauthorized);
    },
  );
});

describe('allows', () => {
  const shop = (...scopes: Array<'payments' | 'refunds' | 'payouts' | 'read'>) => ({ keyId: 'k', role: 'shop' as const, scopes });
  it.each([
    [shop('payments'), { kind: 'scopes', anyOf: ['payments'] }, false, true],
    [shop('refunds'), { kind: 'scopes', anyOf: ['payments'] }, false, false],
    [shop('read'), { kind: 'scopes', anyOf: ['payouts'] }, true, true],
    [shop('read'), { kind: 'scopes', anyOf: ['payouts'] }, false, false],
    [shop('payouts'), { kind: 'scopes', anyOf: ['payments', 'payouts'] }, true, true],
    [shop('payments', 'refunds', 'payouts', 'read'), { kind: 'admin' }, true, false],
    [{ keyId: 'a', role: 'admin' as const, scopes: [] }, { kind: 'admin' }, false, true],
  ] as const)('%j on %j (GET: %s) → %s', (actor, access, isGet, expected) => {
    expect(allows(actor, access, isGet)).toBe(expected);
  });
});
