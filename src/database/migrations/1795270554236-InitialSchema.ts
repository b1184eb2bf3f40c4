import { MigrationInterface, QueryRunner } from 'typeorm';

/** Every table of the service: invoices, refunds, payouts, notifications inbox, audit events, payway cache. */

export class InitialSchema1795270554236 implements MigrationInterface {
  name = 'InitialSchema1795270554236';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "events" ("id" BIGSERIAL NOT NULL, "entity_type" character varying(16) NOT NULL, "entity_id" character varying(255) NOT NULL, "from_status" character varying(32), "to_status" character varying(32) NOT NULL, "cause" character varying(32) NOT NULL, "details" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_40731c7151fe4be3116e45ddf73" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_events_entity" ON "events"  ("entity_type", "entity_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "invoices" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "shop_id" integer NOT NULL, "shop_order_id" character varying(255) NOT NULL, "request_fingerprint" character(64) NOT NULL, "status" character varying(32) NOT NULL, "gateway_status" integer, "invoice_id" bigint, "payment_id" bigint, "amount" numeric NOT NULL, "currency" integer NOT NULL, "payway" character varying(150) NOT NULL, "description" character varying(255), "two_step" boolean NOT NULL DEFAULT false, "payer_price" numeric, "shop_amount" numeric, "client_price" numeric, "refunded_amount" numeric NOT NULL DEFAULT '0', "ps_currency" integer, "redirect" jsonb, "pay_token" character varying(64) NOT NULL, "save_payment_token" boolean NOT NULL DEFAULT false, "payment_token" text, "payment_token_info" jsonb, "used_payment_token" boolean NOT NULL DEFAULT false, "extras" jsonb, "client_ip" character varying(64), "success_url" text, "failed_url" text, "error_code" integer, "gateway_message" text, "response_code" integer, "response_body" jsonb, "next_check_at" TIMESTAMP WITH TIME ZONE, "check_attempts" integer NOT NULL DEFAULT '0', "check_deadline" TIMESTAMP WITH TIME ZONE, "lease_until" TIMESTAMP WITH TIME ZONE, "needs_attention" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "processed_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "uq_invoices_shop_order" UNIQUE ("shop_id", "shop_order_id"), CONSTRAINT "PK_668cef7c22a427fd822cc1be3ce" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_invoices_next_check" ON "invoices"  ("next_check_at") WHERE next_check_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "notifications" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "type" character varying(32) NOT NULL, "content_key" character(64) NOT NULL, "payload" jsonb NOT NULL, "content_type" character varying(100) NOT NULL, "source_ip" character varying(64), "verified" boolean NOT NULL, "status" character varying(16) NOT NULL, "outcome" text, "shop_order_id" character varying(255), "shop_refund_id" character varying(255), "delivery_count" integer NOT NULL DEFAULT '1', "received_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_received_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "applied_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_6a72c3c0f683f6462415e653c3a" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_notifications_content_key" ON "notifications"  ("content_key") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_notifications_order" ON "notifications"  ("shop_order_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "payouts" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "shop_id" integer NOT NULL, "shop_payment_id" character varying(255) NOT NULL, "request_fingerprint" character(64) NOT NULL, "status" character varying(32) NOT NULL, "gateway_status" integer, "withdraw_id" bigint, "amount" numeric NOT NULL, "amount_type" character varying(16) NOT NULL, "shop_currency" integer NOT NULL, "ps_currency" integer, "payee_receive" numeric, "shop_write_off" numeric, "payway" character varying(150) NOT NULL, "account_masked" character varying(64) NOT NULL, "account_sealed" text NOT NULL, "description" character varying(255), "error_code" integer, "gateway_message" text, "create_attempts" integer NOT NULL DEFAULT '0', "next_poll_at" TIMESTAMP WITH TIME ZONE, "poll_deadline" TIMESTAMP WITH TIME ZONE NOT NULL, "poll_count" integer NOT NULL DEFAULT '0', "lease_until" TIMESTAMP WITH TIME ZONE, "lease_owner" character varying(64), "response_code" integer, "response_body" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "finished_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "uq_payouts_shop_payment" UNIQUE ("shop_id", "shop_payment_id"), CONSTRAINT "PK_76855dc4f0a6c18c72eea302e87" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_payouts_next_poll" ON "payouts"  ("next_poll_at") WHERE next_poll_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "payway_configs" ("direction" character varying(8) NOT NULL, "data" jsonb NOT NULL, "fetched_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_ba98e921789201b3453d763d62d" PRIMARY KEY ("direction"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "refunds" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "shop_id" integer NOT NULL, "shop_refund_id" character varying(255) NOT NULL, "invoice_pk" uuid NOT NULL, "shop_order_id" character varying(255) NOT NULL, "gateway_invoice_id" bigint, "request_fingerprint" character(64) NOT NULL, "amount" numeric NOT NULL, "currency" integer NOT NULL, "status" character varying(16) NOT NULL, "submit_state" character varying(16) NOT NULL, "error_code" integer, "gateway_message" text, "settlement_amount" numeric, "settlement_currency" character varying(8), "response_code" integer, "response_body" jsonb, "next_check_at" TIMESTAMP WITH TIME ZONE, "check_attempts" integer NOT NULL DEFAULT '0', "check_deadline" TIMESTAMP WITH TIME ZONE, "lease_until" TIMESTAMP WITH TIME ZONE, "needs_attention" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "processed_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "uq_refunds_shop_refund" UNIQUE ("shop_id", "shop_refund_id"), CONSTRAINT "PK_5106efb01eeda7e49a78b869738" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_refunds_next_check" ON "refunds"  ("next_check_at") WHERE next_check_at IS NOT NULL`,
    );
    await queryRunner.query(`CREATE INDEX "ix_refunds_invoice" ON "refunds"  ("invoice_pk") `);

    // Money guards the database enforces whatever the code does.
    await queryRunner.query(
      `ALTER TABLE "refunds" ADD CONSTRAINT "fk_refunds_invoice" FOREIGN KEY ("invoice_pk") REFERENCES "invoices"("id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "invoices" ADD CONSTRAINT "ck_invoices_amount" CHECK ("amount" > 0)`,
    );
    await queryRunner.query(
      `ALTER TABLE "invoices" ADD CONSTRAINT "ck_invoices_refunded" CHECK ("refunded_amount" >= 0 AND "refunded_amount" <= "amount")`,
    );
    await queryRunner.query(
      `ALTER TABLE "invoices" ADD CONSTRAINT "ck_invoices_status" CHECK ("status" IN ('pending','created','awaiting_payer','ps_create_failed','succeeded','ps_notice_failed','rejected','held','unheld','unknown'))`,
    );
    await queryRunner.query(
      `ALTER TABLE "refunds" ADD CONSTRAINT "ck_refunds_amount" CHECK ("amount" > 0)`,
    );
    await queryRunner.query(
      `ALTER TABLE "refunds" ADD CONSTRAINT "ck_refunds_status" CHECK ("status" IN ('WAITING','SUCCESS','FAILED'))`,
    );
    await queryRunner.query(
      `ALTER TABLE "refunds" ADD CONSTRAINT "ck_refunds_submit_state" CHECK ("submit_state" IN ('pending','accepted','unknown','rejected'))`,
    );
    await queryRunner.query(
      `ALTER TABLE "payouts" ADD CONSTRAINT "ck_payouts_amount" CHECK ("amount" > 0)`,
    );
    await queryRunner.query(
      `ALTER TABLE "payouts" ADD CONSTRAINT "ck_payouts_status" CHECK ("status" IN ('pending','processing','succeeded','failed','rejected','unknown','needs_attention'))`,
    );
    await queryRunner.query(
      `ALTER TABLE "payouts" ADD CONSTRAINT "ck_payouts_amount_type" CHECK ("amount_type" IN ('ps_amount','shop_amount'))`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "refunds" DROP CONSTRAINT "fk_refunds_invoice"`);
    await queryRunner.query(`DROP INDEX "public"."ix_refunds_invoice"`);
    await queryRunner.query(`DROP INDEX "public"."ix_refunds_next_check"`);
    await queryRunner.query(`DROP TABLE "refunds"`);
    await queryRunner.query(`DROP TABLE "payway_configs"`);
    await queryRunner.query(`DROP INDEX "public"."ix_payouts_next_poll"`);
    await queryRunner.query(`DROP TABLE "payouts"`);
    await queryRunner.query(`DROP INDEX "public"."ix_notifications_order"`);
    await queryRunner.query(`DROP INDEX "public"."uq_notifications_content_key"`);
    await queryRunner.query(`DROP TABLE "notifications"`);
    await queryRunner.query(`DROP INDEX "public"."ix_invoices_next_check"`);
    await queryRunner.query(`DROP TABLE "invoices"`);
    await queryRunner.query(`DROP INDEX "public"."ix_events_entity"`);
    await queryRunner.query(`DROP TABLE "events"`);
  }
}
