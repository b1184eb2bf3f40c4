import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks headers for one attempt: `webhook-signature` is `v1,` + base64 of
 * HMAC-SHA256 over `id.timestamp.body`, keyed by the decoded secret. The id stays the same on
 * every retry (receivers deduplicate on it); the timestamp is the attempt's.
 */
export function webhookHeaders(
  secret: Buffer,
  id: string,
  body: string,
  now: Date = new Date(),
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const signature = createHmac('sha256', secret)
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  };
}

/** Exponential backoff with full jitter between half and the whole step, capped. */
export function retryDelayS(
  attempt: number,
  baseS: number,
  maxS: number,
  random: () => number = Math.random,
): number {
  const step = Math.min(maxS, baseS * 2 ** Math.max(0, attempt - 1));
  return step / 2 + (step / 2) * random();
}
