import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';

/** What the registry stores; `expired` is derived from `expiresAt` when read. */
export type StoredTokenStatus = 'active' | 'revoked';

/**
 * The registry of recurrent tokens issued to this service's invoices: one row per
 * token and shop, found by the token's blind index, never holding the token itself (that stays
 * sealed on the issuing invoice). A revoked row refuses every later invoice naming the token.
 */
@Entity('payment_tokens')
@Unique('uq_payment_tokens_shop_index', ['shopId', 'tokenIndex'])
@Check('ck_payment_tokens_status', `"status" IN ('active','revoked')`)
@Index('ix_payment_tokens_created', ['shopId', 'createdAt', 'id'])
export class PaymentTokenEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'PK_payment_tokens' }) id: string;
  @Column({ name: 'shop_id', type: 'int' }) shopId: number;
  /** Blind index (HMAC under the key ring, PAYMENT_TOKEN_INDEX) of the raw token. */
  @Column({ name: 'token_index', type: 'char', length: 64 }) tokenIndex: string;
  /** The invoice that was first issued the token (its row id). */
  @Column({ name: 'invoice_id', type: 'uuid' }) invoiceId: string;
  /** The masked card or account the gateway reported (`555555******4444`). */
  @Column({ type: 'varchar', length: 64, nullable: true }) account: string | null;
  /** The gateway's expiry of the token. */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true }) expiresAt: Date | null;
  @Column({ type: 'varchar', length: 16, default: 'active' }) status: StoredTokenStatus;
  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true }) revokedAt: Date | null;
  /** keyId of the key that revoked it. */
  @Column({ name: 'revoked_by', type: 'varchar', length: 16, nullable: true }) revokedBy:
    string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_now()' }) createdAt: Date;
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true }) lastUsedAt: Date | null;
}
