import { ApiProperty } from '@nestjs/swagger';
import { PayoutView } from './payout.view';

/** `check_account` on the payout's account and payway, as an approver is shown it. */
export class PayeeCheckSeen {
  @ApiProperty({
    enum: ['ok', 'refused', 'unavailable'],
    description:
      "ok: the gateway says the account can be credited; refused: it says it cannot (an approval then needs a note); unavailable: the gateway could not be asked or refused the question (gatewayErrorCode, gatewayMessage)",
    example: 'ok',
  })
  result: 'ok' | 'refused' | 'unavailable';
  @ApiProperty({ type: Boolean, nullable: true, description: "The gateway's answer; null when it could not be asked", example: true })
  canBeCredited: boolean | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    description: "The gateway's account_info (the account masked), when it can be credited",
    example: { account: '411111******1111', holder: 'SANDBOX PAYEE' },
  })
  accountInfo: Record<string, string> | null;
  @ApiProperty({ type: Number, nullable: true, example: null }) gatewayErrorCode: number | null;
  @ApiProperty({ type: String, nullable: true, example: null }) gatewayMessage: string | null;
  @ApiProperty({ format: 'date-time', description: 'When the gateway was asked (the service clock)', example: '2026-01-15T10:12:00.000Z' })
  checkedAt: string;
}

/** The fee `withdraw/try` quotes for the payout, as an approver is shown it. */
export class FeeQuoteSeen {
  @ApiProperty({ enum: ['ok', 'unavailable'], example: 'ok' }) result: 'ok' | 'unavailable';
  @ApiProperty({ type: String, nullable: true, description: 'Decimal string, in psCurrency', example: '1000.00' })
  payeeReceive: string | null;
  @ApiProperty({ type: Number, nullable: true, example: 643 }) psCurrency: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'Decimal string, in shopCurrency', example: '1020.00' })
  shopWriteOff: string | null;
  @ApiProperty({ example: 643 }) shopCurrency: number;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'shopWriteOff − payeeReceive, in shopCurrency; null when the two are in different currencies or not quoted',
    example: '20.00',
  })
  fee: string | null;
  @ApiProperty({ type: Number, nullable: true, example: null }) gatewayErrorCode: number | null;
  @ApiProperty({ type: String, nullable: true, example: null }) gatewayMessage: string | null;
  @ApiProperty({ format: 'date-time', description: 'When the gateway was asked (the service clock)', example: '2026-01-15T10:12:00.000Z' })
  quotedAt: string;
}

/** One admin key's decision on the payout, with the check and the quote its approval was judged on. */
export class ApprovalSeen {
  @ApiProperty({ description: 'The deciding admin key id (never the key)', example: '3f2a9c1b7d4e' }) keyId: string;
  @ApiProperty({ enum: ['approve', 'reject'], example: 'approve' }) decision: 'approve' | 'reject';
  @ApiProperty({ type: String, nullable: true, example: 'payee confirmed by phone' }) note: string | null;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T10:12:03.000Z' }) decidedAt: string;
  @ApiProperty({ type: PayeeCheckSeen, nullable: true, description: 'What this approver was shown (null for a rejection)' })
  check: PayeeCheckSeen | null;
  @ApiProperty({ type: FeeQuoteSeen, nullable: true, description: 'What this approver was shown (null for a rejection)' })
  quote: FeeQuoteSeen | null;
}

/** `GET /admin/payouts/{shopPaymentId}/approval`. */
export class PayoutApprovalView {
  @ApiProperty({ type: PayoutView }) payout: PayoutView;
  @ApiProperty({ description: 'Distinct admin approvals the payout needs', example: 1 }) approvalsRequired: number;
  @ApiProperty({ type: [String], description: 'Key ids whose approvals count so far', example: [] }) approvedBy: string[];
  @ApiProperty({ type: PayeeCheckSeen, nullable: true, description: 'Asked now; null unless the payout awaits approval' })
  check: PayeeCheckSeen | null;
  @ApiProperty({ type: FeeQuoteSeen, nullable: true, description: 'Asked now; null unless the payout awaits approval' })
  quote: FeeQuoteSeen | null;
  @ApiProperty({ description: 'True when the check says the account cannot be credited: an approval needs a note', example: false })
  noteRequired: boolean;
  @ApiProperty({ type: [ApprovalSeen], description: 'Every decision so far, oldest first, with what it was shown' })
  decisions: ApprovalSeen[];
}
