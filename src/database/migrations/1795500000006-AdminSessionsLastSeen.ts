import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What operators see of the console's sessions: when each was last used and from
 * which address it signed in. Rows of earlier sessions take their creation time as last seen.
 */
export class AdminSessionsLastSeen1795500000006 implements MigrationInterface {
  name = 'AdminSessionsLastSeen1795500000006';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE "admin_sessions" ADD "last_seen_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()`,
    );
    await q.query(`UPDATE "admin_sessions" SET "last_seen_at" = "created_at"`);
    await q.query(`ALTER TABLE "admin_sessions" ADD "client_address" character varying(64)`);
    await q.query(`CREATE INDEX "ix_admin_sessions_key" ON "admin_sessions" ("key_id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_admin_sessions_key"`);
    await q.query(`ALTER TABLE "admin_sessions" DROP COLUMN "client_address"`);
    await q.query(`ALTER TABLE "admin_sessions" DROP COLUMN "last_seen_at"`);
  }
}
