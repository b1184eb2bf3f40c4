/**
 * The gateway's integer ids (invoice_id, withdraw_id) are stored as PostgreSQL bigint, which the
 * driver returns as text; calls send them as JSON integers. Refuses anything that would not
 * survive the trip exactly.
 */
export function toGatewayId(value: string | number | null | undefined): number {
  const text = String(value ?? '');
  if (!/^\d+$/.test(text)) throw new Error(`not a gateway id: "${text}"`);
  const n = Number(text);
  if (!Number.isSafeInteger(n))
    throw new Error(`gateway id out of the exact integer range: ${text}`);
  return n;
}
