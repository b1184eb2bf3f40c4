import { Column } from 'typeorm';

/**
 * The columns every money object (invoice, refund, payout) has for the atomic phases of its
 * gateway calls and for attention: one definition, inherited by each entity.
 */
export abstract class GatewayObjectColumns {
  /** Instance that committed a claim and is calling the gateway now (null: no call in flight). */
  @Column({ name: 'call_owner', type: 'varchar', length: 64, nullable: true }) callOwner:
    string | null;
  @Column({ name: 'call_started_at', type: 'timestamptz', nullable: true })
  callStartedAt: Date | null;
  /** Past this, the call's owner is presumed dead: settle by a status call, never re-send. */
  @Column({ name: 'call_lease_until', type: 'timestamptz', nullable: true })
  callLeaseUntil: Date | null;
  /** Raised on a contradiction or a mismatch; only an operator's recheck or accept clears it. */
  @Column({ name: 'needs_attention', type: 'boolean', default: false }) needsAttention: boolean;
  @Column({ name: 'attention_reason', type: 'text', nullable: true }) attentionReason:
    string | null;
  @Column({ name: 'attention_at', type: 'timestamptz', nullable: true }) attentionAt: Date | null;
  /** Status checks in a row that did not find the object, and when the first of them was. */
  @Column({ name: 'absent_count', type: 'int', default: 0 }) absentCount: number;
  @Column({ name: 'first_absent_at', type: 'timestamptz', nullable: true })
  firstAbsentAt: Date | null;
}
