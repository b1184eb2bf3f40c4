import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each approval keeps what its approver was shown: the gateway's `check_account` on the payee
 * and the fee `withdraw/try` quoted, each with the time it was asked (src/payouts/payee-check.ts).
 */
export class PayoutApprovalSight1796600000300 implements MigrationInterface {
  name = 'PayoutApprovalSight1796600000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "payout_approvals" ADD "payee_check" jsonb`);
    await q.query(`ALTER TABLE "payout_approvals" ADD "fee_quote" jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "payout_approvals" DROP COLUMN "fee_quote"`);
    await q.query(`ALTER TABLE "payout_approvals" DROP COLUMN "payee_check"`);
  }
}
