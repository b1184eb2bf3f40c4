/**
 * The variables of the jobs and controls around money: reconciliation, the watch, payouts and
 * their controls, shop events, retention and tracing. Declared like those of schema.ts (which
 * lists every group in CONFIG_GROUPS); the builders are in schema-builders.ts.
 */
import { custom, decimal, derived, group, httpUrl, integer, oneOf, text } from './schema-builders';
import { HOLD_POLICIES } from './types';
import { currencyAmounts, thresholdMap, timeZone, webhookSecret, webhookUrls } from './values';

const MAX_RETENTION_DAYS = 36500;

export const RECONCILIATION = group(
  'Reconciliation and the watch',
  'How objects whose outcome is unknown are settled, and when repeats are answered.',
  {
    INVOICE_RECONCILE_GRACE_S: decimal({
      doc: 'wait this long for a notification before asking `invoice/check`',
      default: 120,
    }),
    INVOICE_RECONCILE_MAX_S: decimal({
      doc: 'an invoice is checked until this age, then flagged for an operator',
      default: 172800,
    }),
    REFUND_RECONCILE_GRACE_S: decimal({
      doc: 'wait this long for a notification before asking `invoice/get-refunds`',
      default: 120,
    }),
    REFUND_RECONCILE_MAX_S: decimal({
      doc: 'a refund is checked until this age, then flagged for an operator',
      default: 604800,
    }),
    RECONCILE_TICK_MS: integer({
      doc: 'how often the reconciliation jobs look for due rows',
      default: 5000,
      min: 10,
    }),
    PAYWAY_REFRESH_S: decimal({ doc: 'payway configuration refresh interval', default: 600 }),
    WATCH_INTERVAL_S: decimal({
      doc: 'after its deadline a flagged invoice, refund or payout is still asked about this often',
      default: 600,
    }),
    WATCH_MAX_S: decimal({
      doc: 'the watch ends this long after the object was created; then an operator alone decides',
      default: 604800,
    }),
    HOLD_EXPIRY_WARNING_S: decimal({
      doc: "the shop event `invoice.hold_expiring` comes this long before a hold's `expires_at`",
      default: 21600,
    }),
    HOLD_POLICY: oneOf({
      doc: "what the service does with a hold `HOLD_POLICY_LEAD_S` before its `expires_at`: `notify` (only the `invoice.hold_expiring` warning), `charge` or `release` it by itself (once across instances, audited as the service's own act); an invoice's `holdPolicy` overrides it",
      values: HOLD_POLICIES,
      default: 'notify',
    }),
    HOLD_POLICY_LEAD_S: integer({
      doc: "how long before a hold's `expires_at` the `charge` or `release` policy acts",
      default: 21600,
      min: 1,
    }),
    ABSENT_CHECKS: integer({
      doc: 'a create that may not have reached the gateway is final only after this many "absent" answers',
      default: 3,
      min: 1,
      max: 100,
    }),
    ABSENT_WINDOW_S: decimal({
      doc: 'the "absent" answers of ABSENT_CHECKS must spread over at least this long',
      default: 1800,
    }),
    CREATE_WAIT_MS: integer({
      doc: 'how long a repeat waits for an identical create still talking to the gateway before `409`',
      default: 10000,
      max: 600000,
    }),
    IDEMPOTENCY_CONFLICT_LIMIT: integer({
      doc: 'conflicting repeats of one create id (another body) before every repeat of it is refused',
      default: 3,
      min: 1,
      max: 1000,
    }),
    REPORT_TIMEZONE: custom({
      doc: 'IANA zone whose calendar day the daily report covers (offsets such as `UTC+3` are refused)',
      type: 'IANA time zone',
      default: '`UTC`',
      read: (env, name) => timeZone(env, name, 'UTC'),
    }),
    RECONCILE_BOOKS_AT: integer({
      doc: 'minutes after the end of a `REPORT_TIMEZONE` day at which that day is reconciled with the gateway',
      default: 60,
      unit: 'minutes',
    }),
  },
);

export const PAYOUTS = group(
  'Payouts',
  'Status polling, re-creates, approvals, caps and the balance check.',
  {
    PAYOUT_POLL_INTERVAL_S: decimal({
      doc: 'payout status polling cadence',
      default: derived('`2` in sandbox mode, `30` otherwise', (c: { sandboxMode: boolean }) =>
        c.sandboxMode ? 2 : 30,
      ),
    }),
    PAYOUT_POLL_MAX_S: decimal({ doc: 'payout status polling give-up age', default: 7200 }),
    PAYOUT_LEASE_S: decimal({
      doc: 'how long a claimed payout stays with one instance',
      default: derived('`max(60, 2 × PAYOUT_POLL_INTERVAL_S)`', (c: { pollIntervalS: number }) =>
        Math.max(60, c.pollIntervalS * 2),
      ),
    }),
    PAYOUT_POLL_CONCURRENCY: integer({
      doc: 'parallel status polls per instance',
      default: 8,
      min: 1,
      max: 256,
    }),
    PAYOUT_MAX_CREATES: integer({
      doc: '`withdraw/create` sends per payout (the first plus repeats after "absent"); past it an operator decides',
      default: 3,
      min: 1,
      max: 100,
    }),
    PAYOUT_APPROVAL_THRESHOLD: custom({
      doc: 'per currency (`643:50000.00,840:1000.00`): a payout at or above waits for one admin approval',
      type: 'currency:amount list',
      default: 'unset: none',
      bounds: 'amounts > 0, exact decimals',
      read: thresholdMap,
    }),
    PAYOUT_DUAL_APPROVAL_THRESHOLD: custom({
      doc: 'per currency: a payout at or above waits for two distinct admin approvals',
      type: 'currency:amount list',
      default: 'unset: none',
      bounds: 'amounts > 0, not below PAYOUT_APPROVAL_THRESHOLD',
      read: thresholdMap,
    }),
    PAYOUT_DAILY_CAP: custom({
      doc: 'per currency, over the UTC day: the sum of all payouts',
      type: 'currency:amount list',
      default: 'unset: none',
      bounds: "amounts > 0, within the currency's minor unit",
      read: currencyAmounts,
    }),
    PAYOUT_RECIPIENT_DAILY_CAP: custom({
      doc: 'per currency, over the UTC day: the sum of payouts to one recipient account',
      type: 'currency:amount list',
      default: 'unset: none',
      bounds: "amounts > 0, within the currency's minor unit",
      read: currencyAmounts,
    }),
    BALANCE_CACHE_S: integer({
      doc: 'how long a read agent-shop balance is used for the check before sending; `0` turns the check off',
      default: 30,
      max: 86400,
    }),
  },
);

export const SHOP_EVENTS = group('Shop events', "Webhooks to the shop's order system.", {
  SHOP_WEBHOOK_URL: custom({
    doc: 'addresses every shop event is POSTed to; https:// outside sandbox mode unless ALLOW_INSECURE_HTTP; an address with user information (`user:password@`) is refused, and addresses are shown everywhere without user information or query',
    type: 'comma list of URLs',
    default: 'unset: events only in the feed',
    read: webhookUrls,
  }),
  SHOP_WEBHOOK_SECRET: custom({
    doc: 'Standard Webhooks secret, `whsec_` + base64; required with SHOP_WEBHOOK_URL',
    type: 'whsec_ secret',
    default: 'unset',
    bounds: '≥ 24 bytes',
    secret: true,
    read: webhookSecret,
  }),
  SHOP_WEBHOOK_TIMEOUT_MS: integer({
    doc: 'a 2xx within this acknowledges a delivery',
    default: 10000,
    min: 100,
    max: 60000,
  }),
  SHOP_WEBHOOK_RETRY_BASE_S: decimal({
    doc: 'first retry delay, doubled per attempt (with jitter)',
    default: 5,
  }),
  SHOP_WEBHOOK_RETRY_MAX_INTERVAL_S: decimal({
    doc: 'the longest delay between retries',
    default: 3600,
  }),
  SHOP_WEBHOOK_RETRY_FOR_S: decimal({
    doc: 'retried this long after the event, then `dead`',
    default: 259200,
  }),
  SHOP_WEBHOOK_LEASE_S: decimal({
    doc: 'how long a claimed delivery stays with one instance (longer than SHOP_WEBHOOK_TIMEOUT_MS)',
    default: 60,
  }),
  SHOP_WEBHOOK_TICK_MS: integer({ doc: 'delivery cadence', default: 1000, min: 10 }),
  SHOP_WEBHOOK_CONCURRENCY: integer({
    doc: 'parallel POSTs per instance',
    default: 8,
    min: 1,
    max: 256,
  }),
});

export const RETENTION = group(
  'Retention',
  'What the pruning jobs delete; financial records never.',
  {
    RETENTION_DELIVERIES_DAYS: integer({
      doc: 'delivered webhook deliveries older than this are deleted',
      default: 30,
      min: 1,
      max: MAX_RETENTION_DAYS,
    }),
    RETENTION_NOTIFICATIONS_DAYS: integer({
      doc: 'verified gateway notifications applied or repeated this long ago are deleted',
      default: 180,
      min: 1,
      max: MAX_RETENTION_DAYS,
    }),
    RETENTION_EVENTS_DAYS: integer({
      doc: 'shop events leave the feed after this (their audit entries stay); longer than SHOP_WEBHOOK_RETRY_FOR_S',
      default: 90,
      min: 1,
      max: MAX_RETENTION_DAYS,
    }),
  },
);

export const TRACING = group('Tracing', 'OpenTelemetry traces over OTLP/HTTP.', {
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl({
    doc: 'where traces are sent (OTLP over HTTP); the standard OTEL_* variables apply too',
    defaultText: 'unset: no tracing, and no cost for it',
  }),
  OTEL_SERVICE_NAME: text({
    doc: 'the service name on every span',
    default: 'piastrix-orchestrator',
  }),
});
