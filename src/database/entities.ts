import { AuditEventEntity } from '../audit/audit-event.entity';
import { FeedHorizonEntity } from '../events/feed-horizon.entity';
import { InvoiceEntity } from '../invoices/invoice.entity';
import { NotificationEntity } from '../notifications/notification.entity';
import { PayoutApprovalEntity } from '../payouts/payout-approval.entity';
import { PayoutEntity } from '../payouts/payout.entity';
import { PayoutBatchEntity, PayoutBatchRowEntity } from '../payouts/payout-batch.entity';
import { PaymentTokenEntity } from '../payment-tokens/payment-token.entity';
import { PaywayConfigEntity } from '../payway-config/payway-config.entity';
import { RefundEntity } from '../refunds/refund.entity';
import { SavedSearchEntity } from '../console/saved-search.entity';
import { DisputeEntity } from '../disputes/dispute.entity';
import { PaymentLinkAttemptEntity, PaymentLinkEntity } from '../payment-links/payment-link.entity';

export const ENTITIES = [
  InvoiceEntity,
  RefundEntity,
  PayoutEntity,
  NotificationEntity,
  AuditEventEntity,
  PaywayConfigEntity,
  FeedHorizonEntity,
  PayoutApprovalEntity,
  PayoutBatchEntity,
  PayoutBatchRowEntity,
  PaymentTokenEntity,
  SavedSearchEntity,
  DisputeEntity,
  PaymentLinkEntity,
  PaymentLinkAttemptEntity,
];
