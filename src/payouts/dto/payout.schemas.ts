import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** OpenAPI schemas of the payout-side answers that have no view class of their own. */

@ApiSchema({ name: 'PayoutQuote' })
export class PayoutQuoteSchema {
  @ApiProperty({ description: 'What the payee receives (decimal string)', example: '1000.00' })
  payeeReceive: string;
  @ApiProperty({
    description: "What is written off the shop's balance (decimal string)",
    example: '1020.00',
  })
  shopWriteOff: string;
  @ApiProperty({ example: 643 }) psCurrency: number;
  @ApiProperty({ example: 643 }) shopCurrency: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The payway's account_info_config, as the gateway sends it",
    example: { account: { regex: '^\\d{16,19}$', title: 'Card number' } },
  })
  accountInfoConfig: Record<string, unknown>;
}

@ApiSchema({ name: 'AccountCheck' })
export class AccountCheckSchema {
  @ApiProperty({ example: true }) exists: boolean;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'What the gateway tells about the account, when anything',
    example: { name: 'I. P.' },
  })
  accountInfo: Record<string, unknown> | null;
}
