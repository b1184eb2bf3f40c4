import { Column, Entity, PrimaryColumn } from 'typeorm';

export type PaywayDirection = 'payment' | 'payout';

/**
 * The last payway configuration fetched from the gateway, one row per shop and direction: the
 * payment shop's input ways and the agent shop's output ways are different lists.
 */
@Entity('payway_configs')
export class PaywayConfigEntity {
  @PrimaryColumn({ name: 'shop_id', type: 'int' }) shopId: number;
  @PrimaryColumn({ type: 'varchar', length: 8 }) direction: PaywayDirection;
  @Column({ type: 'jsonb' }) data: unknown;
  @Column({ name: 'fetched_at', type: 'timestamptz' }) fetchedAt: Date;
}
