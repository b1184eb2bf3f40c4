/** Reading the gateway's refund records: the facts a record carries besides its status. */
import { Amount } from '../common/money';
import { parseGatewayTime } from '../gateway/gateway-time';
import { type RefundRecord } from '../gateway';
import { RefundEntity } from './refund.entity';

export function settlementOf(
  record: RefundRecord | null,
): Partial<Pick<RefundEntity, 'settlementAmount' | 'settlementCurrency'>> {
  if (!record || typeof record.settlement_amount !== 'string') return {};
  try {
    return {
      settlementAmount: Amount.fromText(record.settlement_amount),
      settlementCurrency: record.settlement_currency ?? null,
    };
  } catch {
    return {};
  }
}

export function asRefundRecord(data: unknown): RefundRecord | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  const rec = data as Partial<RefundRecord>;
  return typeof rec.shop_refund_id === 'string' && typeof rec.status === 'string'
    ? (rec as RefundRecord)
    : null;
}

export function intOrNull(text: string | undefined): number | null {
  return text !== undefined && /^-?\d+$/.test(text) ? Number(text) : null;
}

export function processedAtOf(record: RefundRecord, gatewayOffset: string): { processedAt?: Date } {
  const processedAt = parseGatewayTime(record.processed_at, gatewayOffset);
  return processedAt === null ? {} : { processedAt };
}
