import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { sameShape } from '../../common/openapi';
import type { BalanceLine, BalanceView } from '../balance.service';

/** OpenAPI schema of the balance answer; `sameShape` keeps it equal to BalanceView. */

@ApiSchema({ name: 'BalanceLine' })
export class BalanceLineSchema {
  @ApiProperty({ example: 643 }) currency: number;
  @ApiProperty({ description: 'Decimal string', example: '15000.00' }) available: string;
  @ApiProperty({ description: 'Decimal string', example: '500.00' }) hold: string;
  @ApiProperty({ description: 'Decimal string', example: '0.00' }) frozen: string;
  @ApiProperty({ description: 'available + hold + frozen, exact', example: '15500.00' })
  total: string;
}
sameShape<BalanceLine, BalanceLineSchema>(true);

@ApiSchema({ name: 'Balance' })
export class BalanceSchema {
  @ApiProperty({ example: 1001 }) shopId: number;
  @ApiProperty({ type: [BalanceLineSchema] }) balances: BalanceLineSchema[];
}
sameShape<BalanceView, BalanceSchema>(true);
