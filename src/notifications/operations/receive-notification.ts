/**
 * Receiving a gateway notification (POST /webhooks/gateway): source address, body, signature;
 * an unverified one is kept as a bounded sample for operators and refused; a verified one is
 * stored and applied (store-notification.ts) and answered only after its commit.
 */
import { crashPoint } from '../../common/crash-point';
import { verifyNotification } from '../../gateway';
import { notificationsReceived } from '../../metrics/metrics';
import { isAllowedSource, normaliseIp } from '../notification-key';
import {
  NotificationShopUnknown,
  NotificationSignatureInvalid,
  NotificationSourceForbidden,
  NotificationTypeInvalid,
  NotificationUnreadable,
} from '../notifications.errors';
import { kindMisfit, notificationKindOf } from '../notification.rules';
import {
  log,
  receivedLog,
  TYPE_MAX,
  type NotificationDeps,
  type IncomingNotification,
  type ReceiveResult,
  type VerifiedNotification,
} from './notification-deps';
import { TRIM_UNVERIFIED } from '../notification-sql';
import { storeAndApply, upsert } from './store-notification';
import { scrubText } from '../../common/redact';

export async function receiveNotification(
  d: NotificationDeps,
  input: IncomingNotification,
): Promise<ReceiveResult> {
  const named = notificationKindOf(input.type);
  const type = 'kind' in named ? named.kind : 'other';
  const metricType = type;
  const sourceIp = normaliseIp(input.sourceIp);
  if (!isAllowedSource(sourceIp, d.config.notifyAllowedIps)) {
    // Strangers are throttled per address; the gateway's own addresses never are.
    await d.limiter.takeForAddress(sourceIp, 'webhook');
    notificationsReceived.inc({ type: metricType, result: 'forbidden' });
    log.warn({ type, sourceIp }, 'notification refused: source address not allowed');
    throw new NotificationSourceForbidden();
  }
  // The kind is part of what was received: one the gateway does not send is refused before
  // anything is read or stored, so its genuine copy is never taken as a repeat of it.
  if ('problem' in named) {
    notificationsReceived.inc({ type: metricType, result: 'bad_request' });
    log.warn(
      { sourceIp, typeGiven: typeText(input.type), reason: named.problem },
      'notification refused: type is not a kind the gateway sends',
    );
    throw new NotificationTypeInvalid(named.problem);
  }
  const contentType = input.contentType ?? '';
  if (!input.rawBody || input.rawBody.length === 0) {
    notificationsReceived.inc({ type: metricType, result: 'bad_request' });
    log.warn({ type, sourceIp, contentType }, 'notification refused: no readable body');
    throw new NotificationUnreadable('The notification has no JSON or form body');
  }
  // The shop the notification names picks the secret it must be signed with.
  const check = verifyNotification(
    input.rawBody,
    contentType,
    (shopId) => d.shops.byId(shopId)?.secretKey,
  );
  if (!check.valid && check.error?.startsWith('unreadable')) {
    notificationsReceived.inc({ type: metricType, result: 'bad_request' });
    log.warn({ type, sourceIp, contentType }, 'notification refused: body unreadable');
    throw new NotificationUnreadable('The notification body is not a JSON object or a form');
  }
  if (!check.valid) {
    const result = check.unknownShop ? 'unknown_shop' : 'bad_signature';
    notificationsReceived.inc({ type: metricType, result });
    // Kept for operators (verified = false, in a key space of its own), applied never.
    await storeUnverified(d, type, check.fields, contentType, sourceIp, check.error ?? 'bad sign');
    log.warn(
      { type, sourceIp, shopOrderId: check.fields.shop_order_id, reason: check.error },
      check.unknownShop
        ? 'notification refused: it names a shop that is not configured'
        : 'notification refused: signature does not verify',
    );
    throw check.unknownShop ? new NotificationShopUnknown() : new NotificationSignatureInvalid();
  }

  const misfit = kindMisfit(named.kind, check.fields);
  if (misfit !== null) {
    notificationsReceived.inc({ type: metricType, result: 'bad_request' });
    log.warn(
      { type, sourceIp, shopOrderId: check.fields.shop_order_id, reason: misfit },
      'notification refused: its type does not fit its body',
    );
    throw new NotificationTypeInvalid(misfit);
  }

  const verified: VerifiedNotification = {
    type,
    fields: check.fields,
    contentType,
    sourceIp,
    lockInvoice: d.appliers.get(type)?.invoiceToLock?.(check.fields) ?? undefined,
  };
  // A notification about an invoice shares its turn's transaction (the inbox batch); any
  // other kind is stored and applied in one of its own.
  const result =
    verified.lockInvoice !== undefined
      ? await d.inbox.write(verified)
      : await storeAndApply(d, verified);
  // Committed, not yet answered: the re-sent copy finds it applied.
  crashPoint('notification.apply.after_commit');
  notificationsReceived.inc({
    type: metricType,
    result: result.duplicate ? 'duplicate' : result.status,
  });
  // The one line per notification, of a fixed shape: the gateway's order id scrubbed as the main
  // logger would scrub it, the rest values of ours (lineLogger).
  const shopOrderId = check.fields.shop_order_id;
  receivedLog.info(
    {
      type,
      notificationId: result.id,
      shopOrderId: shopOrderId === undefined ? undefined : scrubText(shopOrderId),
      status: result.status,
      duplicate: result.duplicate,
    },
    'notification received',
  );
  return result;
}

/** The `type` as given, bounded, for the log line (never stored). */
function typeText(raw: string | readonly string[] | undefined): string | string[] | null {
  if (raw === undefined) return null;
  return typeof raw === 'string'
    ? raw.slice(0, TYPE_MAX)
    : raw.slice(0, 4).map((v) => v.slice(0, TYPE_MAX));
}

async function storeUnverified(
  d: NotificationDeps,
  type: string,
  fields: Record<string, string>,
  contentType: string,
  sourceIp: string,
  reason: string,
): Promise<void> {
  try {
    await upsert(d, d.dataSource.manager, {
      type,
      fields,
      contentType,
      sourceIp,
      verified: false,
      status: 'rejected',
      outcome: `not verified: ${reason}`,
    });
    await trimUnverified(d);
  } catch (e) {
    // The refusal stands whether or not the record could be kept.
    log.error({ type, err: (e as Error).message }, 'could not record an unverified notification');
  }
}

/**
 * Unverified bodies are a sample for operators, not a record: anyone who can reach the webhook
 * can send them. The oldest beyond NOTIFY_UNVERIFIED_KEEP are dropped (every one is counted in
 * gateway_notifications_total all the same).
 */
async function trimUnverified(d: NotificationDeps): Promise<void> {
  await d.dataSource.query(TRIM_UNVERIFIED, [d.config.notifyUnverifiedKeep]);
}
