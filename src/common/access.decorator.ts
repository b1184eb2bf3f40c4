import { SetMetadata } from '@nestjs/common';
import type { Scope } from './actor';

export const ACCESS = 'access';

/**
 * What a route needs, declared on its controller or handler (the handler's wins). The auth guard
 * reads only this: a non-public route that declares nothing is refused to every key.
 */
export type Access = { kind: 'admin' } | { kind: 'scopes'; anyOf: readonly Scope[] };

/** Admin keys only. */
export const AdminOnly = (): MethodDecorator & ClassDecorator => SetMetadata(ACCESS, { kind: 'admin' } satisfies Access);

/**
 * Shop keys holding any one of these scopes (admin keys hold every scope). On a GET handler the
 * `read` scope is accepted too.
 */
export const Scopes = (...anyOf: Exclude<Scope, 'read'>[]): MethodDecorator & ClassDecorator =>
  SetMetadata(ACCESS, { kind: 'scopes', anyOf } satisfies Access);
