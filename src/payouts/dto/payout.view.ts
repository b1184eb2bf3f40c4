import { alphabeticCurrency } from '../../common/currency';
import { moneyText, moneyTextOrNull } from '../../common/money';
import { ApiProperty } from '@nestjs/swagger';
import type { AmountType, PayoutEntity, PayoutStatus } from '../payout.entity';
import { PAYOUT_STATUSES } from '../payout.state';

/** The payout as the shop sees it (shared/API.md); `account` is always the masked form. */
export class PayoutView {
  @ApiProperty({ example: 'payout-2001' }) shopPaymentId: string;
  @ApiProperty({ type: String, nullable: true, description: "The gateway's withdraw id", example: '445566' })
  withdrawId: string | null;
  @ApiProperty({ enum: PAYOUT_STATUSES, example: 'processing' }) status: PayoutStatus;
  @ApiProperty({ type: Number, nullable: true, description: "The gateway's status number", example: 3 })
  gatewayStatus: number | null;
  @ApiProperty({ example: '1000.00' }) amount: string;
  @ApiProperty({ enum: ['ps_amount', 'shop_amount'], example: 'ps_amount' }) amountType: AmountType;
  @ApiProperty({ example: 643 }) shopCurrency: number;
  @ApiProperty({ type: String, nullable: true, description: 'ISO 4217 alphabetic code of shopCurrency', example: 'RUB' })
  shopCurrencyCode: string | null;
  @ApiProperty({ type: Number, nullable: true, example: 643 }) psCurrency: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'Decimal string', example: '1000.00' }) payeeReceive: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Decimal string', example: '1020.00' }) shopWriteOff: string | null;
  @ApiProperty({ example: 'qiwi_topup_rub_to_card[mock_server,success]' }) payway: string;
  @ApiProperty({
    example: '411111******1111',
    description: 'Masked: first 6 + last 4 of a card, last 4 otherwise',
  })
  account: string;
  @ApiProperty({ type: Number, nullable: true, example: null }) errorCode: number | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: '2026-01-15T10:10:30.000Z' }) nextPollAt: string | null;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T12:10:00.000Z' }) pollDeadline: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:10:00.000Z' }) createdAt: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:10:00.000Z' }) updatedAt: string;
  @ApiProperty({ description: 'An operator must look (see GET /admin/attention)', example: false })
  needsAttention: boolean;
  @ApiProperty({ nullable: true, type: String, example: null }) attentionReason: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: "The shop's own references, as given at create ({} when none)",
    example: { sellerId: 's-9' },
  })
  metadata: Record<string, string>;
}

export function toPayoutView(p: PayoutEntity): PayoutView {
  return {
    shopPaymentId: p.shopPaymentId,
    withdrawId: p.withdrawId,
    status: p.status,
    gatewayStatus: p.gatewayStatus,
    // `ps_amount` is in the payee's currency (the payway's), `shop_amount` in the shop's.
    amount: moneyText(p.amount, p.amountType === 'ps_amount' ? (p.psCurrency ?? p.shopCurrency) : p.shopCurrency),
    amountType: p.amountType,
    shopCurrency: p.shopCurrency,
    shopCurrencyCode: alphabeticCurrency(p.shopCurrency),
    psCurrency: p.psCurrency,
    payeeReceive: moneyTextOrNull(p.payeeReceive, p.psCurrency ?? p.shopCurrency),
    shopWriteOff: moneyTextOrNull(p.shopWriteOff, p.shopCurrency),
    payway: p.payway,
    account: p.accountMasked,
    errorCode: p.errorCode,
    nextPollAt: p.nextPollAt?.toISOString() ?? null,
    pollDeadline: p.pollDeadline.toISOString(),
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
    needsAttention: p.needsAttention,
    attentionReason: p.attentionReason ?? null,
    metadata: p.metadata ?? {},
  };
}
