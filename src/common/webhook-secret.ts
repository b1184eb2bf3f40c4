/** Why a Standard Webhooks secret is refused. */
export const WEBHOOK_SECRET_PROBLEM = 'must be whsec_ followed by at least 24 base64 bytes';

/**
 * The Standard Webhooks key of a secret: `whsec_` (optional) + base64 of at least 24 bytes,
 * decoded; null when it is not one. The configuration (SHOP_WEBHOOK_SECRET) and the events CLI
 * (`--secret`) read it so.
 */
export function decodeWebhookSecret(raw: string): Buffer | null {
  const b64 = raw.startsWith('whsec_') ? raw.slice('whsec_'.length) : raw;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return null;
  const key = Buffer.from(b64, 'base64');
  return key.length < 24 ? null : key;
}
