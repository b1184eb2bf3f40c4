import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryColumn,
  PrimaryGeneratedColumn,
  Unique,
  UpdateDateColumn,
} from 'typeorm';
import { Amount, amountTransformer } from '../common/money';
import type { PaymentLinkStatus } from './payment-link.state';

/**
 * A payment link: what a payer pays for (amount, currency, description) and the payways offered.
 * Its public id is `plink_` + the row's uuid without dashes (payment-link.rules.ts).
 */
@Entity('payment_links')
@Check('ck_payment_links_amount', `"amount" > 0`)
@Check('ck_payment_links_status', `"status" IN ('active','paid','expired','deactivated')`)
@Index('ix_payment_links_created', ['shopId', 'createdAt', 'id'])
/** A create repeated with its `Idempotency-Key` finds the link it made. */
@Index('uq_payment_links_idempotency', ['shopId', 'idempotencyKey'], {
  unique: true,
  where: 'idempotency_key IS NOT NULL',
})
@Index('ix_payment_links_expiry', ['expiresAt'], {
  where: `status = 'active' AND expires_at IS NOT NULL`,
})
export class PaymentLinkEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'PK_payment_links' }) id: string;
  @Column({ name: 'shop_id', type: 'int' }) shopId: number;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: PaymentLinkStatus;
  @Column({ type: 'numeric', transformer: amountTransformer }) amount: Amount;
  @Column({ type: 'int' }) currency: number;
  @Column({ type: 'varchar', length: 255 }) description: string;
  /** The payway aliases offered, in the order the payer sees them. */
  @Column({ type: 'jsonb' }) payways: string[];
  @Column({ type: 'boolean', default: false }) reusable: boolean;
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true }) expiresAt: Date | null;
  @Column({ type: 'jsonb', default: () => "'{}'" }) metadata: Record<string, string>;
  /** Attempts numbered so far: the next attempt is this + 1. */
  @Column({ type: 'int', default: 0 }) attempts: number;
  /** keyId of the key that created it. */
  @Column({ name: 'created_by', type: 'varchar', length: 16, nullable: true }) createdBy:
    string | null;
  /** The create's `Idempotency-Key`, when it sent one. */
  @Column({ name: 'idempotency_key', type: 'varchar', length: 255, nullable: true })
  idempotencyKey: string | null;
  /** The create's fields as compared with a repeat's (amounts by value). */
  @Column({ name: 'request_facts', type: 'jsonb', nullable: true }) requestFacts: Record<
    string,
    unknown
  > | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_now()' })
  createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', default: () => 'clock_now()' })
  updatedAt: Date;
}

/** One payer's form on a link: its token makes a double submit the same attempt (and invoice). */
@Entity('payment_link_attempts')
@Unique('uq_payment_link_attempts_n', ['linkId', 'n'])
export class PaymentLinkAttemptEntity {
  @PrimaryColumn({ name: 'link_id', type: 'uuid', primaryKeyConstraintName: 'PK_payment_link_attempts' })
  linkId: string;
  @PrimaryColumn({ type: 'varchar', length: 64, primaryKeyConstraintName: 'PK_payment_link_attempts' })
  token: string;
  @Column({ type: 'int' }) n: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_now()' })
  createdAt: Date;
}
