import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';

/** `POST /admin/payouts/{shopPaymentId}/approve`: an optional note for the audit trail. */
export class ApprovePayoutDto {
  @ApiPropertyOptional({ maxLength: 500, example: 'checked the invoice with the seller' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  note?: string;
}

/** `POST /admin/payouts/{shopPaymentId}/reject`: why (required; in the audit trail and the event). */
export class RejectPayoutDto {
  @ApiProperty({ maxLength: 500, example: 'recipient not verified' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  reason: string;
}
