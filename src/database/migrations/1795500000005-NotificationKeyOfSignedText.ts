import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The notification inbox key now covers exactly what the signature covers: a row's
 * `key_version` says which recipe its `content_key` follows. Existing rows are version 1; the
 * start-up step (src/notifications/notification-rekey.ts) recomputes their keys from the stored
 * fields, which needs the data-encryption keys to open `ps_data` — configuration a migration does
 * not have. New rows are written as version 2 by the service itself (the default stays 1, so a
 * row written by an instance still running the old code is re-keyed at the next start).
 */
export class NotificationKeyOfSignedText1795500000005 implements MigrationInterface {
  name = 'NotificationKeyOfSignedText1795500000005';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "notifications" ADD "key_version" smallint NOT NULL DEFAULT 1`);
    await q.query(
      `CREATE INDEX "ix_notifications_old_key" ON "notifications" ("id") WHERE key_version < 2`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_notifications_old_key"`);
    await q.query(`ALTER TABLE "notifications" DROP COLUMN "key_version"`);
  }
}
