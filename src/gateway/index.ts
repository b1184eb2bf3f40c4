export { GatewayModule } from './gateway.module';
export { GATEWAY_CLOCK, GatewayService, formatNow } from './gateway.service';
export type { Clock } from './gateway.service';
export {
  GatewayError,
  GatewayTransportError,
  isOutcomeUnknown,
  scrubGatewayText,
} from './gateway.errors';
export type { GatewayErrorInit, TransportErrorKind } from './gateway.errors';
export * from './gateway.types';
export { buildSignString, sign } from './signature';
export { notificationSignString, signNotificationFields, verifyNotification } from './notification-signature';
export type { NotificationCheck, NotificationSecret } from './notification-signature';
export { CALL_SHOP, GatewayShops } from './gateway-shops';
export { MONEY_FIELDS, parseExactJson } from './lossless';
export { toGatewayId } from './ids';
