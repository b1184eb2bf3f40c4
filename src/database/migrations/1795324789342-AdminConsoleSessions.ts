import { MigrationInterface, QueryRunner } from 'typeorm';

/** Server-side sessions of the operators' console: only a hash of the cookie's id is stored. */
export class AdminConsoleSessions1795324789342 implements MigrationInterface {
  name = 'AdminConsoleSessions1795324789342';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "admin_sessions" ("id_hash" character(64) NOT NULL, "key_id" character varying(12) NOT NULL, "csrf_token" character varying(64) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_admin_sessions" PRIMARY KEY ("id_hash"))`,
    );
    await q.query(`CREATE INDEX "ix_admin_sessions_expires" ON "admin_sessions" ("expires_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "admin_sessions"`);
  }
}
