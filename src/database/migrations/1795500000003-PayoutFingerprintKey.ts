import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which ring key made a payout's request fingerprint: `keys:rotate`
 * recomputes every fingerprint not made under the first key, and a re-run finds nothing to do.
 * NULL: written before this column, in the older canonical form (the amount as the shop spelled
 * it), under some ring key or the key derived from the gateway secret.
 */
export class PayoutFingerprintKey1795500000003 implements MigrationInterface {
  name = 'PayoutFingerprintKey1795500000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "payouts" ADD "request_fingerprint_key" character varying(64)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "payouts" DROP COLUMN "request_fingerprint_key"`);
  }
}
