import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { NoCardData } from '../../common/card-data';
import { IsDateTime, IsDecimalAmount } from '../../common/validators';
import { DISPUTE_OUTCOMES, type DisputeOutcome } from '../dispute.state';

/** A chargeback the gateway's manager reported, as the operator records it. */
export class CreateDisputeDto {
  @ApiProperty({
    description:
      'Decimal string above zero, in the invoice currency (its minor-unit digits at most): what the payer’s bank disputes. ' +
      'At most what is left to dispute: the paid amount − refunds not FAILED − the other disputes open, lost or accepted',
    example: '30.00',
  })
  @IsDecimalAmount()
  amount: string;

  @ApiProperty({
    description: 'Why the payer’s bank disputes the payment, as the gateway reported it (1-500 characters)',
    example: 'goods not received',
    maxLength: 500,
  })
  @IsString()
  @Length(1, 500)
  @NoCardData()
  reason: string;

  @ApiProperty({
    description: 'When the gateway reported the chargeback: ISO 8601 with an offset; not in the future',
    example: '2026-01-15T09:30:00Z',
  })
  @IsDateTime('time')
  reportedAt: string;

  @ApiPropertyOptional({
    description: 'The deadline for the shop’s answer (evidence) to the gateway: ISO 8601 with an offset, not before reportedAt',
    example: '2026-01-29T23:59:59Z',
  })
  @IsOptional()
  @IsDateTime('time')
  respondBy?: string;

  @ApiPropertyOptional({
    description:
      'The gateway’s own reference of the chargeback (1-255 visible characters), unique per shop: recording it again with the same facts ' +
      'replays the dispute, with other facts is a 409',
    example: 'CB-2026-000123',
    maxLength: 255,
  })
  @IsOptional()
  @IsString()
  @Length(1, 255)
  @Matches(/^[\x21-\x7e]+$/, { message: 'must be visible ASCII characters without spaces' })
  gatewayReference?: string;

  @ApiProperty({
    description: 'The operator’s note (1-1000 characters), kept in the dispute’s notes with the admin’s keyId',
    example: 'reported by the gateway manager by e-mail; evidence due in two weeks',
    maxLength: 1000,
  })
  @IsString()
  @Length(1, 1000)
  @NoCardData()
  note: string;
}

export class ResolveDisputeDto {
  @ApiProperty({
    enum: DISPUTE_OUTCOMES,
    description:
      'What the gateway decided: `won` (the money stays with the shop), `lost` (charged back), `accepted` (the shop did not contest: charged back)',
    example: 'lost',
  })
  @IsIn(DISPUTE_OUTCOMES)
  outcome: DisputeOutcome;

  @ApiProperty({
    description: 'The operator’s note (1-1000 characters): the gateway’s decision as seen',
    example: 'gateway manager: the issuer ruled for the cardholder',
    maxLength: 1000,
  })
  @IsString()
  @Length(1, 1000)
  @NoCardData()
  note: string;
}
