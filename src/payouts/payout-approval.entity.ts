import { Check, Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { PayoutEntity } from './payout.entity';

export type ApprovalDecision = 'approve' | 'reject';

/**
 * One admin key's decision on a payout awaiting approval. The primary key is
 * (payout, key): the same key never counts twice towards a dual approval.
 */
@Entity('payout_approvals')
@Check('ck_payout_approvals_decision', `"decision" IN ('approve','reject')`)
export class PayoutApprovalEntity {
  @PrimaryColumn({ name: 'payout_id', type: 'uuid', primaryKeyConstraintName: 'PK_payout_approvals' })
  payoutId: string;
  @ManyToOne(() => PayoutEntity, { nullable: false })
  @JoinColumn({ name: 'payout_id', foreignKeyConstraintName: 'fk_payout_approvals_payout' })
  payout?: PayoutEntity;
  @PrimaryColumn({
    name: 'key_id',
    type: 'varchar',
    length: 64,
    primaryKeyConstraintName: 'PK_payout_approvals',
  })
  keyId: string;
  @Column({ type: 'varchar', length: 16 }) decision: ApprovalDecision;
  @Column({ type: 'varchar', length: 500, nullable: true }) note: string | null;
  /** The gateway's check_account on the payee, as this approver was shown it (payee-check.ts). */
  @Column({ name: 'payee_check', type: 'jsonb', nullable: true }) payeeCheck: unknown;
  /** The fee withdraw/try quoted, as this approver was shown it. */
  @Column({ name: 'fee_quote', type: 'jsonb', nullable: true }) feeQuote: unknown;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_now()' }) createdAt: Date;
}
