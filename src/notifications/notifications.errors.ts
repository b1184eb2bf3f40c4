import { DomainError } from '../common/errors';

/** A notification from an address not on NOTIFY_ALLOWED_IPS. */
export class NotificationSourceForbidden extends DomainError {
  constructor() {
    super(
      'notification-source-forbidden',
      403,
      'Notification source not allowed',
      'The notification came from an address that may not send gateway notifications',
    );
  }
}

/** Missing or wrong `sign`: nothing is applied. */
export class NotificationSignatureInvalid extends DomainError {
  constructor() {
    super(
      'notification-signature-invalid',
      401,
      'Notification signature invalid',
      'The notification signature does not verify',
    );
  }
}

/** `shop_id` names none of the configured shops: no secret to verify it with, nothing applied. */
export class NotificationShopUnknown extends DomainError {
  constructor() {
    super(
      'notification-shop-unknown',
      403,
      'Notification shop unknown',
      'The notification names a shop that is not configured',
    );
  }
}

/** Not JSON / form, or not an object. */
export class NotificationUnreadable extends DomainError {
  constructor(detail: string) {
    super('notification-unreadable', 400, 'Notification unreadable', detail);
  }
}

/**
 * A `type` that is not a kind the gateway sends (`invoice`, `refund`), or one the body does not
 * fit: nothing is stored, so the gateway sends it again and the genuine notification is never
 * taken as a repeat of it.
 */
export class NotificationTypeInvalid extends DomainError {
  constructor(message: string) {
    super('notification-type-invalid', 400, 'Notification type invalid', `type: ${message}`, {
      errors: [{ field: 'type', message }],
    });
  }
}
