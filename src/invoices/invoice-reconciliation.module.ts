import { Module } from '@nestjs/common';
import { HoldExpiryJob } from './hold-expiry';
import { InvoiceReconciler } from './invoice-reconciler';

/**
 * The scheduled invoice jobs: reconciliation (invoice/check for late or lost notifications) and
 * the hold-expiry warnings.
 */
@Module({
  providers: [InvoiceReconciler, HoldExpiryJob],
  exports: [InvoiceReconciler, HoldExpiryJob],
})
export class InvoiceReconciliationModule {}
