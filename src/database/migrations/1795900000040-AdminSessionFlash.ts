import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The console's status messages: an action writes what it did on its session's row, and the next
 * page shows it once. Messages never come from the link, so a crafted link cannot show one.
 */
export class AdminSessionFlash1795900000040 implements MigrationInterface {
  name = 'AdminSessionFlash1795900000040';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "admin_sessions" ADD "flash" jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "admin_sessions" DROP COLUMN "flash"`);
  }
}
