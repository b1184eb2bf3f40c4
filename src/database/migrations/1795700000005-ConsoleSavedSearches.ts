import { MigrationInterface, QueryRunner } from 'typeorm';

/** Saved searches of the console's lists, one set per admin key. */
export class ConsoleSavedSearches1795700000005 implements MigrationInterface {
  name = 'ConsoleSavedSearches1795700000005';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "console_saved_searches" ("id" BIGSERIAL NOT NULL, "list" character varying(32) NOT NULL, "name" character varying(100) NOT NULL, "query" jsonb NOT NULL, "key_id" character varying(64) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "uq_console_saved_searches_key_list_name" UNIQUE ("key_id", "list", "name"), CONSTRAINT "PK_console_saved_searches" PRIMARY KEY ("id"))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "console_saved_searches"`);
  }
}
