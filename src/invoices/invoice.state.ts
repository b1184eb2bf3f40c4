/** Invoice statuses of the shop-facing API (shared/API.md). Transitions: added with the invoices module. */
export type InvoiceStatus =
  | 'pending'
  | 'created'
  | 'awaiting_payer'
  | 'ps_create_failed'
  | 'succeeded'
  | 'ps_notice_failed'
  | 'rejected'
  | 'held'
  | 'unheld'
  | 'unknown';
