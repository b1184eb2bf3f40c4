import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The feed's retention horizon (one row): events at or below `position` are no longer served
 * by the feed (a cursor before it is 410 Gone) and their `data` payload is cleared; their audit
 * entries stay. Only the event-retention job moves it, forward, under this row's lock.
 */
@Entity('feed_horizon')
@Check('ck_feed_horizon_one_row', `"id" = 1`)
export class FeedHorizonEntity {
  @PrimaryColumn({ type: 'smallint', default: 1 }) id: number;
  @Column({ type: 'bigint', default: 0 }) position: string;
  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'clock_now()' }) updatedAt: Date;
}
