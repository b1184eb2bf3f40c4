import { ApiProperty } from '@nestjs/swagger';
import { alphabeticCurrency } from '../../common/currency';
import { moneyText } from '../../common/money';
import { sameShape } from '../../common/openapi';
import type { DisputeEntity, DisputeNote } from '../dispute.entity';
import { DISPUTE_STATUSES, type DisputeStatus } from '../dispute.state';

export class DisputeNoteView {
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:00:00.000Z' }) at: string;
  @ApiProperty({ enum: ['opened', 'won', 'lost', 'accepted'], example: 'opened' })
  action: DisputeNote['action'];
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The admin key that wrote it (first 12 hex digits of its SHA-256)',
    example: '9f86d081884c',
  })
  keyId: string | null;
  @ApiProperty({ example: 'reported by the gateway manager by e-mail' }) note: string;
}
sameShape<DisputeNote, DisputeNoteView>(true);

/** A dispute as the admin API, its events and the console show it (docs/api.md, Disputes). */
export class DisputeView {
  @ApiProperty({ example: 'dp_3kTq9vX2bLm8RzW4yN6pA1cD' }) id: string;
  @ApiProperty({ description: 'The disputed invoice (its shopOrderId)', example: 'order-1001' })
  invoice: string;
  @ApiProperty({ description: 'Decimal string, in the invoice currency', example: '30.00' })
  amount: string;
  @ApiProperty({ example: 643 }) currency: number;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'ISO 4217 alphabetic code of currency',
    example: 'RUB',
  })
  currencyCode: string | null;
  @ApiProperty({ example: 'goods not received' }) reason: string;
  @ApiProperty({
    enum: DISPUTE_STATUSES,
    description:
      '`open` until resolved; `lost` and `accepted` are chargebacks (posted to the books), `won` gives the amount back to the invoice',
    example: 'open',
  })
  status: DisputeStatus;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T09:30:00.000Z' }) reportedAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: '2026-01-29T23:59:59.000Z' })
  respondBy: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'CB-2026-000123' })
  gatewayReference: string | null;
  @ApiProperty({ type: [DisputeNoteView], description: 'Every note, oldest first: the opening one and the resolution’s' })
  notes: DisputeNoteView[];
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:00:00.000Z' }) createdAt: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:00:00.000Z' }) updatedAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  resolvedAt: string | null;
}

export type DisputeViewSource = Pick<
  DisputeEntity,
  | 'publicId'
  | 'shopOrderId'
  | 'amount'
  | 'currency'
  | 'reason'
  | 'status'
  | 'reportedAt'
  | 'respondBy'
  | 'gatewayReference'
  | 'notes'
  | 'createdAt'
  | 'updatedAt'
  | 'resolvedAt'
>;

export function toDisputeView(d: DisputeViewSource): DisputeView {
  return {
    id: d.publicId,
    invoice: d.shopOrderId,
    amount: moneyText(d.amount, d.currency),
    currency: d.currency,
    currencyCode: alphabeticCurrency(d.currency),
    reason: d.reason,
    status: d.status,
    reportedAt: d.reportedAt.toISOString(),
    respondBy: d.respondBy ? d.respondBy.toISOString() : null,
    gatewayReference: d.gatewayReference,
    notes: d.notes.map((n) => ({ at: n.at, action: n.action, keyId: n.keyId, note: n.note })),
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
    resolvedAt: d.resolvedAt ? d.resolvedAt.toISOString() : null,
  };
}
