import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { PaywayDirection } from '../payway-config.entity';

/** OpenAPI schema of GET /payways: the gateway's groups as received, so they stay open objects. */
@ApiSchema({ name: 'PaywayList' })
export class PaywayListSchema {
  @ApiProperty({ enum: ['payment', 'payout'], example: 'payment' }) direction: PaywayDirection;
  @ApiProperty({ format: 'date-time', example: '2026-01-15T09:50:00.000Z' }) fetchedAt: string;
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: 'The gateway groups and their payways, fields as the gateway names them',
    example: [
      {
        id: 1,
        name: 'Bank cards',
        rating: 1,
        payways: [
          {
            id: 5,
            alias: 'card_core_payin_rub[mock_server,success_with_callback]',
            currency: 643,
            min_amount: '10.0',
            max_amount: '100000.0',
            is_active: true,
            fee_config: { percent: '5.0', fix: '0.0' },
            fee_part_config: { percent_part: '1.0', fix_part: '0.0' },
            add_ons_config: null,
          },
        ],
      },
    ],
  })
  groups: Array<Record<string, unknown>>;
}
