import type { KeyRing, SealContext } from '../common/key-ring';

/**
 * Fields of a stored notification that are kept sealed: `ps_data` carries the payer's recurrent
 * token. It is sealed whole, so opening it gives back the exact text the signature covered.
 */
export const SEALED_NOTIFICATION_FIELDS = ['ps_data'] as const;

export function notificationFieldContext(notificationId: string, field: string): SealContext {
  return { table: 'notifications', column: `payload.${field}`, rowId: notificationId };
}

/** The payload as stored: verified (or refused) first, sealed here, then written. */
export function sealNotificationFields(
  keys: KeyRing,
  notificationId: string,
  fields: Record<string, string>,
): Record<string, string> {
  const sealed = { ...fields };
  for (const f of SEALED_NOTIFICATION_FIELDS) {
    const v = sealed[f];
    if (typeof v === 'string' && v !== '')
      sealed[f] = keys.seal(v, notificationFieldContext(notificationId, f));
  }
  return sealed;
}

/** The fields as the gateway sent them, for a replay. */
export function openNotificationFields(
  keys: KeyRing,
  notificationId: string,
  payload: Record<string, string>,
): Record<string, string> {
  const open = { ...payload };
  for (const f of SEALED_NOTIFICATION_FIELDS) {
    const v = open[f];
    if (typeof v === 'string' && v !== '')
      open[f] = keys.unseal(v, notificationFieldContext(notificationId, f));
  }
  return open;
}
