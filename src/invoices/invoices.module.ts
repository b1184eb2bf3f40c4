import { Module } from '@nestjs/common';
import { HoldPolicyJob } from './hold-policy';
import { InvoicesController } from './invoices.controller';
import { InvoicesService } from './invoices.service';
import { PayController } from './pay.controller';

/**
 * Invoices. Each rule every path obeys (create, charge, unhold, the payer page, notifications,
 * the reconciler, recheck, the hold policy) lives in one place:
 * - what a gateway record means for an invoice: `judgeInvoice` (invoice.rules.ts), and whether it
 *   is this invoice's: `invoiceMismatch`; a hold released or lapsed: `releasedHold`, `lapsedHold`;
 * - whether a `payment_id` is an id: `invoiceIdOf` (invoice-evidence.ts);
 * - which statuses are final: `FINAL_INVOICE_STATUSES` (from src/domain/statuses.ts);
 * - whether a refund may still explain a refunded-sum difference: `isOpenRefund` /
 *   `openRefundSql` (src/domain/statuses.ts; invoices/ never imports refunds/);
 * - when to check an open invoice again: `nextInvoiceCheck` (the backoff of src/common/backoff.ts,
 *   the watch of src/common/watch.ts).
 * The operations are one file each under operations/, each taking the one InvoiceDeps that
 * InvoicesService builds (operations/invoice-deps.ts).
 */
@Module({
  controllers: [InvoicesController, PayController],
  providers: [InvoicesService, HoldPolicyJob],
  exports: [InvoicesService, HoldPolicyJob],
})
export class InvoicesModule {}
