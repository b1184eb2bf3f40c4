import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two gateway shops (payment shop, agent shop): every stored object says which shop it belongs to.
 * Invoices, refunds and payouts already carry `shop_id`; this makes the rest follow suit.
 *
 * - payway_configs is keyed by (shop_id, direction). Its rows are a cache fetched by whichever
 *   shop was configured then, which need not be the shop that owns that direction now, so they
 *   are dropped and refetched under the right shop on first use.
 * - notifications record the shop_id they name (backfilled from the stored payload).
 * - A refund belongs to its invoice's shop: normalised, then enforced by a composite foreign key.
 */
export class GatewayShopPerRow1795324912080 implements MigrationInterface {
  name = 'GatewayShopPerRow1795324912080';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM "payway_configs"`);
    await queryRunner.query(`ALTER TABLE "payway_configs" ADD "shop_id" integer NOT NULL`);
    await queryRunner.query(
      `ALTER TABLE "payway_configs" DROP CONSTRAINT "PK_ba98e921789201b3453d763d62d"`,
    );
    await queryRunner.query(
      `ALTER TABLE "payway_configs" ADD CONSTRAINT "pk_payway_configs" PRIMARY KEY ("shop_id", "direction")`,
    );

    await queryRunner.query(`ALTER TABLE "notifications" ADD "shop_id" integer`);
    // Stored payloads are text as transmitted; only a plain id that fits an integer is taken.
    await queryRunner.query(
      `UPDATE "notifications" SET "shop_id" = ("payload"->>'shop_id')::integer
        WHERE "payload"->>'shop_id' ~ '^[0-9]{1,9}$'`,
    );

    await queryRunner.query(
      `UPDATE "refunds" r SET "shop_id" = i."shop_id"
         FROM "invoices" i WHERE i."id" = r."invoice_pk" AND r."shop_id" <> i."shop_id"`,
    );
    await queryRunner.query(
      `ALTER TABLE "invoices" ADD CONSTRAINT "uq_invoices_id_shop" UNIQUE ("id", "shop_id")`,
    );
    // Beside fk_refunds_invoice (the entity's relation): this one also pins the shop.
    await queryRunner.query(
      `ALTER TABLE "refunds" ADD CONSTRAINT "fk_refunds_invoice_shop" FOREIGN KEY ("invoice_pk", "shop_id") REFERENCES "invoices"("id", "shop_id")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "refunds" DROP CONSTRAINT "fk_refunds_invoice_shop"`);
    await queryRunner.query(`ALTER TABLE "invoices" DROP CONSTRAINT "uq_invoices_id_shop"`);
    await queryRunner.query(`ALTER TABLE "notifications" DROP COLUMN "shop_id"`);
    await queryRunner.query(`DELETE FROM "payway_configs"`);
    await queryRunner.query(`ALTER TABLE "payway_configs" DROP CONSTRAINT "pk_payway_configs"`);
    await queryRunner.query(`ALTER TABLE "payway_configs" DROP COLUMN "shop_id"`);
    await queryRunner.query(
      `ALTER TABLE "payway_configs" ADD CONSTRAINT "PK_ba98e921789201b3453d763d62d" PRIMARY KEY ("direction")`,
    );
  }
}
