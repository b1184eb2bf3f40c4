import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The notification inbox key now takes the notification's kind (`type`) as well: rows of
 * key version 2 are re-keyed at start-up (src/notifications/notification-rekey.ts, one SQL
 * statement per batch over the stored key and type). The partial index that finds rows of an
 * older recipe covers version 2 too, so the start-up step finds what is left without a scan of
 * the inbox (and nothing, cheaply, once it is done).
 */
export class NotificationKindInKey1796400000010 implements MigrationInterface {
  name = 'NotificationKindInKey1796400000010';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_notifications_old_key"`);
    await q.query(
      `CREATE INDEX "ix_notifications_old_key" ON "notifications" ("id") WHERE key_version < 3`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_notifications_old_key"`);
    await q.query(
      `CREATE INDEX "ix_notifications_old_key" ON "notifications" ("id") WHERE key_version < 2`,
    );
  }
}
