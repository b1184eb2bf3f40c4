import { Column, Entity, PrimaryColumn } from 'typeorm';

export type PaywayDirection = 'payment' | 'payout';

/** The last payway configuration fetched from the gateway, one row per direction. */
@Entity('payway_configs')
export class PaywayConfigEntity {
  @PrimaryColumn({ type: 'varchar', length: 8 }) direction: PaywayDirection;
  @Column({ type: 'jsonb' }) data: unknown;
  @Column({ name: 'fetched_at', type: 'timestamptz' }) fetchedAt: Date;
}
