import { DEFAULT_GATEWAY_CALLS, type GatewayCall } from '../../../src/config/config';
import { signNotificationFields } from '../../../src/gateway/notification-signature';
import { sign } from '../../../src/gateway/signature';
import { SECRET, SHOP_ID, World } from './world';

/**
 * What the gateway does on its own side: a signed call made directly to the sandbox (a request
 * the gateway carries out late, an object left from before a database restore), and a signed
 * notification posted to the service as the gateway would.
 */

export async function gatewayCall(
  world: World,
  call: GatewayCall,
  fields: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const spec = DEFAULT_GATEWAY_CALLS[call];
  const body: Record<string, unknown> = { shop_id: SHOP_ID, ...fields };
  body.sign = sign(body, spec.signed, SECRET);
  const res = await fetch(world.sandbox.baseUrl + spec.path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Record<string, unknown>;
}

export async function notify(
  world: World,
  type: 'invoice' | 'refund',
  fields: Record<string, string>,
): Promise<number> {
  const body = JSON.stringify({ ...fields, sign: signNotificationFields(fields, SECRET) });
  const res = await fetch(`${world.url}/webhooks/gateway?type=${type}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}
