import { Module } from '@nestjs/common';
import { InvoiceReconciler } from './invoice-reconciler';

/** The scheduled invoice reconciliation (invoice/check for late or lost notifications). */
@Module({ providers: [InvoiceReconciler], exports: [InvoiceReconciler] })
export class InvoiceReconciliationModule {}
