import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';

export const IS_PUBLIC = 'isPublic';
export const PER_ADDRESS_LIMIT = 'perAddressLimit';

/** Opens a route without a bearer key: only webhooks, the payer page, health and docs. */
export const Public = (): MethodDecorator & ClassDecorator =>
  // `security: [{}]` in the OpenAPI document: no key needed, overriding the global bearer.
  applyDecorators(SetMetadata(IS_PUBLIC, true), ApiSecurity({}));

/** A public route rate-limited per source address (RATE_LIMIT_PUBLIC_PER_IP_RPS). */
export const PublicPerAddressLimited = (bucket: 'pay'): MethodDecorator & ClassDecorator =>
  applyDecorators(Public(), SetMetadata(PER_ADDRESS_LIMIT, bucket));
