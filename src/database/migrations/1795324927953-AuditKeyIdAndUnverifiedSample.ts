import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An index to trim the sample of unverified notifications oldest first. (The acting key's id on
 * audit entries, events.key_id, comes with the shop events' migration.)
 */
export class AuditKeyIdAndUnverifiedSample1795324927953 implements MigrationInterface {
  name = 'AuditKeyIdAndUnverifiedSample1795324927953';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "ix_notifications_unverified" ON "notifications" ("received_at") WHERE verified = false`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_notifications_unverified"`);
  }
}
