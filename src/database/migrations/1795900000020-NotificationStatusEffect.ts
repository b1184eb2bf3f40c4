import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a stored notification did to its object's status, beside what it changed at all:
 * `applied` (the status moved), `unchanged` (a repeat, or a step the object has passed),
 * `not_applied` (the gateway contradicts the object, the record is not ours, or the word is
 * unknown). Retention keeps every `not_applied` one. Older rows are filled in from their
 * outcome text where it says so; the rest stay null (unknown) and are judged by their
 * object's flag alone.
 */
export class NotificationStatusEffect1795900000020 implements MigrationInterface {
  name = 'NotificationStatusEffect1795900000020';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "notifications" ADD "status_effect" character varying(16)`);
    await q.query(
      `UPDATE "notifications" SET "status_effect" = 'not_applied'
        WHERE verified AND (status = 'rejected' OR outcome LIKE '%not applied%')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "notifications" DROP COLUMN "status_effect"`);
  }
}
