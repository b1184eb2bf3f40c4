import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * With tracing on, an event keeps the `traceparent` of the request whose write recorded it, so
 * its webhook deliveries continue the request's trace (src/events/webhook-dispatcher.ts).
 */
export class EventTraceParent1795900000090 implements MigrationInterface {
  name = 'EventTraceParent1795900000090';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "events" ADD COLUMN "trace_parent" character varying(55)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "events" DROP COLUMN "trace_parent"`);
  }
}
