import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The token registry: one row per recurrent token and shop, keyed by the token's
 * blind index (the invoices' `payment_token_hash`, same HMAC and purpose), so a token can be
 * listed and revoked without the token. Backfilled from the invoices that hold a token: the
 * earliest issuing invoice of each token, its masked account and the gateway's expiry.
 */
export class PaymentTokenRegistry1795700000004 implements MigrationInterface {
  name = 'PaymentTokenRegistry1795700000004';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "payment_tokens" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "shop_id" integer NOT NULL, "token_index" character(64) NOT NULL, "invoice_id" uuid NOT NULL, "account" character varying(64), "expires_at" TIMESTAMP WITH TIME ZONE, "status" character varying(16) NOT NULL DEFAULT 'active', "revoked_at" TIMESTAMP WITH TIME ZONE, "revoked_by" character varying(16), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_used_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "uq_payment_tokens_shop_index" UNIQUE ("shop_id", "token_index"), CONSTRAINT "ck_payment_tokens_status" CHECK ("status" IN ('active','revoked')), CONSTRAINT "PK_payment_tokens" PRIMARY KEY ("id"))`,
    );
    await q.query(
      `CREATE INDEX "ix_payment_tokens_created" ON "payment_tokens" ("shop_id", "created_at", "id")`,
    );
    await q.query(
      `INSERT INTO "payment_tokens" ("shop_id", "token_index", "invoice_id", "account", "expires_at", "created_at")
       SELECT DISTINCT ON (i.shop_id, i.payment_token_hash)
              i.shop_id, i.payment_token_hash, i.id,
              left(i.payment_token_info->>'account', 64),
              CASE WHEN (i.payment_token_info->>'expiresAt') ~ '^\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:?\\d{2})?$'
                   THEN (i.payment_token_info->>'expiresAt')::timestamptz END,
              i.updated_at
         FROM "invoices" i
        WHERE i.payment_token_hash IS NOT NULL
        ORDER BY i.shop_id, i.payment_token_hash, i.created_at, i.id`,
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_payment_tokens_created"`);
    await q.query(`DROP TABLE "payment_tokens"`);
  }
}
