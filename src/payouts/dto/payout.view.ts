import { ApiProperty } from '@nestjs/swagger';
import type { AmountType, PayoutEntity, PayoutStatus } from '../payout.entity';
import { PAYOUT_STATUSES } from '../payout.state';

/** The payout as the shop sees it (shared/API.md); `account` is always the masked form. */
export class PayoutView {
  @ApiProperty() shopPaymentId: string;
  @ApiProperty({ type: String, nullable: true, description: "The gateway's withdraw id" })
  withdrawId: string | null;
  @ApiProperty({ enum: PAYOUT_STATUSES }) status: PayoutStatus;
  @ApiProperty({ type: Number, nullable: true, description: "The gateway's status number" })
  gatewayStatus: number | null;
  @ApiProperty({ example: '1000.00' }) amount: string;
  @ApiProperty({ enum: ['ps_amount', 'shop_amount'] }) amountType: AmountType;
  @ApiProperty() shopCurrency: number;
  @ApiProperty({ type: Number, nullable: true }) psCurrency: number | null;
  @ApiProperty({ type: String, nullable: true }) payeeReceive: string | null;
  @ApiProperty({ type: String, nullable: true }) shopWriteOff: string | null;
  @ApiProperty() payway: string;
  @ApiProperty({
    example: '411111******1111',
    description: 'Masked: first 6 + last 4 of a card, last 4 otherwise',
  })
  account: string;
  @ApiProperty({ type: Number, nullable: true }) errorCode: number | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) nextPollAt: string | null;
  @ApiProperty({ format: 'date-time' }) pollDeadline: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export function toPayoutView(p: PayoutEntity): PayoutView {
  return {
    shopPaymentId: p.shopPaymentId,
    withdrawId: p.withdrawId,
    status: p.status,
    gatewayStatus: p.gatewayStatus,
    amount: p.amount.toString(),
    amountType: p.amountType,
    shopCurrency: p.shopCurrency,
    psCurrency: p.psCurrency,
    payeeReceive: p.payeeReceive?.toString() ?? null,
    shopWriteOff: p.shopWriteOff?.toString() ?? null,
    payway: p.payway,
    account: p.accountMasked,
    errorCode: p.errorCode,
    nextPollAt: p.nextPollAt?.toISOString() ?? null,
    pollDeadline: p.pollDeadline.toISOString(),
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}
